"""Scale presets: every size a scenario uses comes from here, so a run is reproducible from its name."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from bench.exceptions import BadOption


@dataclass(frozen=True)
class Scale:
    """Sizes for one preset. Every field can be overridden with ``--param NAME=VALUE``."""

    name: str
    # payments table (payments hotfix): days x files_per_day files of rows_per_file rows each
    days: int
    files_per_day: int
    rows_per_file: int
    hotfix_rows: int
    # measurement: ``rounds`` of each operation at least, more (up to ``max_rounds``) until its median is known to ±10%
    rounds: int
    read_repeats: int
    # the same target file size for every format (bytes)
    target_file_bytes: int = 128 * 1024 * 1024
    # dinner peak: order_events table of orders_days x orders_files_per_day files
    orders_days: int = 7
    orders_files_per_day: int = 4
    orders_rows_per_file: int = 5000
    peak_batches: int = 6
    peak_updates_per_batch: int = 40
    peak_inserts_per_batch: int = 40
    peak_reads_per_batch: int = 2
    # concurrent compaction: batches of the writer alone, then as many again while compaction runs
    concurrent_batches: int = 4
    # several writers: up to writers_max writers (1, 2, 4, ... at most this; `tiny` runs 2 only), each with
    # writer_batches batches of writer_batch_keys keys spread over writer_batch_files files
    writers_max: int = 8
    writer_batches: int = 4
    writer_batch_keys: int = 8
    writer_batch_files: int = 2
    # races per grid point, each on a fresh table (a throughput without its spread is not a result)
    writer_races: int = 3
    # 1: also race threads of one application where separate applications are safe (CI covers both kinds)
    writer_threads_too: int = 0
    # 1: the format's table service (compaction, clean, rewrite, OPTIMIZE) runs beside the writers; 0: they race alone
    writer_service: int = 1
    # The race's set-up. Its defaults are a team's: the table service after every writer_service_every writer commits
    # (Hudi's own compaction trigger is 5 delta commits), Hudi's own heartbeat (writer_heartbeat_ms 0: 60 s, 2 misses
    # tolerated), Iceberg's expiry of snapshots older than writer_keep_snapshots_s. writer_stress=1 is the stress
    # variant, each of its values unless given: the service back to back (every 0), 2-second heartbeats, expiry of
    # every snapshot older than the race (keep 0, retain_last 1), every Hudi writer cleaning (STRESS below)
    writer_stress: int = 0
    writer_service_every: int = 5
    writer_heartbeat_ms: int = 0
    writer_keep_snapshots_s: int = 300
    # 1: every Hudi writer also cleans after its commit (Hudi's default, hoodie.clean.automatic); 0: only the table
    # service cleans, as Hudi's maintainers advise for several jobs (HUDI-8143): writers' concurrent lazy cleans race
    # to roll back the same failed instant, and the loser's statement fails after its own commit landed. Hudi's
    # default stays the default: it is what a team gets without reading HUDI-8143 (docs/several-writers.md)
    writer_inline_clean: int = 1
    # 1: a failed batch is retried without first looking for its commit in the table's history (a naive job); 0: the
    # retry checks first, and a batch whose statement raised after its commit landed is not run again
    writer_blind_retry: int = 0
    # how a writer finds its batch's rows: literal keys (pruned, the default) or a MERGE from a keys view (join): the
    # control behind a finding seen only with column-statistics skipping on
    writer_route: str = "pruned"
    # 1: the writers' UPDATE also names the days its keys sit in (settled_date IN (…) AND txn_id IN (…)), as a job that
    # knows its partitions would: a control for conflict checks that filter other commits' files by the statement's
    # condition (Iceberg's row delta; Delta's conflict checker), where keys alone name no partition
    writer_names_partition: int = 0
    degradation_batches: int = 5
    # the compaction cadence checked: every cadence_k writes and its neighbours (k - 1 where at least 1, k + 1), each
    # over cadence_cycles cycles, the reads priced at cadence_reads_per_write per write (the report's workload);
    # cadence_neighbours 0 runs k alone (`tiny`: the cycle's answers and pricing, not the comparison, which is the
    # report's and unit-tested)
    cadence_k: int = 2
    cadence_neighbours: int = 1
    cadence_cycles: int = 2
    cadence_reads_per_write: int = 1
    settlement_batches: int = 5  # the fewest writes behind a verdict on the decision map
    settlement_rows_per_batch: int = 20
    settlement_reads: int = 30
    # rounds of each update-sweep point, and how many of its six points run (the files-vs-rows pivot first)
    sweep_rounds: int = 5  # the fewest rounds behind a verdict
    sweep_points: int = 6
    # the memory a configuration needs: the driver memories (MB) the search tries lie in [memory_min_mb, memory_max_mb]
    # (Spark refuses a driver heap under 450 MB)
    memory_min_mb: int = 512
    memory_max_mb: int = 8192
    # the routes the search measures ("": every selected route). At `tiny` its one rung is the driver's own memory, so
    # every route needs it by construction: CI checks the search, its attempt and its record on the join route, and
    # the other routes' update paths in the hotfix and file-size scenarios
    memory_routes: str = ""
    # the routes the file-size steps measure ("": every selected route). At `tiny` the join: each route's update path
    # and what it reads to find the rows are checked by the hotfix, which takes every route at `tiny` too
    file_size_routes: str = ""
    # the routes the update sweep measures ("": every selected route). At `tiny` the join, as the file-size steps
    sweep_routes: str = ""
    # the most keys a sweep point sends as literals (the pruned route): a statement naming 18,000 or 180,000 keys (1%
    # and 10% at `small`) is not one a team writes, and planning it took minutes a round; such points take the join
    sweep_literal_keys_max: int = 2000
    # table growth: the hotfix on tables of 1, 2, 4, ... files per day (growth_steps sizes), days x rows_per_file kept
    growth_steps: int = 4
    # file size: the same update (file_size_touched rows, one in each of as many files) on file_size_files files
    # whose rows per file grow 4x per step from file_size_first_rows (Snappy Parquet, measured: 8,400 rows ~0.34 MB,
    # 2.15M rows ~64 MB); its dashboards are read file_size_read_repeats times per state (the first read is cold)
    file_size_steps: int = 5
    file_size_first_rows: int = 8400
    file_size_files: int = 4
    file_size_touched: int = 2
    file_size_read_repeats: int = 2
    max_rounds: int = 6
    # 1: pay each family's JVM warm-up before measuring; 0 at `tiny`, whose timings are not results (CI checks answers)
    warm_up: int = 1
    # 1: every configuration warms up each of its routes (its own write and read paths: the fair default); 0: each
    # family warms each route once (the tiny CI run: every route's warm-up path taken, at a third of Hudi's cost)
    warm_up_each_config: int = 1

    @staticmethod
    def kept_routes(kept: str, selected: list[str]) -> list[str]:
        """The ``selected`` routes a scenario's ``*_routes`` field keeps ("": all); where it keeps none, the first."""
        if not kept:
            return selected
        return [r for r in selected if r in kept.split(",")] or selected[:1]

    @property
    def files(self) -> int:
        return self.days * self.files_per_day

    @property
    def rows(self) -> int:
        return self.files * self.rows_per_file

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self) | {"files": self.files, "rows": self.rows}


