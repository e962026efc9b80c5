"""The typed shape of every record: one frozen dataclass per (scenario, operation), and one per part they share.

Written once and used three ways: ``contract.SPECS`` (what ``record()`` accepts when a scenario writes, and what
``validate`` checks) is derived from these classes; the report reads a record through ``Record.view(Kind)``,
attribute by attribute, never by string keys; mypy checks the report against the same annotations. A field declared
with a default is optional when written (runs recorded before it existed lack it); reading a record that lacks a
field gives its default, so older runs still read.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union

# the scenarios' names as records carry them: the report imports these, never spells them
HOTFIX = "payments_hotfix"
FILE_SIZE = "file_size"
DEGRADATION = "degradation"
DINNER_PEAK = "dinner_peak"
SETTLEMENTS = "monthly_settlements"
UPDATE_SWEEP = "update_sweep"
TABLE_GROWTH = "table_growth"
LATE_ARRIVALS = "late_arrivals"
CONCURRENT_COMPACTION = "concurrent_compaction"
SEVERAL_WRITERS = "several_writers"
MEMORY_NEEDED = "memory_needed"
COMPACTION_CADENCE = "compaction_cadence"

T = TypeVar("T")
Number = Union[int, float]


# --- parts several records share ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Changes:
    """Files and bytes an operation added and removed (one kind of file, or all of them)."""

    files_added: int | None = None
    bytes_added: int | None = None
    files_removed: int | None = None
    bytes_removed: int | None = None


@dataclass(frozen=True)
class FileChanges(Changes):
    """What the filesystem saw change under the table, in all and per kind of file (``bench.core.storage``)."""

    checksum_files_added: int | None = None
    data: Changes | None = None
    delete: Changes | None = None
    log: Changes | None = None
    metadata: Changes | None = None
    parts: dict[str, Changes] = field(default_factory=dict)  # writes a format keeps apart (Hudi's metadata table)


@dataclass(frozen=True)
class MetaChanges:
    """What the format's own metadata says the operation committed."""

    operation: str | None = None
    data_files_added: int | None = None
    data_files_removed: int | None = None
    delete_files_added: int | None = None
    delete_files_removed: int | None = None
    bytes_added: int | None = None
    bytes_removed: int | None = None
    rows_changed: int | None = None
    commits: int | None = None
    raw: list[dict[str, Any]] = field(default_factory=list)  # each commit's own summary, as the format wrote it

    @property
    def log_records_written(self) -> int:
        """Rows the commits' log files took (Hudi merge-on-read; 0 where no summary counts them)."""
        return sum(int(c.get(LOG_RECORDS_WRITTEN, 0)) for c in self.raw)


LOG_RECORDS_WRITTEN = "log_records_written"  # in a Hudi commit's summary (``MetaChanges.raw``): rows its log files took


@dataclass(frozen=True)
class Scan:
    """One table scan of the plan that found the rows (``bench.measure.locate``)."""

    node: str | None = None
    files_read: int | None = None
    data_files_planned: int | None = None
    data_files_skipped: int | None = None
    data_bytes_planned: int | None = None
    delete_files_planned: int | None = None
    bytes_of_files_read: int | None = None
    file_splits_read: int | None = None


@dataclass(frozen=True)
class Locate:
    """What an update read to find its rows."""

    statements: int | None = None
    scans: list[Scan] = field(default_factory=list)
    files_read: int | None = None
    largest_scan_files: int | None = None
    bytes_read: int | None = None
    data_files_skipped: int | None = None
    # Delta's own count of what its statistics skipped (its commit's operation metrics)
    target_files_before_skipping: int | None = None
    target_files_after_skipping: int | None = None
    target_bytes_before_skipping: int | None = None
    target_bytes_after_skipping: int | None = None


@dataclass(frozen=True)
class Memory:
    """Peak memory over one operation (``bench.measure.memory``): bytes, None where no source gave the figure."""

    executor_heap_peak_bytes: int | None = None
    execution_memory_peak_bytes: int | None = None
    storage_memory_peak_bytes: int | None = None
    driver_heap_peak_bytes: int | None = None
    jvm_rss_peak_bytes: int | None = None
    python_rss_peak_bytes: int | None = None
    python_rss_scope: str | None = None
    stages: int | None = None
    stages_sampled: int | None = None


