"""The one interface every table format implements; scenarios only ever talk to this."""

from __future__ import annotations

import abc
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from bench.exceptions import NotSupported

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# File kinds the storage probe reports, per format (see ``TableFormat.classify``).
DATA, DELETE, LOG, METADATA = "data", "delete", "log", "metadata"
FILE_KINDS = (DATA, DELETE, LOG, METADATA)

# How an update finds its rows (shared/DESIGN.md, "Finding the rows"): ``join`` is a MERGE / ``IN (SELECT …)`` from a keys
# table, which no format can prune; ``pruned`` sends the keys as literals each format's file statistics can skip by;
# ``index`` looks the keys up in an index the table keeps (Hudi's record index).
JOIN, PRUNED, INDEX = "join", "pruned", "index"
ROUTES = (JOIN, PRUNED, INDEX)


@dataclass(frozen=True)
class Keys:
    """The keys an update changes: as literals, and as a temporary view made outside the timed region."""

    values: tuple[int, ...]
    view: str
    # the keys with each row's ordering value, as a correction feed carries them (Hudi's MERGE wants the ordering field
    # from its source); None where the scenario did not make it
    ordered_view: str | None = None
    # the days (ISO dates of the partition column) the keys sit in, where the statement names them too (a control:
    # a format that detects conflicts by the statement's condition can then tell partitions apart); () where it does not
    partitions: tuple[str, ...] = ()


def partition_predicate(column: str, days: tuple[str, ...]) -> str:
    """The days (ISO dates) as a literal condition on the date partition column."""
    dates = ", ".join(f"DATE '{d}'" for d in days)
    return f"{column} IN ({dates})"


def any_of(terms: list[str]) -> str:
    """``terms`` OR-ed as a balanced tree: 1,200 disjuncts nest 11 deep, not 1,200 (the parser and analyzer recurse)."""
    if not terms:
        raise ValueError("no terms to OR")
    if len(terms) == 1:
        return terms[0]
    middle = len(terms) // 2
    return f"({any_of(terms[:middle])} OR {any_of(terms[middle:])})"


def key_equalities(key: str, keys: tuple[int, ...]) -> str:
    """``key = k1 OR key = k2 …``: Delta tests each disjunct against a file's min/max (an IN list is tested as one
    [min, max] range, which scattered keys cover entirely)."""
    return any_of([f"{key} = {int(k)}" for k in sorted(keys)])


def key_in_lists(key: str, keys: tuple[int, ...], limit: int) -> str:
    """``key IN (…) OR key IN (…)``, each list of at most ``limit`` sorted keys: Iceberg prunes nothing for a list of
    more than 200 values (``InclusiveMetricsEvaluator.IN_PREDICATE_LIMIT``)."""
    ordered = sorted(int(k) for k in keys)
    return any_of([f"{key} IN ({', '.join(map(str, ordered[i:i + limit]))})" for i in range(0, len(ordered), limit)])


# How several writers coordinate (shared/DESIGN.md, "Several writers"): each family's own default (Iceberg's and Delta's
# optimistic commits, Hudi's optimistic concurrency control), or Hudi's non-blocking concurrency control, which needs a
# bucket-indexed MERGE_ON_READ table of its own.
DEFAULT_CONTROL, NBCC = "default", "nbcc"
CONTROLS = (DEFAULT_CONTROL, NBCC)


@dataclass(frozen=True)
class Coordinator:
    """The servers several Spark applications share (started by the run): Iceberg's JDBC catalog (its ``JdbcCatalog``
    properties) and Hudi's ZooKeeper (host, port)."""

    catalog: dict[str, str] | None = None
    zookeeper: tuple[str, int] | None = None