PRESETS: dict[str, Scale] = {
    # CI: seconds per configuration
    "tiny": Scale("tiny", days=12, files_per_day=3, rows_per_file=800, hotfix_rows=12, rounds=2, read_repeats=1,
                  orders_days=4, orders_files_per_day=3, orders_rows_per_file=500,
                  peak_batches=2, peak_updates_per_batch=15, peak_inserts_per_batch=15, peak_reads_per_batch=1,
                  degradation_batches=2, cadence_k=2, cadence_neighbours=0, cadence_cycles=1, settlement_batches=2, settlement_rows_per_batch=10, settlement_reads=3,
                  sweep_rounds=1, sweep_points=2, growth_steps=2, max_rounds=2, concurrent_batches=1, warm_up=0,
                  writers_max=2, writer_batches=2, writer_batch_keys=4, writer_threads_too=1, writer_races=1,
                  # 4 commits in a race: the service twice; races of a minute: Hudi's 60-second heartbeat would make the
                  # check after a race with a failed attempt wait 2 minutes for its instant's rollback
                  writer_service_every=2, writer_heartbeat_ms=2000,
                  file_size_steps=2, file_size_first_rows=800, file_size_files=4, file_size_touched=2,
                  memory_min_mb=2048, memory_max_mb=2048, memory_routes="join", file_size_routes="join", sweep_routes="join"),  # the default driver's: no application restarted
    # laptop default: a few minutes for the whole matrix
    "small": Scale("small", days=90, files_per_day=4, rows_per_file=5000, hotfix_rows=120, rounds=5, read_repeats=4),
    "medium": Scale("medium", days=90, files_per_day=16, rows_per_file=5000, hotfix_rows=400, rounds=5, read_repeats=4,
                    orders_days=14, orders_files_per_day=8,
                    peak_batches=10, peak_updates_per_batch=200, peak_inserts_per_batch=200, peak_reads_per_batch=3,
                    degradation_batches=8, settlement_rows_per_batch=100, settlement_reads=60,
                    file_size_steps=6),  # up to ~256 MB files
    # the seeds' own sizes (1,200 rows over ~4,800 files, ~6 GB): for a cluster
    # 32,000 rows of ~40 bytes (Snappy Parquet, measured at `small`'s file-size steps): ~1.25 MB a file, ~6 GB in all.
    # Rounds stop at 5, the fewest behind a verdict (a 95% bootstrap interval; 3 make only a range): a copy-on-write
    # round through the join reads all ~6 GB, minutes on a laptop, and the adaptive 6 cost an hour per configuration
    "seed": Scale("seed", days=90, files_per_day=53, rows_per_file=32000, hotfix_rows=1200, rounds=5, read_repeats=4,
                  max_rounds=5,
                  orders_days=30, orders_files_per_day=32, orders_rows_per_file=20000,
                  peak_batches=16, peak_updates_per_batch=2500, peak_inserts_per_batch=2500, peak_reads_per_batch=1,
                  degradation_batches=10, settlement_batches=5, settlement_rows_per_batch=500, settlement_reads=100,
                  memory_max_mb=16384),
}