MEMORY_FIELDS = ("executor_heap_peak_bytes", "execution_memory_peak_bytes", "storage_memory_peak_bytes",
                 "driver_heap_peak_bytes", "jvm_rss_peak_bytes", "python_rss_peak_bytes")


@dataclass(frozen=True)
class Anatomy:
    """What the written data files hold (``bench.measure.anatomy``)."""

    files: int | None = None
    bytes: int | None = None
    rows: int | None = None
    table_columns: int | None = None
    format_columns: int | None = None
    footer_index: int | None = None
    footer_other: int | None = None
    other: int | None = None


@dataclass(frozen=True)
class LiveFiles:
    """The files a table's current snapshot holds."""

    data_files: int | None = None
    delete_files: int | None = None
    data_bytes: int | None = None


@dataclass(frozen=True)
class Uncertainty:
    """A timing's spread: its median's 95% interval (``bench.core.uncertainty``)."""

    median: float | None = None
    ci95: list[float] | None = None
    cv: float | None = None
    n: int | None = None
    ci_method: str | None = None


@dataclass(frozen=True)
class Read:
    """One dashboard query's timed reads on one engine; the reference engine's record holds the others' by name."""

    seconds: list[float] = field(default_factory=list)
    min: float | None = None
    median: float | None = None
    max: float | None = None
    n: int | None = None
    cold_s: list[float] = field(default_factory=list)
    rows: int | None = None
    answer_ok: bool | None = None
    version: str | None = None
    memory: Memory | None = None
    mode: str | None = None
    unsupported: str | None = None
    engines: dict[str, Read] = field(default_factory=dict)


Reads = dict[str, Read]  # query name -> its reads
TOTAL_REQUESTS = "total"  # an operation's ``requests`` (object-store requests by kind: GET, PUT, …) and their sum


@dataclass(frozen=True)
class Base:
    """The base table an operation started from (each round restored to it)."""

    path: str | None = None
    rows: int | None = None
    files: int | None = None
    bytes: int | None = None
    days: int | None = None
    files_per_day: int | None = None
    rows_per_file: int | None = None
    seed: int | None = None
    generator_version: int | None = None


@dataclass(frozen=True)
class RoundsPlan:
    min_rounds: int | None = None
    max_rounds: int | None = None
    target_ci: float | None = None
    rounds: int | None = None
    ci_half_width: float | None = None
    target_met: bool | None = None
    # --interleave: the configurations whose rounds alternated with this one's (A B A B …), itself included
    interleaved_with: list[str] | None = None


@dataclass(frozen=True)
class Round:
    """One measured round of an update or compaction, as its record keeps it."""

    filesystem: FileChanges | None = None
    metadata: MetaChanges | None = None
    locate: Locate | None = None
    memory: Memory | None = None
    write_amplification: float | None = None
    table_bytes_on_disk: int | None = None


# --- what a record's last round hands on (``bench.measure.rounds``): optional on every measured update ------------

@dataclass(frozen=True, kw_only=True)
class LastRound:
    """What every measured update or compaction record carries from its last round (``Lab.record``); a record class
    that requires one of these re-declares it as ``= field()`` (a bare annotation would inherit this None)."""

    filesystem: FileChanges | None = None
    metadata: MetaChanges | None = None
    write_amplification: Number | None = None
    write_amplification_metadata: Number | None = None
    logical_bytes: Number | None = None
    table_bytes_on_disk: int | None = None
    data_file_anatomy: Anatomy | None = None
    requests: dict[str, int] | None = None
    locate: Locate | None = None
    memory: Memory | None = None


LAST_ROUND = tuple(f.name for f in dataclasses.fields(LastRound))


@dataclass(frozen=True, kw_only=True)
class LocatedUpdate(LastRound):
    """An update that also knows how many partitions its rows sat in, of the table's (the cost model's layouts)."""

    partitions_touched: int | None = None
    table_partitions: int | None = None