@dataclass(frozen=True)
class HistoryEntry:
    """One commit (or unfinished attempt) in a table's history, as its own metadata records it."""

    id: str
    parent: str | None  # the commit it follows (None for the first, or where the format keeps no parent)
    operation: str
    by_writer: bool  # a writer's commit, not a table service's (compaction, clustering, clean, OPTIMIZE, rewrite)
    state: str = "COMPLETED"  # Hudi's REQUESTED / INFLIGHT instants; every Iceberg snapshot and Delta version is COMPLETED
    label: str | None = None  # the writer's batch that made this commit, where the format records one (label_commits)
    began_at: float | None = None  # epoch s the commit's transaction began (Hudi: its instant was requested)
    completed_at: float | None = None  # epoch s the commit completed
    files_written: int | None = None  # files the commit wrote (Hudi's write stats); None where not read
    rows_changed: int | None = None  # rows the commit reports it updated (Hudi's write stats, Delta's metrics); None: not reported
    file_groups: tuple[str, ...] | None = None  # partition/file group ids the commit wrote (Hudi's write stats); None: not read
    isolation: str | None = None  # the isolation level the commit was checked under, where the format records it (Delta)


@dataclass(frozen=True)
class Setting:
    """One setting the harness chose, with where its name and meaning are documented."""

    scope: str  # "spark" | "table" | "write" | "read"
    key: str
    value: str
    source: str


@dataclass(frozen=True)
class TableRef:
    """A table the harness created: where it lives and how it is keyed."""

    name: str
    location: str  # a local path or a URI (s3a://, gs://, abfss://, hdfs://)
    key: str
    partition_by: str
    ordering: str  # column that orders two versions of one key (Hudi precombine; recorded for all)


