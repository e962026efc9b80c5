"""The one interface every table format implements; scenarios only ever talk to this."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from bench.exceptions import NotSupported

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# File kinds the storage probe reports, per format (see ``TableFormat.classify``).
DATA, DELETE, LOG, METADATA = "data", "delete", "log", "metadata"
FILE_KINDS = (DATA, DELETE, LOG, METADATA)


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

    def __init__(self, config_id: str, mode: str, warehouse: Path | str, target_file_bytes: int) -> None:
        if mode not in self.modes:
            raise ValueError(f"{type(self).__name__} has no mode {mode!r}")
        self.config_id = config_id
        self.mode = mode
        self.warehouse = str(warehouse).rstrip("/")
        self.target_file_bytes = target_file_bytes

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

    def concurrency_settings(self) -> list[Setting]:
        """Isolation, commit retries and locks that govern two writers (or a writer and compaction) at once."""
        return []

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


class SqlMergeVerbs:
    """update / upsert / delete as Spark SQL ``MERGE INTO``, for formats whose SQL supports it (Iceberg, Delta).

    The class using it names its table in SQL with ``sql_name``.
    """

    def sql_name(self, table: TableRef) -> str:
        raise NotImplementedError

    def _merge(self, spark: SparkSession, table: TableRef, source_view: str, action: str) -> None:
        spark.sql(f"MERGE INTO {self.sql_name(table)} t USING {source_view} s ON t.{table.key} = s.{table.key} {action}")

    def update(self, spark: SparkSession, table: TableRef, keys_view: str, assignments: dict[str, str]) -> None:
        sets = ", ".join(f"t.{col} = {expr}" for col, expr in assignments.items())
        self._merge(spark, table, keys_view, f"WHEN MATCHED THEN UPDATE SET {sets}")

    def upsert(self, spark: SparkSession, table: TableRef, rows_view: str) -> None:
        self._merge(spark, table, rows_view, "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")

    def delete(self, spark: SparkSession, table: TableRef, keys_view: str) -> None:
        self._merge(spark, table, keys_view, "WHEN MATCHED THEN DELETE")

    def upsert_if_newer(self, spark: SparkSession, table: TableRef, rows_view: str) -> None:
        """The documented guard against late data: update only where the incoming row is newer."""
        self._merge(spark, table, rows_view, f"WHEN MATCHED AND s.{table.ordering} > t.{table.ordering} THEN UPDATE SET * "
                                             "WHEN NOT MATCHED THEN INSERT *")