# --- the records ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HotfixUpdate(LocatedUpdate):
    """(payments_hotfix, update): one statement sets ``status`` on N scattered rows."""

    rows_targeted: int
    rows_changed_verified: int
    row_count: int
    rows_changed_reported: int | None
    filesystem: FileChanges = field()
    metadata: MetaChanges = field()
    rounds: list[Round]
    rounds_plan: RoundsPlan
    write_amplification: Number = field()
    reads_before: Reads
    reads_after: Reads
    base: Base
    live_files_before: LiveFiles
    live_files_after: LiveFiles
    route: str
    locate_full_scan: bool | None
    table_data_files: int
    files_touched: int
    # the route whose first round read the dashboards before the update: routes that share the base table (restored
    # byte-identical) share that one reading; None in records made before it was shared
    reads_before_route: str | None = None


@dataclass(frozen=True)
class HotfixCompaction(LastRound):
    """(payments_hotfix, compaction): merge-on-read's compaction after the hotfix, and the reads after it."""

    filesystem: FileChanges = field()
    metadata: MetaChanges = field()
    rounds: list[Round]
    rounds_plan: RoundsPlan
    reads_after_compaction: Reads
    rows_changed_verified: int
    row_count: int
    live_files_before: LiveFiles
    live_files_after: LiveFiles


@dataclass(frozen=True)
class FileSizeUpdate(LocatedUpdate):
    """(file_size, update): the same update on files of one size (one step of the file-size scenario)."""

    file_bytes_mean: Number
    rows_per_file: int
    files_total: int
    rows_targeted: int
    rows_changed_verified: int
    bytes_in_touched_files: Number
    table_bytes: int
    filesystem: FileChanges = field()
    metadata: MetaChanges = field()
    rounds: list[Round]
    reads_before: Reads
    reads_after: Reads
    compaction: Compaction | None
    reads_after_compaction: Reads | None
    workspace_bytes: int
    workspace_peak_bytes: int
    target_file_bytes: int
    route: str
    locate_full_scan: bool | None
    table_data_files: int
    files_touched: int


@dataclass(frozen=True)
class SweepUpdate(LocatedUpdate):
    """(update_sweep, update): N rows in F files, one point of the files-vs-rows sweep, by one locate route (records
    made before the sweep took routes have none: they took the join)."""

    rows_targeted: int
    rows_fraction: float
    files_touched: int
    files_total: int
    rows_changed_verified: int
    rounds: list[Round]
    filesystem: FileChanges = field()
    metadata: MetaChanges = field()
    route: str | None = None
    table_data_files: int | None = None
    locate_full_scan: bool | None = None
    # the dashboards on the table after the point's update (recorded since the sweep places updates on the decision
    # map: a read's cost after an update of this shape)
    reads_after: Reads | None = None


@dataclass(frozen=True)
class GrowthUpdate(LocatedUpdate):
    """(table_growth, update): the hotfix on a table of one size."""

    files_total: int
    rows_total: int
    file_bytes_mean: Number
    rows_targeted: int
    files_touched: int
    rows_changed_verified: int
    rounds: list[Round]
    filesystem: FileChanges = field()
    metadata: MetaChanges = field()


@dataclass(frozen=True)
class ReadOptimized:
    """Hudi merge-on-read's read-optimized view after a write: how many of the batch's rows it does not show yet."""

    seconds: float | None = None
    rows_not_yet_visible: int | None = None
    rows_in_batch: int | None = None
    engines: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class DegradationStep:
    """One write of the degradation sequence: the read after it, and what the table holds then."""

    batch: int | None = None
    update_s: float | None = None
    read_s: float | None = None
    read: Read | None = None
    live_files: LiveFiles | None = None
    table_bytes_on_disk: int | None = None
    bytes_added: int | None = None
    memory: Memory | None = None
    read_optimized: ReadOptimized | None = None