MAX_PARAM = 10_000_000_000
SWITCHES = ("warm_up", "warm_up_each_config", "writer_threads_too", "writer_service", "writer_inline_clean",
            "writer_blind_retry", "writer_stress", "writer_names_partition", "cadence_neighbours")  # 0 or 1, not sizes
# sizes for which 0 means something: the service back to back, Hudi's own heartbeat, expiry of all before the race,
# a cadence priced on writes and compactions alone
ZERO_MEANS = ("writer_service_every", "writer_heartbeat_ms", "writer_keep_snapshots_s", "cadence_reads_per_write")
# the several writers' stress variant (writer_stress=1): what it sets unless the run gives the value itself
STRESS = {"writer_service_every": 0, "writer_heartbeat_ms": 2000, "writer_keep_snapshots_s": 0, "writer_inline_clean": 1}
MAX_FILES = 1_000_000
MAX_ROWS = 100_000_000_000


def get_scale(name: str, overrides: dict[str, int | str] | None = None) -> Scale:
    """Return the preset ``name`` with ``overrides`` applied.

    Raises:
        BadOption: unknown preset or parameter, or a non-positive size.
    """
    if name not in PRESETS:
        raise BadOption(f"unknown scale {name!r}; choose one of {', '.join(PRESETS)}")
    scale = PRESETS[name]
    fields = {f.name for f in dataclasses.fields(Scale)} - {"name"}
    for key, value in (overrides or {}).items():
        if key not in fields:
            raise BadOption(f"unknown scale parameter {key!r}; known: {', '.join(sorted(fields))}")
        if key in SWITCHES:
            if value not in (0, 1):
                raise BadOption(f"scale parameter {key} is a switch: 0 or 1, got {value!r}")
            continue
        if key in ZERO_MEANS and value == 0:
            continue
        if isinstance(getattr(scale, key), str):  # a route list (bench.run.options checks its names)
            if not isinstance(value, str):
                raise BadOption(f"scale parameter {key} is a list of routes, got {value!r}")
            continue
        if not isinstance(value, int) or value <= 0:
            raise BadOption(f"scale parameter {key} must be a positive integer, got {value!r}")
        if value > MAX_PARAM:
            raise BadOption(f"scale parameter {key}={value:,} is above the bound of {MAX_PARAM:,}")
    if (overrides or {}).get("writer_stress"):
        overrides = {**STRESS, **(overrides or {})}
    scale = dataclasses.replace(scale, **(overrides or {}))
    if scale.files > MAX_FILES or scale.rows > MAX_ROWS:
        raise BadOption(f"the payments table would hold {scale.files:,} files and {scale.rows:,} rows; the bounds are "
                        f"{MAX_FILES:,} files and {MAX_ROWS:,} rows")
    if scale.sweep_points > 6:
        raise BadOption(f"sweep_points={scale.sweep_points}: the update sweep has 6 points")
    if scale.writer_names_partition and scale.writer_route != "pruned":
        raise BadOption(f"writer_names_partition=1 adds the days to the writers' literal-key UPDATE; writer_route="
                        f"{scale.writer_route} has none")
    if scale.hotfix_rows > scale.rows:
        raise BadOption(f"hotfix_rows={scale.hotfix_rows} exceeds the table's {scale.rows} rows")
    return scale