@dataclass
class CommitInfo:
    """The last commit as the format's own metadata describes it (normalised across formats)."""

    operation: str
    data_files_added: int = 0
    data_files_removed: int = 0
    delete_files_added: int = 0  # position-delete files, deletion vectors or log files
    delete_files_removed: int = 0
    bytes_added: int = 0
    bytes_removed: int = 0
    rows_changed: int | None = None
    commits: int = 0
    raw: list[dict] = field(default_factory=list)

    def add(self, other: CommitInfo) -> None:
        """Fold one more commit into this sum (operations joined, counts added)."""
        self.operation = "+".join(filter(None, [self.operation, other.operation]))
        for name in ("data_files_added", "data_files_removed", "delete_files_added", "delete_files_removed",
                     "bytes_added", "bytes_removed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if other.rows_changed is not None:
            self.rows_changed = (self.rows_changed or 0) + other.rows_changed
        self.commits += other.commits
        self.raw += other.raw

    def as_dict(self) -> dict[str, object]:
        return dict(vars(self))


class TableFormat(abc.ABC):
    """One table configuration (e.g. ``iceberg-mor``) of one format family.

    A family's configurations share a Spark application (``spark_conf``); each instance fixes
    the table properties of its mode. Verbs a mode lacks still exist and raise ``NotSupported``.
    """

    family: ClassVar[str]
    modes: ClassVar[tuple[str, ...]]

    def __init__(self, config_id: str, mode: str, warehouse: Path | str, target_file_bytes: int, route: str = JOIN) -> None:
        if mode not in self.modes:
            raise ValueError(f"{type(self).__name__} has no mode {mode!r}")
        if route not in ROUTES:
            raise ValueError(f"no locate route {route!r}; routes: {', '.join(ROUTES)}")
        self.config_id = config_id
        self.mode = mode
        self.warehouse = str(warehouse).rstrip("/")
        self.target_file_bytes = target_file_bytes
        self.route = route

    # --- what the configuration is -------------------------------------------------------
    read_modes: tuple[str, ...] = ("snapshot",)
    # path prefixes (relative to the table) whose writes are reported on their own, e.g. Hudi's metadata table
    parts: ClassVar[dict[str, str]] = {}

    @property
    def merges_on_read(self) -> bool:
        """True where changes are written beside the data and compaction has something to do."""
        from bench.formats import CONFIGS

        return CONFIGS[self.config_id].merges_on_read

    @classmethod
    @abc.abstractmethod
    def spark_settings(cls, warehouse: Path) -> list[Setting]:
        """Spark settings the family needs (extensions, catalog, serializer), recorded with results."""

    @abc.abstractmethod
    def table_settings(self) -> list[Setting]:
        """Table properties / write options this configuration sets explicitly."""

    def settings(self) -> list[Setting]:
        return self.spark_settings(self.warehouse) + self.table_settings()

    # --- finding the rows ----------------------------------------------------------------
    def route_unsupported(self) -> str | None:
        """Why this configuration cannot take its ``route`` (None: it can)."""
        if self.route == INDEX:
            return f"{self.config_id} keeps no index that finds rows by key (only Hudi's record or bucket index does)"
        return None

    def table_name(self, name: str) -> str:
        """A route whose table is created differently (``route_settings``) gets a table of its own."""
        return f"{name}_{self.route}" if self.route_settings() else name

    def route_settings(self) -> list[Setting]:
        """Table settings the route needs when the table is created (an index, column statistics); [] for none,
        so the route's table is the same base table as ``join``'s."""
        return []

    def update_keys(self, spark: SparkSession, table: TableRef, keys: Keys, assignments: dict[str, str]) -> None:
        """Set ``assignments`` on the rows with ``keys``, found by this adapter's ``route``.

        Raises:
            NotSupported: the configuration has no such route (``route_unsupported``).
        """
        reason = self.route_unsupported()
        if reason:
            raise NotSupported(reason)
        if self.route == JOIN:
            self.update(spark, table, keys.view, assignments)
        elif self.route == PRUNED:
            predicate = self.pruning_predicate(table.key, keys.values)
            if keys.partitions:
                predicate = f"{partition_predicate(table.partition_by, keys.partitions)} AND {predicate}"
            self.update_where(spark, table, predicate, assignments)
        else:
            if keys.ordered_view is None:
                raise NotSupported(f"{self.config_id}: the index route needs the keys with their ordering values")
            self.update_indexed(spark, table, keys.ordered_view, assignments)

    def upsert_keys(self, spark: SparkSession, table: TableRef, rows_view: str, keys: tuple[int, ...]) -> None:
        """Upsert ``rows_view`` (whose keys are ``keys``), the existing rows found by this adapter's ``route``: ``join``
        the MERGE alone; ``pruned`` the MERGE with the keys also as a target-only literal condition, which the format's
        file statistics skip files by (the new keys match nothing either way); ``index`` the MERGE on a table whose own
        index tags the keys (its table settings, ``route_settings``).

        Raises:
            NotSupported: the configuration has no such route, or its upsert cannot take it.
        """
        reason = self.upsert_route_unsupported()
        if reason:
            raise NotSupported(reason)
        if self.route == PRUNED:
            self.upsert_where(spark, table, rows_view, self.pruning_predicate(f"t.{table.key}", keys))
        else:
            self.upsert(spark, table, rows_view)

    def upsert_route_unsupported(self) -> str | None:
        """Why this configuration's upsert cannot find its rows by its route (None: it can)."""
        return self.route_unsupported()

    def upsert_where(self, spark: SparkSession, table: TableRef, rows_view: str, target_predicate: str) -> None:
        """The upsert's MERGE with ``target_predicate`` (on ``t``) added to its ON condition."""
        raise NotSupported(f"{self.config_id}: its upsert takes no literal-key condition here")

    def pruning_predicate(self, key: str, keys: tuple[int, ...]) -> str:
        """The keys as a literal predicate this format's file statistics prune by."""
        return key_in_lists(key, keys, 200)

    def update_where(self, spark: SparkSession, table: TableRef, predicate: str, assignments: dict[str, str]) -> None:
        """``UPDATE … SET … WHERE predicate`` (a target-only condition: the format may skip files by it)."""
        raise NotSupported(f"{self.config_id} has no literal-predicate UPDATE here")

    def update_indexed(self, spark: SparkSession, table: TableRef, keys_view: str, assignments: dict[str, str]) -> None:
        """The keys (with their ordering values, ``Keys.ordered_view``) looked up in the table's own index (a MERGE the
        index tags)."""
        raise NotSupported(self.route_unsupported() or f"{self.config_id} has no indexed update")

    def concurrency_settings(self) -> list[Setting]:
        """Isolation, commit retries and locks that govern two writers (or a writer and compaction) at once."""
        return []

    # --- several writers -----------------------------------------------------------------
    control: str = DEFAULT_CONTROL
    # the writes clean after their commits (Hudi's default); several_writers() may leave that to the table service
    cleans_after_commit: bool = True
    heartbeat_ms: int = 0  # a writer's heartbeat interval where the format keeps one (Hudi); 0: the format's own
    files_per_partition: int | None = None  # set by shape_like()

    def shape_like(self, files_per_partition: int) -> None:
        """The table's files per partition, for layouts that hash keys into a fixed number of files (Hudi NBCC's
        bucket index: one bucket per file of a day). Every application that writes or prunes the table must be
        told the same: a Hudi reader prunes by the bucket count of its own session, not the table's."""
        self.files_per_partition = files_per_partition

    # several writers share a JDBC catalog (Iceberg's): its driver on the application's classpath from the start, and
    # an engine other than Spark finds the table's current state through the catalog's row, not the table's folder
    jdbc_catalog = False

    def coordinator(self, coordination: Any) -> Coordinator:
        """The servers this format's several writers share, taken from the run's (``bench.servers``): none here;
        only what the format needs is started (the catalog's PostgreSQL, the lock's ZooKeeper)."""
        return Coordinator()

    def failed_attempts_pending(self, spark: SparkSession, table: TableRef) -> bool:
        """Whether a failed writer left an unfinished attempt in the table that a later clean rolls back once its
        writer is known dead (Hudi's instants: a check waits for it); a format that leaves none says no."""
        return False

    def several_writers(self, coordinator: Coordinator, control: str = DEFAULT_CONTROL,
                        inline_clean: bool = True, heartbeat_ms: int = 0) -> list[Setting]:
        """Put this adapter on the catalog and lock that several Spark applications can share, under ``control``;
        return the Spark session settings every writer's application (and the table service's) applies.
        ``inline_clean``: writers also run the format's clean after their commits (Hudi), not only the table service.
        ``heartbeat_ms``: a writer's heartbeat interval where the format keeps one (Hudi); 0: the format's default.

        Raises:
            NotSupported: the family has no such concurrency control.
        """
        if control != DEFAULT_CONTROL:
            raise NotSupported(f"{self.config_id} has no {control!r} concurrency control (only Hudi MERGE_ON_READ has NBCC)")
        return []

    def see_other_writers(self, spark: SparkSession, table: TableRef) -> None:
        """Make the session's next statement read the table as other applications left it. Iceberg's catalog runs with
        its cache off and Delta checks its log on every query, so they need nothing here."""

    def label_commits(self, spark: SparkSession, label: str) -> None:
        """Have the session's next commits carry ``label`` in their own metadata, read back by ``history`` (so a race's
        evidence can name the commit each batch made). Nothing where the format keeps no such field here (Iceberg: its
        snapshot properties cannot be set from SQL)."""

    labels_commits = False  # label_commits puts the label in the commit's own metadata (Delta, Hudi)

    def attempt_landed(self, spark: SparkSession, table: TableRef, label: str, since: float,
                       own_application: bool) -> bool | None:
        """Did the attempt labelled ``label`` (begun at ``since``, epoch s) commit, though its statement raised? Read
        from the table's own history: a completed commit carrying the label. None where the format cannot tell."""
        if not self.labels_commits:
            return None
        return any(e.label == label and e.state == "COMPLETED" for e in self.history(spark, table))

    def lock_waits(self, log: str) -> list[tuple[float, float]] | None:
        """Each lock a writer application waited for, as (asked, held) epoch seconds, read from its log; None where
        the format's writers take no lock (Iceberg commits by the catalog's compare-and-set, Delta optimistically)."""
        return None

    def processes_unsupported(self) -> str | None:
        """Why writers in separate Spark applications (JVMs) are not safe for this configuration here (None: they are)."""
        return None

    # Why a writer's commit attempt failed, read from the exception it got: (regex searched in "class root: message",
    # cause, kind), the first match wins and a cause may name the match's groups. A family's own conflict checks word
    # their reasons; the kind (``bench.core.failures``) where the words alone decide who caused it, else None (the race
    # then decides by what committed while the attempt ran).
    failure_causes: ClassVar[tuple[tuple[str, str, str | None], ...]] = ()

    def failure_cause(self, failure: dict[str, str]) -> str:
        """The cause of one failed attempt (``bench.measure.writers.failure``'s record), ``other (<class>)`` where
        the family names none for it."""
        return self._worded(failure)[0]

    def failure_kind(self, failure: dict[str, str]) -> str | None:
        """The kind of one failed attempt where the format's words decide it (``bench.core.failures``), else None."""
        return self._worded(failure)[1]

    def _worded(self, failure: dict[str, str]) -> tuple[str, str | None]:
        text = f"{failure.get('class', '')} {failure.get('root_cause') or ''}: {failure.get('message', '')}"
        for pattern, cause, kind in self.failure_causes:
            match = re.search(pattern, text)
            if match:
                return cause.format(**match.groupdict()), kind
        return f"other ({(failure.get('root_cause') or failure.get('class') or '?').rsplit('.', 1)[-1]})", None

    def attach(self, spark: SparkSession, table: TableRef) -> None:
        """Make a table another application created usable from this one (a catalog entry, a registration)."""

    def drop(self, spark: SparkSession, name: str) -> None:
        """Forget table ``name`` in a catalog that outlives its folder (the workspace deletes the files)."""

    def table_service(self, spark: SparkSession, table: TableRef, expire_before: float | None = None) -> str:
        """The maintenance a team runs beside its writers (compaction, clustering, cleaning); returns what ran.
        ``expire_before`` (epoch seconds): also drop what only the table's states before that time need, as a team's
        retention does (Iceberg: ``expire_snapshots``); None keeps every state."""
        self.compact(spark, table)
        return "compaction"

    def history(self, spark: SparkSession, table: TableRef) -> list[HistoryEntry]:
        """Every commit the table's metadata holds, oldest first (and Hudi's unfinished instants)."""
        raise NotSupported(f"{self.config_id} does not list its history here")

    # --- verbs ---------------------------------------------------------------------------
    @abc.abstractmethod
    def create(self, spark: SparkSession, name: str, data: DataFrame, *, key: str, partition_by: str,
               ordering: str) -> TableRef:
        """Create the table from ``data``, keeping its file layout (one output file per input partition)."""

    @abc.abstractmethod
    def update(self, spark: SparkSession, table: TableRef, keys_view: str, assignments: dict[str, str]) -> None:
        """Set ``assignments`` (column -> SQL expression) on the rows whose key is in ``keys_view``."""

    @abc.abstractmethod
    def upsert(self, spark: SparkSession, table: TableRef, rows_view: str) -> None:
        """Replace rows whose key exists, insert the others (rows carry every column)."""

    @abc.abstractmethod
    def delete(self, spark: SparkSession, table: TableRef, keys_view: str) -> None:
        """Delete the rows whose key is in ``keys_view``."""

    def upsert_if_newer(self, spark: SparkSession, table: TableRef, rows_view: str) -> None:
        """Upsert that keeps a stored row whose ``ordering`` column is newer than the incoming one (late data)."""
        raise NotSupported(f"{self.config_id} has no event-time-guarded MERGE here")

    def compact(self, spark: SparkSession, table: TableRef) -> None:
        """Fold pending deletes / logs into base files. Copy-on-write has nothing to fold."""
        raise NotSupported(f"{self.config_id} writes no delete files or logs, so there is nothing to compact")

    @abc.abstractmethod
    def relation(self, spark: SparkSession, table: TableRef, mode: str = "snapshot") -> str:
        """A name that SQL can select from, reading the table in ``mode``."""

    @abc.abstractmethod
    def commit_marker(self, table: TableRef) -> object:
        """An opaque position in the table's history (snapshot id, log version, instant time)."""

    @abc.abstractmethod
    def describe_commits(self, table: TableRef, since: object) -> CommitInfo:
        """The commits after ``since``, summed, parsed from the format's own metadata (not from Spark)."""

    @abc.abstractmethod
    def live_files(self, spark: SparkSession, table: TableRef) -> dict[str, int]:
        """Files the current table state references: ``data_files`` and ``delete_files`` (or logs)."""

    @abc.abstractmethod
    def location(self, name: str) -> str:
        """Where table ``name`` lives under the warehouse."""

    @abc.abstractmethod
    def classify(self, relpath: str) -> str:
        """The kind (``FILE_KINDS``) of a file given its path relative to the table directory."""

    def forget_cached_state(self, spark: SparkSession, table: TableRef | None = None) -> None:
        """Drop what the format caches about its tables (or ``table``) in the JVM, after a folder was replaced on disk.

        Iceberg re-reads its metadata on every query; Delta (its log cache) and Hudi (the catalog relation) override this.
        """

    def check_read_mode(self, mode: str) -> None:
        if mode not in self.read_modes:
            raise NotSupported(f"{self.config_id} has no {mode!r} read; it reads {', '.join(self.read_modes)}")


UPSERT = "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"


class SqlMergeVerbs:
    """update / upsert / delete as Spark SQL ``MERGE INTO``, for formats whose SQL supports it (Iceberg, Delta).

    The class using it names its table in SQL with ``sql_name``.
    """

    def sql_name(self, table: TableRef) -> str:
        raise NotImplementedError

    def update_where(self, spark: SparkSession, table: TableRef, predicate: str, assignments: dict[str, str]) -> None:
        sets = ", ".join(f"{col} = {expr}" for col, expr in assignments.items())  # ``t``: as in the MERGE's assignments
        spark.sql(f"UPDATE {self.sql_name(table)} t SET {sets} WHERE {predicate}")

    def _merge(self, spark: SparkSession, table: TableRef, source_view: str, action: str, also: str = "") -> None:
        on = f"t.{table.key} = s.{table.key}" + (f" AND {also}" if also else "")
        spark.sql(f"MERGE INTO {self.sql_name(table)} t USING {source_view} s ON {on} {action}")

    def update(self, spark: SparkSession, table: TableRef, keys_view: str, assignments: dict[str, str]) -> None:
        sets = ", ".join(f"t.{col} = {expr}" for col, expr in assignments.items())
        self._merge(spark, table, keys_view, f"WHEN MATCHED THEN UPDATE SET {sets}")

    def upsert(self, spark: SparkSession, table: TableRef, rows_view: str) -> None:
        self._merge(spark, table, rows_view, UPSERT)

    def upsert_where(self, spark: SparkSession, table: TableRef, rows_view: str, target_predicate: str) -> None:
        """A target-only condition in the MERGE's ON clause: Spark pushes it into the target's scan (the target is the
        outer join's null-supplying side), where Iceberg prunes files by min/max and Delta skips files by it."""
        self._merge(spark, table, rows_view, UPSERT, also=target_predicate)

    def delete(self, spark: SparkSession, table: TableRef, keys_view: str) -> None:
        self._merge(spark, table, keys_view, "WHEN MATCHED THEN DELETE")

    def upsert_if_newer(self, spark: SparkSession, table: TableRef, rows_view: str) -> None:
        """The documented guard against late data: update only where the incoming row is newer."""
        self._merge(spark, table, rows_view, f"WHEN MATCHED AND s.{table.ordering} > t.{table.ordering} THEN UPDATE SET * "
                                             "WHEN NOT MATCHED THEN INSERT *")