@dataclass(frozen=True)
class Recovery:
    """The degradation's compaction, and the read after it against the start and the last batch."""

    compaction_s: float | None = None
    read_after_compaction_s: float | None = None
    recovery_vs_start: float | None = None
    recovery_vs_last_batch: float | None = None
    live_files_after: LiveFiles | None = None
    skipped: str | None = None  # why there was no compaction (copy-on-write has none)


@dataclass(frozen=True)
class DegradationSequence:
    """(degradation, sequence): read cost against writes since the last compaction, then the compaction."""

    query: str
    read_before_s: Number
    series: list[DegradationStep]
    degradation_rate: Number
    recovery: Recovery


@dataclass(frozen=True)
class CadenceCycle:
    """One cycle of the cadence check: k writes, the read in each state before a write, then the compaction."""

    cycle: int
    update_s: list[float]
    read_s: list[float]  # the read's median in each state (0 … k-1 writes since the last compaction)
    reads: list[Read]
    compaction_s: float
    cost_per_write_s: float  # (writes + compaction + reads_per_write x reads) / k


@dataclass(frozen=True)
class CadenceCycles:
    """(compaction_cadence, sequence): the cost per write measured when compacting every ``writes_per_compaction``."""

    writes_per_compaction: int
    reads_per_write: int
    query: str
    cycles: list[CadenceCycle]
    read_after_s: Number
    cost_per_write_s: Number  # the median over the cycles


@dataclass(frozen=True)
class UpsertBatch:
    """One upsert batch of the dinner peak, and the dashboard read after it."""

    batch: int | None = None
    upsert_s: float | None = None
    rows: int | None = None
    rows_updated: int | None = None
    read_s: float | None = None
    reads: Reads = field(default_factory=dict)
    bytes_added: int | None = None
    files_added: int | None = None
    metadata: MetaChanges | None = None
    live_files: LiveFiles | None = None
    table_bytes_on_disk: int | None = None
    locate: Locate | None = None
    memory: Memory | None = None
    read_optimized: ReadOptimized | None = None


@dataclass(frozen=True)
class Compaction:
    """A compaction timed once (merge-on-read): after a file-size step's update, or ending a sequence of writes."""

    seconds: float | None = None
    live_files_before: LiveFiles | None = None
    live_files_after: LiveFiles | None = None
    filesystem: FileChanges | None = None
    metadata: MetaChanges | None = None
    table_bytes_on_disk: int | None = None
    locate: Locate | None = None
    memory: Memory | None = None
    reads_after: Reads = field(default_factory=dict)
    read_optimized_after: ReadOptimized | None = None
    skipped: str | None = None


@dataclass(frozen=True)
class DinnerPeakSequence:
    """(dinner_peak, sequence): many small upsert batches between dashboard reads, then compaction."""

    series: list[UpsertBatch]
    upsert_p50_s: Number
    upsert_p95_s: Number
    upsert_max_s: Number
    degradation_rate: Number
    compaction: Compaction | None
    row_count: int
    rows_changed_verified: int
    route: str | None = None


@dataclass(frozen=True)
class Adjustment:
    """One settlement adjustment batch (an update of a few rows)."""

    batch: int | None = None
    seconds: float | None = None
    filesystem: FileChanges | None = None
    metadata: MetaChanges | None = None
    files_touched: int | None = None
    table_bytes_on_disk: int | None = None
    locate: Locate | None = None
    locate_full_scan: bool | None = None
    requests: dict[str, int] | None = None
    memory: Memory | None = None


@dataclass(frozen=True)
class MonthOfReads:
    """The settlements' reads over a month: their total, and each query's times."""

    total_s: float | None = None
    reads: int | None = None
    per_query_s: dict[str, list[float]] = field(default_factory=dict)
    per_query_mean_s: dict[str, float] = field(default_factory=dict)
    engines: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class SettlementsSequence:
    """(monthly_settlements, sequence): few updates, very many reads."""

    write_total_s: Number
    writes: list[Adjustment]
    write_bytes_total: int
    read_total_s: Number
    read_total_pristine_s: Number
    reads: MonthOfReads
    reads_pristine: MonthOfReads
    per_read_overhead_s: dict[str, float]
    mean_read_overhead_s: Number
    mean_read_overhead_by_engine_s: dict[str, float]
    live_files_after: LiveFiles
    route: str | None = None
    table_data_files: int | None = None
    locate_full_scan: bool | None = None


