"""Apache Iceberg: copy-on-write (v2), merge-on-read with position deletes (v2), deletion vectors (v3)."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.core.failures import HARNESS_EXPIRY
from bench.exceptions import NotSupported
from bench.formats.base import (
    DATA,
    DEFAULT_CONTROL,
    DELETE,
    METADATA,
    CommitInfo,
    Coordinator,
    HistoryEntry,
    Setting,
    SqlMergeVerbs,
    TableFormat,
    TableRef,
)
from bench.formats.loading import one_task_per_input_file

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

CATALOG, NAMESPACE = "cowmor", "bench"
# the catalog several Spark applications share (Iceberg's JdbcCatalog: a commit is a compare-and-set of the table's
# metadata pointer in the database); the Hadoop catalog's lock lives in one JVM only
JDBC_CATALOG = "cowmor_jdbc"
DOC_JDBC = "https://iceberg.apache.org/docs/1.10.0/jdbc/"
DOC_SPARK = "https://iceberg.apache.org/docs/1.10.0/spark-configuration/"
DOC_TABLE = "https://iceberg.apache.org/docs/1.10.0/configuration/#write-properties"
DOC_WRITE_OPTIONS = "https://iceberg.apache.org/docs/1.10.0/spark-configuration/#write-options"
DOC_PROCEDURES = "https://iceberg.apache.org/docs/1.10.0/spark-procedures/"
DOC_SPEC = "https://iceberg.apache.org/spec/#deletion-vectors"


class TableProperties:
    """Iceberg table property keys and the values this harness uses (grep-able fairness settings)."""

    FORMAT_VERSION = "format-version"
    UPDATE_MODE = "write.update.mode"
    DELETE_MODE = "write.delete.mode"
    MERGE_MODE = "write.merge.mode"
    COPY_ON_WRITE, MERGE_ON_READ = "copy-on-write", "merge-on-read"
    TARGET_FILE_SIZE_BYTES = "write.target-file-size-bytes"
    PARQUET_COMPRESSION = "write.parquet.compression-codec"


MODES = {  # mode -> (format version, row-level write mode)
    "cow": ("2", TableProperties.COPY_ON_WRITE),
    "mor": ("2", TableProperties.MERGE_ON_READ),
    "dv": ("3", TableProperties.MERGE_ON_READ),
}


def _io_properties() -> dict[str, str]:
    """pyiceberg's FileIO settings for an S3 endpoint (pyiceberg 0.12 reads no AWS_ENDPOINT_URL; empty on local disk)."""
    endpoint = os.environ.get("AWS_ENDPOINT_URL")
    if not endpoint:
        return {}
    return {"s3.endpoint": endpoint, "s3.access-key-id": os.environ.get("AWS_ACCESS_KEY_ID", ""),
            "s3.secret-access-key": os.environ.get("AWS_SECRET_ACCESS_KEY", ""),
            "s3.region": os.environ.get("AWS_REGION", "us-east-1")}


