"""Apache Hudi: COPY_ON_WRITE and MERGE_ON_READ (snapshot and read-optimized reads, explicit compaction)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.core.failures import HEARTBEAT_EXPIRY, TABLE_SERVICE, WRITE_CONFLICT
from bench.exceptions import NotSupported
from bench.formats import hudi_locks, hudi_timeline
from bench.formats.base import (
    DATA,
    DEFAULT_CONTROL,
    INDEX,
    LOG,
    METADATA,
    NBCC,
    PRUNED,
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

# Hudi 1.1.1: the docs site's current pages, and the config definitions at the release tag (the authority
# where a key was renamed in 1.1, e.g. the ordering field).
DOC_QUICKSTART = "https://hudi.apache.org/docs/quick-start-guide"
# a writer's heartbeat: Hudi 1.1.1's defaults (HoodieWriteConfig: 60 s, 2 misses tolerated before its instant may go)
HEARTBEAT_MS, HEARTBEAT_TOLERABLE_MISSES = 60_000, 2
DOC_CONFIG = "https://hudi.apache.org/docs/configurations"
DOC_COMPACTION = "https://hudi.apache.org/docs/compaction"
DOC_PROCEDURES = "https://hudi.apache.org/docs/procedures#run_compaction"
SRC = "https://github.com/apache/hudi/blob/release-1.1.1/"
SRC_INDEX_CONFIG = SRC + "hudi-client/hudi-client-common/src/main/java/org/apache/hudi/config/HoodieIndexConfig.java"
SRC_MERGER = SRC + "hudi-client/hudi-spark-client/src/main/java/org/apache/hudi/DefaultSparkRecordMerger.java"
SRC_DATASOURCE = SRC + "hudi-spark-datasource/hudi-spark-common/src/main/scala/org/apache/hudi/DataSourceOptions.scala"
SRC_STORAGE_CONFIG = SRC + "hudi-common/src/main/java/org/apache/hudi/common/config/HoodieStorageConfig.java"
SRC_METADATA_CONFIG = SRC + "hudi-common/src/main/java/org/apache/hudi/common/config/HoodieMetadataConfig.java"
DOC_INDEXES = "https://hudi.apache.org/docs/indexes"
DOC_CONCURRENCY = "https://hudi.apache.org/docs/concurrency_control"
SRC_ZK_PROVIDER = SRC + ("hudi-client/hudi-client-common/src/main/java/org/apache/hudi/client/transaction/lock/"
                         "BaseZookeeperBasedLockProvider.java")
SRC_LOCK_CONFIG = SRC + "hudi-common/src/main/java/org/apache/hudi/common/config/LockConfiguration.java"
SRC_CLEAN_CONFIG = SRC + "hudi-client/hudi-client-common/src/main/java/org/apache/hudi/config/HoodieCleanConfig.java"
COMMIT_LABEL = "_cowmor.batch"  # the commit-metadata prefix's default, then a name of ours
SRC_WRITE_CONFIG = SRC + "hudi-client/hudi-client-common/src/main/java/org/apache/hudi/config/HoodieWriteConfig.java"
# what a writer's commit is on the timeline (a compaction completes as a ``commit`` too: told apart by its plan)
WRITER_ACTIONS = ("commit", "deltacommit")
HISTORY_READS, HISTORY_REREAD_S = 5, 0.2  # reads of a timeline that other applications archive meanwhile


class WriteOptions:
    """Hudi datasource/write-client keys, as Hudi 1.1.1 names them.

    1.1 renamed the ordering (precombine) field to ``hoodie.table.ordering.fields``; the old
    ``hoodie.datasource.write.precombine.field`` is deprecated and only an alternative key.
    """

    TABLE_NAME = "hoodie.table.name"
    TABLE_TYPE = "hoodie.datasource.write.table.type"
    RECORD_KEY = "hoodie.datasource.write.recordkey.field"
    PARTITION_PATH = "hoodie.datasource.write.partitionpath.field"
    ORDERING = "hoodie.table.ordering.fields"
    MERGE_MODE = "hoodie.write.record.merge.mode"
    OPERATION = "hoodie.datasource.write.operation"
    QUERY_TYPE = "hoodie.datasource.query.type"


MODES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}


def _written_by(metadata: dict[str, Any]) -> dict[str, Any]:
    """A writer commit's label (``label_commits``), how many files it wrote, the file groups they belong to, and the
    rows it updated (``numUpdateWrites`` over its write stats), from its commit metadata."""
    stats = hudi_timeline.write_stats(metadata)
    return {"label": (metadata.get("extraMetadata") or {}).get(COMMIT_LABEL), "files_written": len(stats),
            "rows_changed": sum(int(s.get("numUpdateWrites") or 0) for s in stats),
            "file_groups": tuple(sorted({f"{s['partition']}/{s.get('fileId')}" for s in stats}))}


class HudiFormat(SqlMergeVerbs, TableFormat):
    """Updates are Hudi's SQL ``UPDATE``, upserts and deletes ``MERGE INTO`` (as for Iceberg and Delta), on a catalog
    table over the table's path. Hudi's SQL DML writes "prepped" records (the matched rows carry their file location in the
    meta columns), so no index lookup runs; at ``small`` the datasource upsert with the SIMPLE index spent ~12 of
    its ~35 s joining the incoming keys with every base file's keys (README, "How each format writes")."""

    labels_commits = True  # label_commits: the commit's own metadata carries the label

    family = "hudi"
    modes = tuple(MODES)
    # Hudi 1.1.1: OCC's conflict check names the other instant; the rest come from table services (a writer's lazy
    # rollback of a failed write and inline clean, the service's clean) running the same instant at once, and from
    # the metadata table
    failure_causes = (
        # the concurrent action names the kind where only one side makes it: a MERGE_ON_READ writer's deltacommit, a
        # service's compaction, clean or clustering (replacecommit); a `commit` is a copy-on-write writer's or a
        # MERGE_ON_READ compaction's, so the race decides it by what committed meanwhile
        (r"overlapping writes .*second operation = \{actionType=(?P<action>deltacommit)", "overlapping write with a concurrent {action}",
         WRITE_CONFLICT),
        (r"overlapping writes .*second operation = \{actionType=(?P<action>compaction|logcompaction|clean|replacecommit|clustering)",
         "overlapping write with a concurrent {action}", TABLE_SERVICE),
        (r"overlapping writes .*second operation = \{actionType=(?P<action>\w+)", "overlapping write with a concurrent {action}", None),
        # HeartbeatUtils.abortIfHeartbeatExpired: the writer's instant outlived its heartbeat (LAZY failed-writes policy)
        (r"Heartbeat for instant \d+ has expired", "its heartbeat expired before it committed", HEARTBEAT_EXPIRY),
        # a clean's lazy rollback (the service's, or a writer's own clean after its commit) racing another one
        (r"HoodieRollbackException", "another application rolled back the same failed write", TABLE_SERVICE),
        (r"FileAlreadyExists.*\.hoodie/timeline/\d+\.(?P<action>clean|rollback|compaction|replacecommit)\.",
         "another application ran the same {action} instant", TABLE_SERVICE),
        (r"FileAlreadyExists.*\.hoodie/timeline/\d+\.(?P<action>[a-z]+)\.", "another application ran the same {action} instant",
         None),
        (r"FileNotFoundException.*\.hoodie/metadata/", "a metadata-table file it read was gone", None),
    )
    # the metadata table (files, column stats, ... partitions) is itself a MoR table written on every commit
    parts = {".hoodie/metadata/": "metadata_table"}

    @property
    def read_modes(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("snapshot", "read_optimized") if self.mode == "mor" else ("snapshot",)

    @classmethod
    def spark_settings(cls, warehouse: Path) -> list[Setting]:
        return [
            Setting("spark", "spark.serializer", "org.apache.spark.serializer.KryoSerializer", DOC_QUICKSTART),
            Setting("spark", "spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar", DOC_QUICKSTART),
            Setting("spark", "spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension", DOC_QUICKSTART),
            Setting("spark", "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog", DOC_QUICKSTART),
        ]

    def table_settings(self) -> list[Setting]:
        w = WriteOptions
        s = [
            Setting("write", w.TABLE_TYPE, MODES[self.mode], DOC_CONFIG),
            # the default once an ordering field is set; on equal ordering values the incoming record wins
            # (DefaultSparkRecordMerger keeps the older one only if its value is strictly greater)
            Setting("write", w.MERGE_MODE, "EVENT_TIME_ORDERING", SRC_MERGER),
            Setting("write", "hoodie.datasource.write.keygenerator.class", "org.apache.hudi.keygen.SimpleKeyGenerator", DOC_CONFIG),
            Setting("write", "hoodie.datasource.write.hive_style_partitioning", "true", DOC_CONFIG),
            Setting("write", "hoodie.parquet.max.file.size", str(self.target_file_bytes), DOC_CONFIG),
            Setting("write", "hoodie.parquet.small.file.limit", str(100 * 1024 * 1024), DOC_CONFIG),  # Hudi's default, explicit
            Setting("write", "hoodie.parquet.compression.codec", "snappy", DOC_CONFIG),
            Setting("write", "hoodie.index.type", "SIMPLE", SRC_INDEX_CONFIG),  # Spark's default in 1.1.1, explicit
            # the default: MERGE INTO / UPDATE / DELETE write prepped records (no index lookup)
            Setting("write", "hoodie.spark.sql.optimized.writes.enable", "true", SRC_DATASOURCE),
            # the default, explicit: a ~430 KB bloom filter in every base file's footer (60000 entries, fpp 1e-9);
            # kept because it is what a Hudi table carries for its bloom index, and reported as its own write cost
            Setting("write", "hoodie.parquet.bloom.filter.enabled", "true", SRC_STORAGE_CONFIG),
            Setting("write", "hoodie.metadata.enable", "true", DOC_CONFIG),
            Setting("write", "hoodie.populate.meta.fields", "true", DOC_CONFIG),
            Setting("write", "hoodie.bulkinsert.sort.mode", "NONE", DOC_CONFIG),  # keep the base layout
            # several writers may leave the clean to the table service (``several_writers``)
            Setting("write", "hoodie.clean.automatic", "true" if self.cleans_after_commit else "false", DOC_CONFIG),
        ]
        if self.mode == "mor":
            # batch MoR writes turn inline compaction ON unless told otherwise (shared/DESIGN.md)
            s.append(Setting("write", "hoodie.compact.inline", "false", DOC_COMPACTION))
            s.append(Setting("compaction", "hoodie.compact.inline.max.delta.commits", "1", DOC_COMPACTION))
        chosen = self.route_settings() + self.control_settings()
        routed = {r.key for r in chosen}
        return [x for x in s if x.key not in routed] + chosen

    def control_settings(self) -> list[Setting]:
        """NBCC's table: the simple bucket index (a key's file group is its hash; NBCC needs it), one bucket per
        base file of a day, hashed on the key (shared/DESIGN.md, "Several writers")."""
        if self.control != NBCC:
            return []
        return [Setting("write", "hoodie.index.type", "BUCKET", SRC_INDEX_CONFIG),
                Setting("write", "hoodie.index.bucket.engine", "SIMPLE", SRC_INDEX_CONFIG),
                Setting("write", "hoodie.bucket.index.hash.field", "txn_id", SRC_INDEX_CONFIG),
                Setting("write", "hoodie.bucket.index.num.buckets", str(self.buckets), SRC_INDEX_CONFIG)]

    @property
    def buckets(self) -> int:
        """NBCC's bucket count: one per file of a day (``shape_like``), else 4 (Hudi's own default is 256).

        Every application that reads the table must be told it: Hudi prunes by the reader's count, not the
        table's (docs/several-writers.md)."""
        return self.files_per_partition or 4

    def table_name(self, name: str) -> str:
        """NBCC's bucket-indexed table is a table of its own, as a route's is."""
        return super().table_name(name) + ("_nbcc" if self.control == NBCC else "")

    def coordinator(self, coordination: Any) -> Coordinator:
        lock = coordination.lock()
        return Coordinator(zookeeper=(lock.host, lock.port))

    def failed_attempts_pending(self, spark: SparkSession, table: TableRef) -> bool:
        return any(e.by_writer and e.state != "COMPLETED" for e in self.history(spark, table))

    def several_writers(self, coordinator: Coordinator, control: str = DEFAULT_CONTROL,
                        inline_clean: bool = True, heartbeat_ms: int = 0) -> list[Setting]:
        """ZooKeeper's lock for optimistic concurrency control (OCC), or for non-blocking concurrency control (NBCC:
        MERGE_ON_READ with the simple bucket index); failed writes cleaned lazily, as several writers require; the
        writers' heartbeat Hudi's own (60 s, 2 misses tolerated) unless ``heartbeat_ms`` says otherwise (the stress
        variant's 2 s: a failed writer's instant is rolled back seconds later, and a slow live one may be too).

        Without ``inline_clean``, writers leave cleaning (and with it the lazy rollback of failed writes) to the one
        table service, as Hudi's maintainers advise for several jobs (HUDI-8143). A writer's clean after its commit
        (``BaseHoodieWriteClient.commitStats`` -> ``mayBeCleanAndArchive``, which rethrows) rolls back every failed
        instant whose heartbeat expired; two writers doing so at once race on the same instant, and the loser's
        statement fails ("Could not delete instant", "No pending rollback instants found") after its own commit
        completed, so a job that retries it applies its batch twice (docs/several-writers.md)."""
        if control not in (DEFAULT_CONTROL, NBCC):
            super().several_writers(coordinator, control, inline_clean, heartbeat_ms)
        if control == NBCC and self.mode != "mor":
            raise NotSupported(f"{self.config_id}: NBCC needs a MERGE_ON_READ table (Hudi's docs, concurrency control)")
        if coordinator.zookeeper is None:
            raise NotSupported(f"{self.config_id}: several applications need a lock they share (ZooKeeper)")
        self.control, self.cleans_after_commit, self.heartbeat_ms = control, inline_clean, heartbeat_ms
        host, port = coordinator.zookeeper
        mode = "NON_BLOCKING_CONCURRENCY_CONTROL" if control == NBCC else "OPTIMISTIC_CONCURRENCY_CONTROL"
        heartbeat = [Setting("concurrency", "hoodie.client.heartbeat.interval_in_ms", str(heartbeat_ms), SRC_WRITE_CONFIG),
                     Setting("concurrency", "hoodie.client.heartbeat.tolerable.misses", str(HEARTBEAT_TOLERABLE_MISSES),
                             SRC_WRITE_CONFIG)] \
            if heartbeat_ms else []
        return heartbeat + [
            Setting("concurrency", "hoodie.write.concurrency.mode", mode, SRC_WRITE_CONFIG),
            Setting("concurrency", "hoodie.write.lock.provider",
                    "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider", DOC_CONCURRENCY),
            # 1.1.1 connects to the url alone (BaseZookeeperBasedLockProvider: connectString(url)); the port key is kept
            # for older readers of the setting but is not used, so the url carries host:port
            Setting("concurrency", "hoodie.write.lock.zookeeper.url", f"{host}:{port}", SRC_ZK_PROVIDER),
            Setting("concurrency", "hoodie.write.lock.zookeeper.port", str(port), SRC_LOCK_CONFIG),
            Setting("concurrency", "hoodie.write.lock.zookeeper.base_path", "/cowmor_locks", SRC_LOCK_CONFIG),
            Setting("concurrency", "hoodie.write.lock.zookeeper.lock_key", self.config_id + "_" + control, SRC_LOCK_CONFIG),
            Setting("concurrency", "hoodie.clean.failed.writes.policy", "LAZY", SRC_CLEAN_CONFIG),
            Setting("concurrency", "hoodie.write.num.retries.on.conflict.failures", "0", SRC_WRITE_CONFIG),
            # recorded with the race; the table service cleans by its own call (run_clean) whatever this says
            Setting("concurrency", "hoodie.clean.automatic", "true" if self.cleans_after_commit else "false", SRC_CLEAN_CONFIG),
        ]

    def lock_waits(self, log: str) -> list[tuple[float, float]] | None:
        """ZooKeeper's lock, as its provider logs each request and grant (``hudi_locks``)."""
        return [(w.asked_at, w.held_at) for w in hudi_locks.lock_waits(log)]

    def attach(self, spark: SparkSession, table: TableRef) -> None:
        """The session-catalog table over the path, which Hudi's SQL DML needs in every application."""
        self._register(spark, table)

    def table_service(self, spark: SparkSession, table: TableRef, expire_before: float | None = None) -> str:
        """MERGE_ON_READ: compaction, then a clean; COPY_ON_WRITE: a clean (which also rolls back failed writes, lazily).
        The clean is Hudi's retention (its default policy keeps the file versions of the last 10 commits)."""
        ran = []
        self._sql_write_settings(spark)  # the table's index settings (NBCC's bucket index) reach the service too
        if self.control == NBCC:  # the bucket index checks its hash field against the record key, which the
            spark.conf.set(WriteOptions.RECORD_KEY, table.key)  # procedures' config lacks (validateBucketIndexConfig)
        if self.merges_on_read:
            self.compact(spark, table)
            ran.append("compaction")
        spark.sql(f"CALL run_clean(table => '{self.sql_name(table)}')")
        return " + ".join(ran + ["clean"])

    def see_other_writers(self, spark: SparkSession, table: TableRef) -> None:
        """``REFRESH TABLE``: Spark caches a Hudi table's relation (its file index) per session, and Hudi's UPDATE
        refreshes it only after a write of its own that succeeded (``UpdateHoodieTableCommand.run``). A writer retrying
        after a conflict otherwise reads the table as it was before the other writer's commit, and Hudi's conflict
        check cannot see that (its transaction begins after that commit): measured, an acknowledged update lost in
        each of 2 races at `small`, none with the session's relation cache off."""
        spark.catalog.refreshTable(self.sql_name(table))

    def label_commits(self, spark: SparkSession, label: str) -> None:
        """A session setting that starts with the commit-metadata prefix (``hoodie.datasource.write.commitmeta.key.prefix``,
        default ``_``) passes the SQL write's config filter (``HoodieSqlCommonUtils.filterHoodieConfigs``) into the
        commit's ``extraMetadata`` (``DataSourceUtils.getExtraMetadata``)."""
        spark.conf.set(COMMIT_LABEL, label)

    def history(self, spark: SparkSession, table: TableRef) -> list[HistoryEntry]:
        """The timeline's instants, archived and active, oldest first; a write that is not a compaction is a writer's.
        A completed writer's instant carries its label and its requested and completion times (the transaction Hudi's
        conflict check sees begins at the requested time). Read again where an instant listed on the active timeline
        was gone when read: other writers archive instants while this one reads (a writer crashed on it at `small`)."""
        for attempt in range(1, HISTORY_READS + 1):
            try:
                return timeline_history(table)
            except FileNotFoundError:
                if attempt == HISTORY_READS:
                    raise
                time.sleep(HISTORY_REREAD_S)
        raise AssertionError("unreachable")

    def route_settings(self) -> list[Setting]:
        """``pruned``: the key's min/max per file in the metadata table's column-stats index, which the SQL UPDATE's read
        skips files by (``hoodie.enable.data.skipping``, default true; handles ``In`` and ``InSet``). ``index``: the record
        index (key -> file group in the metadata table), which tags a MERGE's keys instead of joining every base file."""
        if self.route == PRUNED:
            return [Setting("write", "hoodie.metadata.index.column.stats.enable", "true", SRC_METADATA_CONFIG),
                    Setting("write", "hoodie.metadata.index.column.stats.column.list", "txn_id", SRC_METADATA_CONFIG),
                    Setting("write", "hoodie.enable.data.skipping", "true", SRC_DATASOURCE)]
        if self.route == INDEX:
            return [Setting("write", "hoodie.index.type", "RECORD_INDEX", SRC_INDEX_CONFIG),
                    Setting("write", "hoodie.metadata.record.index.enable", "true", SRC_METADATA_CONFIG)]
        return []

    def route_unsupported(self) -> str | None:
        return None  # join, pruned (column statistics) and index (the record index) all exist in Hudi

    def update_where(self, spark: SparkSession, table: TableRef, predicate: str, assignments: dict[str, str]) -> None:
        """Hudi's SQL ``UPDATE`` with literal keys: an optimized write reads the table with the WHERE clause, through the
        file index that skips files by the column-stats index."""
        self._sql_write_settings(spark)
        super().update_where(spark, table, predicate, assignments)

    def update_indexed(self, spark: SparkSession, table: TableRef, keys_view: str, assignments: dict[str, str]) -> None:
        """``MERGE INTO`` from the keys: not an optimized (prepped) write, so the record index tags the keys. Hudi's MERGE
        takes the ordering field from its source, and a MoR MERGE may read no target field on the right of an assignment
        (``MergeIntoHoodieTableCommand``: "Target table's field(…) cannot be the right-value of the update clause for
        MOR table"), so the source carries the rows (``Keys.ordered_view``) and the assignments read them from it:
        ``t.amount + 1`` becomes ``s.amount + 1``, the same value while the feed holds the table's current rows."""
        self._sql_write_settings(spark)
        from_source = {col: re.sub(r"\bt\.", "s.", expr) for col, expr in assignments.items()}
        sets = ", ".join(f"t.{col} = {expr}" for col, expr in {**from_source, table.ordering: f"s.{table.ordering}"}.items())
        super()._merge(spark, table, keys_view, f"WHEN MATCHED THEN UPDATE SET {sets}")

    def location(self, name: str) -> str:
        return f"{self.warehouse}/hudi/{name}"

    def _options(self, table: TableRef, operation: str) -> dict[str, str]:
        w = WriteOptions
        opts = {s.key: s.value for s in self.table_settings() if s.scope == "write"}
        return opts | {w.TABLE_NAME: table.name, w.RECORD_KEY: table.key, w.PARTITION_PATH: table.partition_by,
                       w.ORDERING: table.ordering, w.OPERATION: operation}

    def _write(self, table: TableRef, frame: DataFrame, operation: str, mode: str = "append") -> None:
        frame.write.format("hudi").options(**self._options(table, operation)).mode(mode).save(str(table.location))

    def create(self, spark: SparkSession, name: str, data: DataFrame, *, key: str, partition_by: str,
               ordering: str) -> TableRef:
        """``bulk_insert`` for the initial load (Hudi's default ``upsert`` would be an unfair bulk load)."""
        table = TableRef(name, self.location(name), key, partition_by, ordering)
        with one_task_per_input_file(spark):
            self._write(table, data, "bulk_insert", mode="overwrite")
        self._register(spark, table)
        return table

    def sql_name(self, table: TableRef) -> str:
        return f"cowmor_{table.name}"

    def _register(self, spark: SparkSession, table: TableRef) -> None:
        """A session-catalog table over the path (Hudi's SQL DML needs one; ``hudi.`path``` is not supported).

        External (LOCATION): dropping it never deletes the files."""
        spark.sql(f"DROP TABLE IF EXISTS {self.sql_name(table)}")
        spark.sql(f"CREATE TABLE {self.sql_name(table)} USING hudi LOCATION '{table.location}'")

    def _sql_write_settings(self, spark: SparkSession) -> None:
        """This configuration's write settings as Spark SQL confs: Hudi applies ``hoodie.*`` SQL confs to SQL writes
        (ProvidesHoodieConfig), so file size, codec and inline compaction match the datasource load."""
        settings = [s for s in self.table_settings() if s.scope in ("write", "compaction") and s.key != WriteOptions.TABLE_TYPE]
        for key in ROUTE_KEYS - {s.key for s in settings}:
            spark.conf.unset(key)  # another route's index or statistics must not leak into this table's writes
        for s in settings:
            spark.conf.set(s.key, s.value)

    def delete(self, spark: SparkSession, table: TableRef, keys_view: str) -> None:
        """Hudi's SQL ``DELETE … WHERE key IN (SELECT …)``. Hudi 1.1.1 takes a delete's write schema from the last commit,
        and a bulk load's commit carries none (HUDI-3989; fixed after 1.1.1 by apache/hudi#18030): there every delete
        fails ("content is null" in HoodieWriteHandle), so a table whose last commit is its bulk load first takes a
        no-op UPDATE of the same rows. (Tried: ``MERGE … WHEN MATCHED THEN DELETE`` committed and left MERGE_ON_READ rows
        in place.)"""
        writes = hudi_timeline.completed_writes(table.location)
        if writes and hudi_timeline.commit_metadata(writes[-1]).get("operationType") == "BULK_INSERT":
            self.update(spark, table, keys_view, {table.ordering: table.ordering})
        self._sql_write_settings(spark)
        spark.sql(f"DELETE FROM {self.sql_name(table)} WHERE {table.key} IN (SELECT {table.key} FROM {keys_view})")

    def _merge(self, spark: SparkSession, table: TableRef, source_view: str, action: str, also: str = "") -> None:
        self._sql_write_settings(spark)
        super()._merge(spark, table, source_view, action, also)

    def upsert_route_unsupported(self) -> str | None:
        """``pruned``: Hudi's MERGE accepts only record-key equalities in its ON condition (``MergeIntoHoodieTableCommand``:
        "Currently only equality predicates are supported in MERGE INTO statement on record key table"); its upsert
        finds the existing rows through its index, which is the ``index`` route."""
        if self.route == PRUNED:
            return ("Hudi's MERGE takes only the record-key equality in its ON condition, so an upsert cannot add literal "
                    "keys; its upsert finds rows through its index (route index)")
        return super().upsert_route_unsupported()

    def update(self, spark: SparkSession, table: TableRef, keys_view: str, assignments: dict[str, str]) -> None:
        """Hudi's SQL ``UPDATE``: its MERGE refuses a partial update that leaves out the ordering field, while
        UPDATE keeps the row's ordering value (on a tie the incoming record wins). Prepped: no index lookup."""
        self._sql_write_settings(spark)
        sets = ", ".join(f"{col} = {expr}" for col, expr in assignments.items())
        spark.sql(f"UPDATE {self.sql_name(table)} t SET {sets} "
                  f"WHERE t.{table.key} IN (SELECT {table.key} FROM {keys_view})")

    def forget_cached_state(self, spark: SparkSession, table: TableRef | None = None) -> None:
        """Spark caches a catalog table's relation (and Hudi its file index); re-read both after a restore."""
        if table is not None and spark.catalog.tableExists(self.sql_name(table)):
            spark.sql(f"REFRESH TABLE {self.sql_name(table)}")

    def upsert_if_newer(self, spark: SparkSession, table: TableRef, rows_view: str) -> None:
        """Not Hudi's strategy for late data: its upsert already orders two versions by the ordering field. (Tried
        here on 1.1.1: a MERGE with a matched condition on a MERGE_ON_READ table left every row at its old version.)"""
        raise NotSupported(f"{self.config_id}: Hudi orders versions by its ordering field ({table.ordering}) on every "
                           "upsert; the event-time guard is Iceberg's and Delta's strategy")

    def concurrency_settings(self) -> list[Setting]:
        """(One application: ``concurrent_compaction``.) Optimistic concurrency control with the in-process lock provider (writers and table services in one
        Spark application); failed writes are cleaned lazily, as OCC requires."""
        doc = "https://hudi.apache.org/docs/concurrency_control"
        return [Setting("concurrency", "hoodie.write.concurrency.mode", "optimistic_concurrency_control", doc),
                Setting("concurrency", "hoodie.write.lock.provider",
                        "org.apache.hudi.client.transaction.lock.InProcessLockProvider", doc),
                Setting("concurrency", "hoodie.clean.failed.writes.policy", "LAZY", SRC_CLEAN_CONFIG)]

    def compact(self, spark: SparkSession, table: TableRef) -> None:
        """Schedule and execute a compaction plan over every file slice with logs (MoR only)."""
        if not self.merges_on_read:
            super().compact(spark, table)
        for s in self.table_settings():
            if s.scope == "compaction":
                spark.conf.set(s.key, s.value)
        spark.sql(f"CALL run_compaction(op => 'scheduleandexecute', path => '{table.location}')")

    def _reader(self, spark: SparkSession, table: TableRef, mode: str) -> DataFrame:
        return spark.read.format("hudi").option(WriteOptions.QUERY_TYPE, mode).load(str(table.location))

    def relation(self, spark: SparkSession, table: TableRef, mode: str = "snapshot") -> str:
        self.check_read_mode(mode)
        view = f"{table.name}_{mode}"
        self._reader(spark, table, mode).createOrReplaceTempView(view)
        return view

    def commit_marker(self, table: TableRef) -> object:
        return hudi_timeline.latest_instant(table.location)

    def describe_commits(self, table: TableRef, since: object) -> CommitInfo:
        total = CommitInfo(operation="")
        for c in hudi_timeline.summaries_since(table.location, since):  # type: ignore[arg-type]
            total.add(CommitInfo(
                operation=("compaction" if c.is_compaction else c.action) + (f":{c.operation}" if c.operation else ""),
                data_files_added=c.base_files_written, data_files_removed=c.base_files_replaced,
                delete_files_added=c.log_files_written, delete_files_removed=c.log_files_compacted,
                bytes_added=c.bytes_written, bytes_removed=c.log_bytes_compacted,
                rows_changed=None if c.is_compaction else c.records_updated + c.records_deleted,
                commits=1, raw=[c.as_dict()]))
        return total

    def live_files(self, spark: SparkSession, table: TableRef) -> dict[str, int]:
        return hudi_timeline.live_files(table.location)

    def classify(self, relpath: str) -> str:
        name = relpath.rsplit("/", 1)[-1]
        if relpath.startswith(".hoodie/") or name == ".hoodie_partition_metadata" or name.startswith(".hoodie_partition_metadata"):
            return METADATA
        if ".log." in name:
            return LOG
        return DATA if name.endswith((".parquet", ".orc", ".hfile")) else METADATA


def timeline_history(table: TableRef) -> list[HistoryEntry]:
    """One read of a Hudi table's history (``HudiFormat.history``): the active timeline listed first, then the archive,
    so an instant archived in between is in one of them (its active file then fails to read, and ``HudiFormat.history``
    reads again)."""
    listed = hudi_timeline.instants(table.location)
    compactions = {i.requested for i in listed if i.action == "compaction"}  # a finished one's last state: commit
    latest = {i.requested: i for i in listed}  # sorted: each instant's last state wins
    entries = []
    for a in hudi_timeline.archived_instants(table.location):  # several writers fill the active timeline in minutes
        if a.requested in latest:
            continue
        by_writer = a.action in WRITER_ACTIONS and a.metadata.get("operationType") != "COMPACT"
        entries.append(HistoryEntry(a.requested, None, a.action, by_writer, "COMPLETED",
                                    began_at=hudi_timeline.epoch(a.requested),
                                    completed_at=hudi_timeline.epoch(a.completed),
                                    **(_written_by(a.metadata) if by_writer else {})))
    for i in latest.values():
        by_writer = i.action in WRITER_ACTIONS and i.requested not in compactions
        entries.append(HistoryEntry(i.requested, None, i.action, by_writer, i.state,
                                    began_at=hudi_timeline.epoch(i.requested),
                                    completed_at=hudi_timeline.epoch(i.completed),
                                    **(_written_by(hudi_timeline.commit_metadata(i))
                                       if by_writer and i.state == "COMPLETED" else {})))
    return entries


ROUTE_KEYS = {s.key for route in (PRUNED, INDEX) for s in HudiFormat("hudi-mor", "mor", "", 0, route).route_settings()}
ADAPTER = HudiFormat