@dataclass(frozen=True)
class LateStrategy:
    """One way of applying a late batch: what it cost and how many late rows went back in time."""

    strategy: str | None = None
    source: str | None = None
    seconds: float | None = None
    rows_late: int | None = None
    rows_back_in_time: int | None = None
    rows_kept_current: int | None = None
    loses_data: bool | None = None
    filesystem: FileChanges | None = None
    metadata: MetaChanges | None = None
    memory: Memory | None = None
    skipped: str | None = None  # why this configuration has no such strategy


UPSERT, GUARDED_MERGE = "upsert", "guarded_merge"  # the late-arrivals strategies by name


@dataclass(frozen=True)
class LateArrivalsSequence:
    """(late_arrivals, sequence): late, out-of-order rows upserted per strategy."""

    strategies: dict[str, LateStrategy]
    ordering_field: str


@dataclass(frozen=True)
class RacingBatch:
    """One upsert batch of the concurrent-compaction scenario."""

    batch: int | None = None
    concurrent: bool | None = None
    attempts: int | None = None
    conflicts: list[Any] = field(default_factory=list)
    seconds: float | None = None
    committed: bool | None = None


@dataclass(frozen=True)
class RacingCompaction:
    """One compaction attempt racing the upserts: committed, lost to a conflict (its class), or not applicable."""

    committed: bool = False
    not_applicable: str | None = None
    conflict_class: str | None = field(default=None, metadata={"key": "class"})  # the exception that lost it
    root_cause: str | None = None
    seconds: float | None = None
    operations_since_start: int | None = None


@dataclass(frozen=True)
class ConcurrentCompactionSequence:
    """(concurrent_compaction, sequence): upserts with a compaction racing them."""

    batches: list[RacingBatch]
    compactions: list[RacingCompaction]
    commits_attempted: int
    commits_succeeded: int
    commits_failed_by_conflict: int
    conflict_classes: list[str]
    retries_per_commit: Number
    batches_lost: int
    compaction_committed: bool
    upsert_alone_p50_s: float | None
    upsert_racing_p50_s: float | None
    concurrent_wall_s: Number | None
    concurrency_settings: list[dict[str, Any]]
    row_count: int
    rows_changed_verified: int


@dataclass(frozen=True)
class MemoryAttempt:
    """One attempt of the memory search: the update with one driver memory."""

    driver_memory_mb: int
    completed: bool
    out_of_memory: bool | None = None
    reason: str | None = None
    error: str | None = None
    seconds: float | None = None
    rows_changed_verified: int | None = None
    memory: Memory | None = None


@dataclass(frozen=True)
class MemorySearch:
    """(memory_needed, search): the smallest driver memory with which the update completes."""

    table: str
    attempts: list[MemoryAttempt]
    needed_mb: int | None
    largest_failed_mb: int | None
    more_than_ladder: bool
    ladder_mb: list[int]
    failed_for_memory: int
    failed_otherwise: int
    rows_targeted: int
    files_total: int
    file_bytes_mean: Number
    table_bytes: int
    master: str
    route: str

    @property
    def least_tried_mb(self) -> int | None:
        return self.ladder_mb[0] if self.ladder_mb else None

    @property
    def most_tried_mb(self) -> int | None:
        return self.ladder_mb[-1] if self.ladder_mb else None

    @property
    def at_needed(self) -> MemoryAttempt | None:
        """The completed attempt with the memory the update needs."""
        return next((a for a in self.attempts if a.completed and a.driver_memory_mb == self.needed_mb), None)

    @property
    def largest_failure(self) -> MemoryAttempt | None:
        failed = [a for a in self.attempts if not a.completed]
        return max(failed, key=lambda a: a.driver_memory_mb) if failed else None


