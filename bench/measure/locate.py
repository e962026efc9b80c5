"""What a statement read to find its rows: Spark's own SQL metrics of every scan it ran, and its tasks' input bytes.

Read from Spark's status store (the same numbers as the SQL tab of the UI, which need not be on) between two points:
every query Spark ran in between is the measured operation's. Per scan node it keeps the files it read (a file
source's "number of files read"; Iceberg's "number of file splits read", one per file below its 128 MB split size),
what planning skipped (Iceberg's "number of skipped data files", Delta MERGE's target files before/after skipping);
over the whole statement the bytes its tasks read (input metrics: columns actually read, metadata tables included).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# scan-node metric (as Spark names it) -> what the record calls it
FILES_READ = {"number of files read": "files_read", "number of file splits read": "files_read"}
PLANNED = {"number of result data files": "data_files_planned", "number of skipped data files": "data_files_skipped",
           "number of result delete files": "delete_files_planned",
           "total data file size (bytes)": "data_bytes_planned", "size of files read": "bytes_of_files_read"}
# Delta MERGE reports its file skipping on the command node
MERGE_SKIPPING = {"number of target files before skipping": "target_files_before_skipping",
                  "number of target files after skipping": "target_files_after_skipping",
                  "number of target bytes before skipping": "target_bytes_before_skipping",
                  "number of target bytes after skipping": "target_bytes_after_skipping"}
UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}


def metric_value(text: str | None) -> float | None:
    """A metric as Spark prints it: ``1,234``, ``58.0 KiB``, or several tasks' ``total (min, med, max …)\\n9.5 MiB (…)``."""
    if text is None:
        return None
    line = text.strip().splitlines()[-1] if "\n" in text.strip() else text.strip()
    parts = line.split()
    if not parts:
        return None
    try:
        number = float(parts[0].replace(",", ""))
    except ValueError:
        return None
    if len(parts) > 1 and parts[1] in UNITS:
        number *= UNITS[parts[1]]
    return number


def summarize(scans: list[dict[str, Any]], merges: list[dict[str, Any]], input_bytes: int, statements: int) -> dict[str, Any]:
    """One record of the locate step from its scan nodes (pure, for unit tests)."""
    total = {"statements": statements, "scans": scans, "files_read": int(sum(s.get("files_read", 0) for s in scans)),
             "largest_scan_files": int(max((s.get("files_read", 0) for s in scans), default=0)),
             "bytes_read": int(input_bytes)}
    skipped = [s["data_files_skipped"] for s in scans if "data_files_skipped" in s]
    if skipped:
        total["data_files_skipped"] = int(sum(skipped))
    for merge in merges:
        for key, value in merge.items():
            total[key] = int(total.get(key, 0) + value)
    return total


def full_scan(locate: dict[str, Any] | None, table_data_files: int, files_touched: int) -> bool | None:
    """Did the statement read every data file of the table in one scan, although fewer hold a changed row?
    None where it cannot tell (no metrics, or every file is touched anyway)."""
    if not locate or not locate.get("scans") or table_data_files <= files_touched:
        return None
    return locate["largest_scan_files"] >= table_data_files


@dataclass
class ScanWatch:
    """Spark's SQL executions from ``start()`` on; ``finish()`` sums what their scans read."""

    spark: SparkSession
    after_execution: int

    @classmethod
    def start(cls) -> ScanWatch | None:
        """None where no Spark session is active (an operation outside Spark)."""
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        if spark is None:
            return None
        watch = cls(spark, -1)
        watch._drain()
        watch.after_execution = max((e.executionId() for e in watch._executions()), default=-1)
        return watch

    def _seq(self, scala_seq: Any) -> list[Any]:
        return list(self.spark._jvm.scala.collection.JavaConverters.seqAsJavaListConverter(scala_seq).asJava())

    def _drain(self) -> None:
        """Spark's listener bus is asynchronous: wait until it has recorded every finished query."""
        self.spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()

    def _executions(self) -> list[Any]:
        return self._seq(self.spark._jsparkSession.sharedState().statusStore().executionsList())

    def finish(self) -> dict[str, Any]:
        self._drain()
        jvm = self.spark._jvm
        sql_store = self.spark._jsparkSession.sharedState().statusStore()
        app_store = self.spark.sparkContext._jsc.sc().statusStore()
        scans: list[dict[str, Any]] = []
        merges: list[dict[str, Any]] = []
        input_bytes, statements = 0, 0
        for execution in self._executions():
            execution_id = execution.executionId()
            if execution_id <= self.after_execution:
                continue
            statements += 1
            values = jvm.scala.collection.JavaConverters.mapAsJavaMapConverter(sql_store.executionMetrics(execution_id)).asJava()
            for node in self._seq(sql_store.planGraph(execution_id).allNodes()):
                scan: dict[str, Any] = {}
                merge: dict[str, Any] = {}
                for metric in self._seq(node.metrics()):
                    name = metric.name()
                    value = metric_value(values.get(jvm.java.lang.Long.valueOf(metric.accumulatorId())))
                    if value is None:
                        continue
                    if name in FILES_READ:
                        scan[FILES_READ[name]] = int(value)
                    elif name in PLANNED:
                        scan[PLANNED[name]] = int(value)
                    elif name in MERGE_SKIPPING:
                        merge[MERGE_SKIPPING[name]] = int(value)
                if "files_read" in scan:
                    scans.append({"node": str(node.name())[:80], **scan})
                if merge:
                    merges.append(merge)
            jobs = jvm.scala.collection.JavaConverters.mapAsJavaMapConverter(execution.jobs()).asJava()
            for job_id in jobs.keySet():
                for stage_id in self._seq(app_store.job(job_id).stageIds()):
                    for stage in self._seq(app_store.stageData(stage_id, False, jvm.java.util.ArrayList(), False,
                                                               self.spark.sparkContext._gateway.new_array(jvm.double, 0))):
                        input_bytes += stage.inputBytes()
        return summarize(scans, merges, input_bytes, statements)
