"""Delta Lake: copy-on-write (deletion vectors off) and deletion vectors on."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bench.formats import delta_log
from bench.formats.base import (
    DATA,
    DELETE,
    METADATA,
    CommitInfo,
    HistoryEntry,
    Setting,
    SqlMergeVerbs,
    TableFormat,
    TableRef,
    key_equalities,
    key_in_lists,
)
from bench.formats.loading import in_source_order, one_task_per_input_file

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

DOC_SETUP = "https://docs.delta.io/3.3.2/delta-batch.html#configure-sparksession"
DOC_DV = "https://docs.delta.io/3.3.2/delta-deletion-vectors.html"
DOC_OPTIMIZE = "https://docs.delta.io/3.3.2/optimizations-oss.html"
DOC_PROPERTIES = "https://docs.delta.io/3.3.2/table-properties.html"


class TableProperties:
    ENABLE_DELETION_VECTORS = "delta.enableDeletionVectors"
    # Delta 3.3 has no delta.targetFileSize; OPTIMIZE's target is this SQL conf (shared/DESIGN.md)
    OPTIMIZE_MAX_FILE_SIZE = "spark.databricks.delta.optimize.maxFileSize"


USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"  # docs.delta.io 3.3.2, "Set user-defined commit metadata"
MODES = {"cow": "false", "dv": "true"}
# operationMetrics that count changed rows: UPDATE, DELETE, and MERGE's target-row counters
ROW_METRICS = ("numUpdatedRows", "numDeletedRows", "numTargetRowsUpdated", "numTargetRowsDeleted", "numTargetRowsInserted")


def _rows_updated(metrics: dict) -> int | None:
    """The rows an UPDATE or MERGE commit reports it updated (``commitInfo.operationMetrics``); None: not reported."""
    for key in ("numUpdatedRows", "numTargetRowsUpdated"):
        if key in metrics:
            return int(metrics[key])
    return None


class DeltaFormat(SqlMergeVerbs, TableFormat):
    labels_commits = True  # label_commits: the commit's own metadata carries the label
    family = "delta"
    modes = tuple(MODES)
    # Delta 3.3.2's conflict checker (ConflictChecker), by its exception classes
    failure_causes = (
        (r"ConcurrentAppendException", "another commit added files where its statement read", None),
        (r"ConcurrentDeleteReadException", "another commit removed files its statement read", None),
        (r"ConcurrentDeleteDeleteException", "another commit removed the files it removes", None),
        (r"io\.delta\.exceptions\.(?P<name>\w+)Exception", "conflict ({name})", None),
    )

    @classmethod
    def spark_settings(cls, warehouse: Path) -> list[Setting]:
        return [
            Setting("spark", "spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension", DOC_SETUP),
            Setting("spark", "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog", DOC_SETUP),
        ]

    def table_settings(self) -> list[Setting]:
        return [
            Setting("table", TableProperties.ENABLE_DELETION_VECTORS, MODES[self.mode], DOC_DV),
            Setting("session", TableProperties.OPTIMIZE_MAX_FILE_SIZE, str(self.target_file_bytes), DOC_OPTIMIZE),
            Setting("session", "spark.sql.parquet.compression.codec", "snappy", DOC_PROPERTIES),
        ]

    def location(self, name: str) -> str:
        return f"{self.warehouse}/delta/{self.config_id}/{name}"  # one path per configuration: a path never reused

    @staticmethod
    def _ident(table: TableRef) -> str:
        return f"delta.`{table.location}`"

    def create(self, spark: SparkSession, name: str, data: DataFrame, *, key: str, partition_by: str,
               ordering: str) -> TableRef:
        table = TableRef(name, self.location(name), key, partition_by, ordering)
        self._session_settings(spark)
        props = ", ".join(f"'{s.key}'='{s.value}'" for s in self.table_settings() if s.scope == "table")
        spark.sql(f"CREATE TABLE {self._ident(table)} ({data._jdf.schema().toDDL()}) USING delta "
                  f"PARTITIONED BY ({partition_by}) TBLPROPERTIES ({props})")
        with one_task_per_input_file(spark):
            in_source_order(data, partition_by).write.format("delta").mode("append").save(str(table.location))
        return table

    def _session_settings(self, spark: SparkSession) -> None:
        """The settings Delta reads from the session, not the table (OPTIMIZE's file size): in every application."""
        for s in self.table_settings():
            if s.scope == "session":
                spark.conf.set(s.key, s.value)

    def attach(self, spark: SparkSession, table: TableRef) -> None:
        """A table another application created (or a restored saved copy): this session's share of its settings."""
        self._session_settings(spark)

    def forget_cached_state(self, spark: SparkSession, table: TableRef | None = None) -> None:
        """Delta caches each table's log (``DeltaLog``) by path; a restored folder has an older log than the cache."""
        spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()

    def sql_name(self, table: TableRef) -> str:
        return self._ident(table)

    def pruning_predicate(self, key: str, keys: tuple[int, ...]) -> str:
        """An OR of equalities: Delta 3.3.2 skips files per disjunct, but tests an IN list as the single range from its
        smallest to its largest value (``constructLiteralInListDataFilters``), which scattered keys cover. The same keys
        as an IN list go first: Spark tests each row against it by hash and stops there for every row but the changed
        ones, where the OR alone costs a comparison per key per row (1,200 keys: 21 s for 2 million rows on 2 cores,
        against 0.5 s with the IN list first). Skipping is the OR's either way: a file must pass both."""
        return f"{key_in_lists(key, keys, len(keys) or 1)} AND {key_equalities(key, keys)}"  # one IN list

    def concurrency_settings(self) -> list[Setting]:
        """Delta's optimistic concurrency: OSS 3.3.2's ``delta.isolationLevel`` defaults to, and accepts only,
        ``Serializable`` (``DeltaConfig.scala``; WriteSerializable is Databricks-only); a losing commit raises a
        ConcurrentModificationException subclass and is not retried by Delta."""
        return [Setting("concurrency", "delta.isolationLevel", "Serializable (default; the only level OSS 3.3.2 accepts)",
                        "https://github.com/delta-io/delta/blob/v3.3.2/spark/src/main/scala/org/apache/spark/sql/delta/DeltaConfig.scala")]

    def processes_unsupported(self) -> str | None:
        return ("Delta 3.3.2 has no multi-driver commit coordination that works here: on a local file system its docs "
                "warn against concurrent writers from several drivers, S3 allows a single driver, and the DynamoDB log store "
                "takes no endpoint; its writers race inside one Spark application, where its lock holds")

    def table_service(self, spark: SparkSession, table: TableRef, expire_before: float | None = None) -> str:
        """Deletion vectors: REORG … APPLY (PURGE) (``compact``); copy-on-write: OPTIMIZE (bin-pack small files).
        VACUUM is not raced: Delta 3.3.2 rounds ``RETAIN n HOURS`` to whole hours (``VacuumCommand``, line 243), so in
        a race of minutes VACUUM removes nothing (1 hour or more) or is ``RETAIN 0 HOURS``, which deletes files of
        writes not yet committed and which Delta's retention check refuses for that reason."""
        if self.merges_on_read:
            self.compact(spark, table)
            return "REORG PURGE"
        spark.sql(f"OPTIMIZE {self._ident(table)}")
        return "OPTIMIZE"

    def history(self, spark: SparkSession, table: TableRef) -> list[HistoryEntry]:
        """Every commit in ``_delta_log``; an OPTIMIZE or a REORG is the table service's."""
        return [HistoryEntry(str(c.version), str(c.version - 1) if c.version else None, c.operation or "",
                             (c.operation or "") not in ("OPTIMIZE", "REORG"), label=c.user_metadata,
                             completed_at=c.timestamp_ms / 1000 if c.timestamp_ms else None,
                             rows_changed=_rows_updated(c.operation_metrics), isolation=c.isolation_level)
                for c in delta_log.commits_since(table.location, None)]

    def label_commits(self, spark: SparkSession, label: str) -> None:
        """The session's ``spark.databricks.delta.commitInfo.userMetadata`` lands in each commit's ``commitInfo``."""
        spark.conf.set(USER_METADATA, label)

    def compact(self, spark: SparkSession, table: TableRef) -> None:
        """REORG … APPLY (PURGE): rewrite the files that carry deletion vectors (OPTIMIZE alone would bin-pack)."""
        if not self.merges_on_read:
            super().compact(spark, table)
        spark.sql(f"REORG TABLE {self._ident(table)} APPLY (PURGE)")

    def relation(self, spark: SparkSession, table: TableRef, mode: str = "snapshot") -> str:
        self.check_read_mode(mode)
        return self._ident(table)

    def commit_marker(self, table: TableRef) -> object:
        return delta_log.latest_version(table.location)

    def describe_commits(self, table: TableRef, since: object) -> CommitInfo:
        total = CommitInfo(operation="")
        for c in delta_log.commits_since(table.location, since):
            metrics = c.operation_metrics
            counted = [k for k in ROW_METRICS if k in metrics]
            changed = sum(int(metrics[k]) for k in counted) if counted else None
            total.add(CommitInfo(
                operation=c.operation or "", data_files_added=c.files_added, data_files_removed=c.files_removed,
                delete_files_added=c.dvs_added, delete_files_removed=c.dvs_removed,
                bytes_added=c.bytes_added + c.dv_bytes_added, bytes_removed=c.bytes_removed,
                rows_changed=changed, commits=1, raw=[c.as_dict()]))
        return total

    def live_files(self, spark: SparkSession, table: TableRef) -> dict[str, int]:
        return delta_log.live_files(table.location)

    def classify(self, relpath: str) -> str:
        if relpath.startswith("_delta_log/"):
            return METADATA
        name = relpath.rsplit("/", 1)[-1]
        if name.startswith("deletion_vector_") and name.endswith(".bin"):
            return DELETE
        return DATA if name.endswith(".parquet") else METADATA


ADAPTER = DeltaFormat