@dataclass(frozen=True)
class Setting:
    """A setting the run made, with the documentation it was checked against."""

    scope: str | None = None
    key: str | None = None
    value: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class WritersSetup:
    """How a race was set up (``bench/writers/several.py``): the realistic set-up or the stress variant, and the
    factors a control changes; a field an older race lacks reads as its default then."""

    name: str | None = None  # realistic or stress
    service: bool = True  # a table service ran beside the writers
    service_every_commits: int | None = None  # its cadence in writer commits (0: back to back)
    keep_snapshots_s: Number | None = None  # Iceberg's expiry keeps snapshots this young
    writers_clean: bool | None = None  # each writer also cleans after its commits (Hudi's default)
    heartbeat_ms: int | None = None  # Hudi's heartbeat where the set-up sets one (None: Hudi's own)
    retry: str | None = None  # checked (looks for its commit first) or blind
    route: str | None = None  # how the writers' statements find their rows
    names_partition: bool = False  # the statement names its days


@dataclass(frozen=True)
class Coordination:
    """How several writers were coordinated: their kind, the concurrency control, the retry and the settings."""

    kind: str | None = None
    control: str | None = None
    retry: str | None = None
    settings: list[Setting] = field(default_factory=list)
    servers: dict[str, Any] = field(default_factory=dict)
    setup: WritersSetup | None = None  # realistic or stress, and its values (bench/workload/scales.py)


@dataclass(frozen=True)
class BatchCommit:
    """A labelled commit a batch's attempt made, as the table's own history has it (``invariants.attach_commits``)."""

    label: str | None = None
    id: Any = None
    began_at: float | None = None  # epoch s its transaction began (Hudi: its instant was requested)
    completed_at: float | None = None
    files_written: int | None = None
    rows_changed: int | None = None  # the format's own count (Hudi numUpdateWrites, Delta numUpdatedRows)
    file_groups: list[str] | None = None  # what it wrote (Hudi's write stats); None where not recorded


@dataclass(frozen=True)
class WritersBatch:
    """One writer's batch in a race: its keys, its attempts and whether it was acknowledged, with its commits."""

    writer: int | None = None
    batch: int | None = None
    race: int | None = None
    tag: str | None = None
    keys: list[int] = field(default_factory=list)
    attempts: int | None = None
    failures: list[Any] = field(default_factory=list)
    committed: bool = False
    started_at: float | None = None
    attempt_started_at: float | None = None
    ended_at: float | None = None
    seconds: float | None = None
    lock_wait_s: float | None = None
    commits: list[BatchCommit] = field(default_factory=list)


@dataclass(frozen=True)
class LockWait:
    """The committed batches' waits for the format's lock: how many commits, the median and the longest (s)."""

    commits: int = 0
    median: float = 0.0
    max: float = 0.0


@dataclass(frozen=True)
class InvariantCheck:
    ok: bool | None = None
    evidence: list[Any] = field(default_factory=list)
    violations: list[Any] = field(default_factory=list)
    increments_lost_to_the_merge_rule: int | None = None


ONCE = "each_acknowledged_batch_once"  # the invariant whose check counts increments lost to a merge rule
READS = "reads"  # an engine's ``read`` where it could read the table


@dataclass(frozen=True)
class EngineChecks:
    """The invariants as one engine read the table after the race (``read`` says whether it could)."""

    read: str | None = None
    checks: dict[str, InvariantCheck] = field(default_factory=dict)


@dataclass(frozen=True)
class Invariants:
    engines: dict[str, EngineChecks] = field(default_factory=dict)
    history: Any = None
    last_service: Any = None
    violations: list[Any] = field(default_factory=list)
    rule: str | None = None
    evidence: Any = None
    commit_isolation: dict[str, int] | None = None  # writer commits per isolation level (Delta's commitInfo.isolationLevel)