class IcebergFormat(SqlMergeVerbs, TableFormat):
    family = "iceberg"
    modes = tuple(MODES)
    catalog = CATALOG  # JDBC_CATALOG once ``several_writers`` moved the adapter there
    # the commit-time validations of Iceberg 1.10.2 (MergingSnapshotProducer, BaseRowDelta, SparkCopyOnWriteScan)
    failure_causes = (
        (r"Found conflicting files that can contain records", "another commit added rows its statement matches", None),
        (r"Found new conflicting delete files", "another commit deleted rows its statement matches", None),
        (r"Found conflicting deleted files", "another commit removed files its statement read", None),
        (r"Found concurrently added DV", "another commit added a deletion vector to the same file", None),
        (r"missing data files", "the files it deletes from were rewritten by a concurrent commit", None),
        (r"Runtime file filtering is not possible", "the table changed while its statement scanned", None),
        (r"Snapshot \d+ is not an ancestor of", "its starting snapshot was expired before it committed", HARNESS_EXPIRY),
        (r"CommitFailedException", "lost the catalog's compare-and-set", None),
    )

    @classmethod
    def spark_settings(cls, warehouse: Path) -> list[Setting]:
        return [
            Setting("spark", "spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions", DOC_SPARK),
            Setting("spark", f"spark.sql.catalog.{CATALOG}", "org.apache.iceberg.spark.SparkCatalog", DOC_SPARK),
            Setting("spark", f"spark.sql.catalog.{CATALOG}.type", "hadoop", DOC_SPARK),
            Setting("spark", f"spark.sql.catalog.{CATALOG}.warehouse", str(cls.catalog_warehouse(warehouse)), DOC_SPARK),
            # the harness deletes table directories itself; a cached table would outlive them
            Setting("spark", f"spark.sql.catalog.{CATALOG}.cache-enabled", "false", DOC_SPARK),
        ]

    @staticmethod
    def catalog_warehouse(warehouse: Path | str) -> str:
        return f"{str(warehouse).rstrip('/')}/iceberg"

    def table_settings(self) -> list[Setting]:
        version, row_mode = MODES[self.mode]
        tp = TableProperties
        return [
            Setting("table", tp.FORMAT_VERSION, version, DOC_SPEC if version == "3" else DOC_TABLE),
            Setting("table", tp.UPDATE_MODE, row_mode, DOC_TABLE),
            Setting("table", tp.DELETE_MODE, row_mode, DOC_TABLE),
            Setting("table", tp.MERGE_MODE, row_mode, DOC_TABLE),
            Setting("table", tp.TARGET_FILE_SIZE_BYTES, str(self.target_file_bytes), DOC_TABLE),
            Setting("table", tp.PARQUET_COMPRESSION, "snappy", DOC_TABLE),
            # initial load only: keep one output file per input file (the base layout)
            Setting("write", "distribution-mode", "none", DOC_WRITE_OPTIONS),
            Setting("write", "fanout-enabled", "true", DOC_WRITE_OPTIONS),
        ]

    def _ident(self, name: str) -> str:
        return f"{self.catalog}.{NAMESPACE}.{name}"

    def location(self, name: str) -> str:
        if self.catalog == JDBC_CATALOG:  # JdbcCatalog's default location: <warehouse>/<namespace>/<table>
            return f"{self.warehouse}/iceberg_jdbc/{NAMESPACE}/{name}"
        return f"{self.catalog_warehouse(self.warehouse)}/{NAMESPACE}/{name}"

    jdbc_catalog = True

    def coordinator(self, coordination: Any) -> Coordinator:
        return Coordinator(catalog=coordination.catalog().iceberg_properties())

    def several_writers(self, coordinator: Coordinator, control: str = DEFAULT_CONTROL,
                        inline_clean: bool = True, heartbeat_ms: int = 0) -> list[Setting]:
        """The JDBC catalog (on the run's PostgreSQL): Spark settings of a catalog named ``cowmor_jdbc``."""
        super().several_writers(coordinator, control, inline_clean, heartbeat_ms)
        if coordinator.catalog is None:
            raise NotSupported(f"{self.config_id}: several applications need a shared catalog (PostgreSQL for the JDBC catalog)")
        self.catalog = JDBC_CATALOG
        prefix = f"spark.sql.catalog.{JDBC_CATALOG}"
        props = {**coordinator.catalog, "warehouse": f"{self.warehouse}/iceberg_jdbc", "cache-enabled": "false"}
        return [Setting("spark", prefix, "org.apache.iceberg.spark.SparkCatalog", DOC_SPARK)] + \
            [Setting("spark", f"{prefix}.{k}", v, DOC_JDBC) for k, v in props.items()]

    def drop(self, spark: SparkSession, name: str) -> None:
        """The JDBC catalog's row for the table (its folder is the workspace's to delete); the Hadoop catalog keeps
        nothing outside the folder."""
        if self.catalog == JDBC_CATALOG:
            spark.sql(f"DROP TABLE IF EXISTS {self._ident(name)}")

    def table_service(self, spark: SparkSession, table: TableRef, expire_before: float | None = None) -> str:
        """Merge-on-read: the compaction (``compact``). Copy-on-write: ``rewrite_data_files`` with its defaults (bin-pack
        the small files). Then ``expire_snapshots`` of the snapshots older than ``expire_before`` (the race's start:
        the table as it was made, whose files a compaction has replaced are deleted; the race's own snapshots stay
        for the history check). Its default (older than 5 days) would expire nothing in a race of minutes."""
        if self.merges_on_read:
            self.compact(spark, table)
            ran = "rewrite_data_files + rewrite_position_delete_files" if MODES[self.mode][0] == "2" else "rewrite_data_files"
        else:
            spark.sql(f"CALL {self.catalog}.system.rewrite_data_files(table => '{NAMESPACE}.{table.name}')")
            ran = "rewrite_data_files (bin-pack)"
        if expire_before is None:
            return ran
        older_than = datetime.fromtimestamp(expire_before, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        spark.sql(f"CALL {self.catalog}.system.expire_snapshots(table => '{NAMESPACE}.{table.name}', "
                  f"older_than => TIMESTAMP '{older_than}Z', retain_last => 1)")
        return f"{ran} + expire_snapshots"

    def history(self, spark: SparkSession, table: TableRef) -> list[HistoryEntry]:
        """The ``snapshots`` metadata table, oldest first; a rewrite (``replace``) is the table service's."""
        rows = spark.sql(f"SELECT snapshot_id, parent_id, operation FROM {self._ident(table.name)}.snapshots "
                         "ORDER BY committed_at, snapshot_id").collect()
        return [HistoryEntry(str(r["snapshot_id"]), None if r["parent_id"] is None else str(r["parent_id"]),
                             r["operation"], r["operation"] != "replace") for r in rows]

    def attempt_landed(self, spark: SparkSession, table: TableRef, label: str, since: float,
                       own_application: bool) -> bool | None:
        """Iceberg 1.10.2's SQL cannot label a commit (session snapshot properties reach Spark 3.5 only later), but
        every snapshot's summary carries ``spark.app.id``: where this writer is its application's only one, a
        snapshot of this application committed since the attempt began is the attempt's. None where threads of one
        application share the id."""
        if not own_application:
            return None
        app = spark.sparkContext.applicationId
        return spark.sql(f"SELECT COUNT(*) FROM {self._ident(table.name)}.snapshots WHERE summary['spark.app.id'] = "
                         f"'{app}' AND unix_millis(committed_at) >= {int(since * 1000)}").collect()[0][0] > 0

    def current_metadata(self, spark: SparkSession, table: TableRef) -> str:
        """The table's current metadata file (a JDBC table has no ``version-hint.text`` for other engines to follow)."""
        return spark.sql(f"SELECT file FROM {self._ident(table.name)}.metadata_log_entries "
                         "ORDER BY timestamp DESC LIMIT 1").collect()[0][0]

    def create(self, spark: SparkSession, name: str, data: DataFrame, *, key: str, partition_by: str,
               ordering: str) -> TableRef:
        settings = self.table_settings()
        props = ", ".join(f"'{s.key}'='{s.value}'" for s in settings if s.scope == "table")
        ddl = data._jdf.schema().toDDL()
        if self.catalog == JDBC_CATALOG:  # a JDBC catalog creates tables only in a namespace it knows
            spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {self.catalog}.{NAMESPACE}")
        spark.sql(f"CREATE TABLE {self._ident(name)} ({ddl}) USING iceberg PARTITIONED BY ({partition_by}) "
                  f"TBLPROPERTIES ({props})")
        writer = data.writeTo(self._ident(name))
        for s in settings:
            if s.scope == "write":
                writer = writer.option(s.key, s.value)
        with one_task_per_input_file(spark):
            writer.append()
        return TableRef(name, self.location(name), key, partition_by, ordering)

    def sql_name(self, table: TableRef) -> str:
        return self._ident(table.name)

    def concurrency_settings(self) -> list[Setting]:
        """Iceberg's defaults, left as they are: serializable MERGE, and 4 automatic retries of a commit that lost
        a race on the metadata pointer (a data conflict is not retried: it fails the operation)."""
        return [Setting("concurrency", "write.merge.isolation-level", "serializable (default)", DOC_TABLE),
                Setting("concurrency", "commit.retry.num-retries", "4 (default)", DOC_TABLE)]

    def compact(self, spark: SparkSession, table: TableRef) -> None:
        """Rewrite the data files that carry deletes; on v2 also drop the now-dangling delete files.

        ``delete-file-threshold=1`` selects every file with at least one delete; ``min-file-size-bytes=0``
        keeps small-but-clean files out, so the work is the deletes' and comparable to Hudi's compaction
        and Delta's REORG PURGE. On v3 the DVs are removed in the same commit (shared/DESIGN.md).
        """
        if not self.merges_on_read:
            super().compact(spark, table)
        name = f"{NAMESPACE}.{table.name}"
        spark.sql(f"CALL {self.catalog}.system.rewrite_data_files(table => '{name}', "
                  "options => map('delete-file-threshold', '1', 'min-file-size-bytes', '0'))")
        if MODES[self.mode][0] == "2":
            spark.sql(f"CALL {self.catalog}.system.rewrite_position_delete_files(table => '{name}', "
                      "options => map('rewrite-all', 'true'))")

    def relation(self, spark: SparkSession, table: TableRef, mode: str = "snapshot") -> str:
        self.check_read_mode(mode)
        return self._ident(table.name)

    def commit_marker(self, table: TableRef) -> object:
        from pyiceberg.table import StaticTable

        snapshot = StaticTable.from_metadata(str(table.location), _io_properties()).current_snapshot()
        return snapshot.snapshot_id if snapshot else None

    def describe_commits(self, table: TableRef, since: object) -> CommitInfo:
        """Snapshot summaries after ``since``, read with pyiceberg (Python, not Spark)."""
        from pyiceberg.table import StaticTable

        metadata = StaticTable.from_metadata(str(table.location), _io_properties()).metadata
        by_id = {s.snapshot_id: s for s in metadata.snapshots}
        chain, snapshot_id = [], metadata.current_snapshot_id
        while snapshot_id is not None and snapshot_id != since:
            chain.append(by_id[snapshot_id])
            snapshot_id = by_id[snapshot_id].parent_snapshot_id
        total = CommitInfo(operation="")
        for snapshot in reversed(chain):
            total.add(self._summary_commit(snapshot))
        return total

    def _summary_commit(self, snapshot) -> CommitInfo:
        summary = dict(snapshot.summary.additional_properties) | {"operation": snapshot.summary.operation.value}

        def num(key: str) -> int:
            return int(summary.get(key, 0))

        # CoW rewrites whole files, so Iceberg does not say how many rows changed; MoR/DV record one
        # position delete per changed row (a DV's cardinality counts the same way).
        changed = num("added-position-deletes") if "added-position-deletes" in summary else None
        return CommitInfo(
            operation=summary["operation"],
            data_files_added=num("added-data-files"), data_files_removed=num("deleted-data-files"),
            delete_files_added=num("added-delete-files"), delete_files_removed=num("removed-delete-files"),
            bytes_added=num("added-files-size"), bytes_removed=num("removed-files-size"),
            rows_changed=changed, commits=1, raw=[summary])

    def live_files(self, spark: SparkSession, table: TableRef) -> dict[str, int]:
        """Live data and delete files by count, from the ``files`` metadata table."""
        rows = spark.sql(f"SELECT content, COUNT(*) AS n FROM {self._ident(table.name)}.files GROUP BY content").collect()
        counts = {int(r["content"]): int(r["n"]) for r in rows}
        return {"data_files": counts.get(0, 0), "delete_files": counts.get(1, 0) + counts.get(2, 0)}

    def classify(self, relpath: str) -> str:
        if relpath.startswith("metadata/"):
            return METADATA
        name = relpath.rsplit("/", 1)[-1]
        if name.endswith(".puffin") or "-deletes" in name:
            return DELETE
        return DATA


ADAPTER = IcebergFormat
