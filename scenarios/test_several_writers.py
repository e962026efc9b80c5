"""Several writers at once, with the table service beside them: what commits, what conflicts, and whether every
committed row survives.

N writers each run batches of updates (``amount + 1`` and a batch tag on a few keys, found by literal keys) on
one payments table, all released together, while the run's own application runs the table service back to back
(compaction and clean for Hudi, rewrites for Iceberg, OPTIMIZE / REORG for Delta). Writers are separate Spark
applications (``processes``) where the format is safe across JVMs here — Iceberg on a JDBC catalog in a
PostgreSQL the run starts, Hudi with ZooKeeper's lock from a ZooKeeper the run starts — and threads of one
application otherwise (Delta 3.3.2; the skip says why). Hudi MERGE_ON_READ also runs with non-blocking concurrency
control (``control=nbcc``, a bucket-indexed table of its own). Overlap: writers on disjoint files, on disjoint keys
in shared files, on the same keys. After the race the invariants are checked on every engine: each acknowledged
batch applied exactly once, the last committed writer's tag on each row, no deleted key back, no key twice, the
row count, the history without gaps and with one writer commit per acknowledged batch, the answer unchanged by a
last table service. A violation is recorded with its evidence, then fails the test.

Run with:  pytest scenarios/test_several_writers.py --scale tiny --formats iceberg-mor,hudi-mor,delta-dv
Grid:      writers (1, 2, 4, 8 up to writers_max; 2 at tiny) x overlap (shared files only at tiny) x kind x control
           x every selected configuration; writer_races races per point (1 at tiny), each on a fresh table.
"""

from __future__ import annotations

import pytest

from bench.exceptions import MissingArtifact, NotSupported
from bench.formats.base import CONTROLS
from bench.workload.contention import OVERLAPS, SHARED_FILES, plan

pytestmark = pytest.mark.spark
KINDS = ("processes", "threads")
TABLE = "payments_writers"


def writer_counts(most: int) -> list[int]:
    counts = [n for n in (1, 2, 4, 8, 16, 32, 64) if n <= most]
    return [most] if most <= 2 else counts


GRID = {
    "writers": lambda scale: [(n, f"{n}w") for n in writer_counts(scale.writers_max)],
    "overlap": lambda scale: [(o, o) for o in ((SHARED_FILES,) if scale.name == "tiny" else OVERLAPS)],
    "kind": lambda scale: [(k, k) for k in KINDS],
    "control": lambda scale: [(c, c) for c in CONTROLS],
}


def test_several_writers(benchmark, lab, payments, writers, overlap, kind, control, progress):
    scale = lab.session.scale
    try:
        shared = lab.several_writers(kind, control)
    except (NotSupported, MissingArtifact) as why:
        pytest.skip(str(why))
    if kind == "threads" and control == "nbcc":
        pytest.skip("NBCC races separate applications (its point is writers that never wait for one another)")
    if kind == "threads" and shared.fmt.processes_unsupported() is None and not scale.writer_threads_too:
        pytest.skip(f"{lab.fmt.config_id} races separate applications; threads of one only with --param writer_threads_too=1")
    contention = plan(payments.keys_by_file(), scale.files_per_day, writers, scale.writer_batches,
                      scale.writer_batch_keys, scale.writer_batch_files, overlap)
    state: dict = {}
    raced: list = []  # (result, invariants) per race, each checked before the next one's fresh table

    def check_last_race() -> None:
        if "result" in state:
            result = state.pop("result")
            raced.append((result, shared.check(state["table"], payments, contention, result, state["history"])))

    def setup():
        check_last_race()
        progress(f"{lab.fmt.config_id} ({control}, {kind}): {writers} writers, {overlap}: race "
                 f"{len(raced) + 1}/{scale.writer_races}, fresh table")
        state["table"], state["history"] = shared.table(TABLE, payments, contention)
        return (), {}

    def run_race() -> None:
        state["result"] = shared.race(state["table"], contention, progress)

    benchmark.pedantic(run_race, setup=setup, rounds=scale.writer_races, iterations=1)
    check_last_race()
    summary = shared.summarize_races(raced, writers)
    lab.record(benchmark, "several_writers", "race", writers=writers, overlap=overlap, kind=kind, control=control,
               coordination=shared.record(), keys_touched=len(contention.touched), keys_deleted=len(contention.deleted),
               **summary)
    assert not summary["writer_errors"], f"writers crashed: {summary['writer_errors']}"
    assert not summary["violations"], f"invariants violated: {summary['violations']}"