@dataclass(frozen=True)
class WritersRace:
    """(several_writers, race): N writers racing on one table, and the invariants checked after."""

    writers: int
    overlap: str
    kind: str
    control: str
    coordination: Coordination
    per_writer: list[dict[str, Any]]
    batches: list[WritersBatch]
    batches_attempted: int
    batches_committed: int
    batches_failed: int
    commit_attempts: int
    conflicts: int
    conflict_rate: Number
    retries: int
    conflict_classes: dict[str, int]
    rows_committed: int
    committed_rows_per_s: Number
    race_wall_s: Number
    startup_s: Number
    services: list[dict[str, Any]]
    services_committed: int
    services_failed: int
    writer_errors: list[Any]
    invariants: Invariants
    violations: list[str]
    keys_touched: int
    keys_deleted: int
    # (optional: runs recorded before repeated races and the writer pool lack them; the scenario always writes them)
    writers_started: int | None = None
    races: int | None = None
    committed_rows_per_s_by_race: list[float] | None = None
    committed_rows_per_s_uncertainty: Uncertainty | None = None
    conflicts_by_race: list[int] | None = None
    evidence: list[str] | None = None  # the folders where races that broke an invariant left their table
    failure_causes: dict[str, int] | None = None  # failed attempts by cause, as the format words it
    failure_kinds: dict[str, int] | None = None  # failed attempts by kind (bench.core.failures): who caused them
    lock_wait_per_commit_s: LockWait | None = None  # seconds waited for the lock (Hudi)
    raised_after_commit: int | None = None  # the retry that checks first (bench/measure/writers.py)


# --- the environment a run recorded (environment.json) --------------------------------------------------------

@dataclass(frozen=True)
class Machine:
    platform: str | None = None
    machine: str | None = None
    cpus: int | None = None
    memory_bytes: int | None = None
    cpu_model: str | None = None
    node: str | None = None
    host_id: str | None = None  # this host in this boot (bench.run.record.host_id); None for runs made before


@dataclass(frozen=True)
class ScaleUsed:
    """The scale a run measured, as its preset and ``--param`` made it (the payments table's layout among it)."""

    name: str | None = None
    days: int | None = None
    files_per_day: int | None = None
    rows_per_file: int | None = None
    hotfix_rows: int | None = None
    rows: int | None = None
    files: int | None = None


@dataclass(frozen=True)
class FormatUsed:
    """A family's jars as the run resolved them, or why it was skipped."""

    status: str | None = None
    reason: str | None = None
    source: str | None = None
    artifacts: list[str] = field(default_factory=list)
    sha256: dict[str, str] = field(default_factory=dict)


AVAILABLE = "available"  # a family's status where its jars were found


@dataclass(frozen=True)
class ConfigUsed:
    family: str | None = None
    mode: str | None = None
    description: str | None = None
    merges_on_read: bool | None = None


@dataclass(frozen=True)
class SparkUsed:
    master: str | None = None
    conf: dict[str, str] = field(default_factory=dict)

    @property
    def driver_memory(self) -> str:
        return str(self.conf.get(DRIVER_MEMORY, ""))


DRIVER_MEMORY = "spark.driver.memory"


@dataclass(frozen=True)
class Jvm:
    spark: str | None = None
    java: str | None = None


@dataclass(frozen=True)
class EngineUsed:
    """A read engine as the run found it: its version, or why it did not run; what it could read, per configuration."""

    status: str | None = None
    version: str | None = None
    reason: str | None = None
    settings: list[Setting] = field(default_factory=list)
    support: dict[str, Any] = field(default_factory=dict)


SKIPPED = "skipped"  # an engine's status where it did not run (its packages are missing)


@dataclass(frozen=True)
class Environment:
    """What a run recorded about where and with what it measured."""

    run_id: str | None = None
    created: str | None = None
    command: str | None = None
    seed: int | None = None
    python: str | None = None
    java: Any = None
    jvm: Jvm | None = None
    packages: dict[str, str] = field(default_factory=dict)
    formats: dict[str, FormatUsed] = field(default_factory=dict)
    configs: dict[str, ConfigUsed] = field(default_factory=dict)
    spark: SparkUsed | None = None
    engines: dict[str, EngineUsed] = field(default_factory=dict)
    machine: Machine | None = None
    scale: ScaleUsed | None = None
    like: Replica | None = None  # run --like


@dataclass(frozen=True)
class Replica:
    """``run --like``: the profiled table a run replicates, at which fraction of its partitions, with the replica's
    scale parameters."""

    profile: str | None = None
    location: str | None = None
    fraction: Number | None = None
    params: dict[str, Any] = field(default_factory=dict)
    notes: Any = None


# every (scenario, operation) a record may be, and the class that gives its shape
KINDS: dict[tuple[str, str], type] = {
    (HOTFIX, "update"): HotfixUpdate,
    (HOTFIX, "compaction"): HotfixCompaction,
    (FILE_SIZE, "update"): FileSizeUpdate,
    (UPDATE_SWEEP, "update"): SweepUpdate,
    (TABLE_GROWTH, "update"): GrowthUpdate,
    (DEGRADATION, "sequence"): DegradationSequence,
    (COMPACTION_CADENCE, "sequence"): CadenceCycles,
    (DINNER_PEAK, "sequence"): DinnerPeakSequence,
    (SETTLEMENTS, "sequence"): SettlementsSequence,
    (LATE_ARRIVALS, "sequence"): LateArrivalsSequence,
    (CONCURRENT_COMPACTION, "sequence"): ConcurrentCompactionSequence,
    (MEMORY_NEEDED, "search"): MemorySearch,
    (SEVERAL_WRITERS, "race"): WritersRace,
}


# --- reading a dict as a dataclass, and the types a writer's dict must have -----------------------------------

@functools.cache
def _hints(kind: Any) -> dict[str, Any]:
    return typing.get_type_hints(kind)


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def parse(kind: type[T], value: Any) -> T:
    """``kind`` from a record's dict, recursively; a field the dict lacks (an older run) gets its default, or None.
    Keys the class does not declare are left out (the header, for a record)."""
    hints = _hints(kind)  # type: ignore[arg-type]  # a class is hashable
    data = value if isinstance(value, dict) else {}
    return kind(**{f.name: _convert(hints[f.name], data[key(f)]) if key(f) in data else _default(f)
                   for f in dataclasses.fields(kind)})  # type: ignore[arg-type]


def key(f: dataclasses.Field) -> str:
    """The key a field has in the record: its name, or the one it must be spelled by (``class`` is Python's)."""
    return f.metadata.get("key", f.name)


def _convert(tp: Any, raw: Any) -> Any:
    if raw is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        classes = [a for a in inner if dataclasses.is_dataclass(a) or typing.get_origin(a) in (list, dict)]
        return _convert(classes[0], raw) if len(classes) == 1 else raw
    if dataclasses.is_dataclass(tp):
        return parse(tp, raw) if isinstance(raw, dict) else raw  # type: ignore[arg-type]
    if origin is list and isinstance(raw, list):
        (item,) = typing.get_args(tp)
        return [_convert(item, x) for x in raw]
    if origin is dict and isinstance(raw, dict):
        _, item = typing.get_args(tp)
        return {k: _convert(item, v) for k, v in raw.items()}
    return raw


def runtime_type(tp: Any) -> Any:
    """What ``isinstance`` takes for an annotation, as a writer's dict holds it: a dataclass is a dict, a float may
    be an int, ``X | None`` is (X, NoneType)."""
    origin = typing.get_origin(tp)
    if tp == Number:  # a figure that may be whole
        return (int, float)
    if origin in (Union, types.UnionType):
        out: list[type] = []
        for a in typing.get_args(tp):
            t = runtime_type(a)
            out += list(t) if isinstance(t, tuple) else [t]
        return tuple(dict.fromkeys(out))
    if dataclasses.is_dataclass(tp) or origin is dict:
        return dict
    if origin is list:
        return list
    if tp is Any:
        return object
    return tp


def required_and_optional(kind: type) -> tuple[dict[str, Any], dict[str, Any]]:
    """A record class's fields as a writer's dict must hold them: those without a default, those with one."""
    hints = _hints(kind)
    required: dict[str, Any] = {}
    optional: dict[str, Any] = {}
    for f in dataclasses.fields(kind):
        no_default = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        (required if no_default else optional)[key(f)] = runtime_type(hints[f.name])
    return required, optional
