"""What a statement read to find its rows: Spark's own SQL metrics of every scan it ran, and its tasks' input bytes.

Read from Spark's status store (the same numbers as the SQL tab of the UI, which need not be on) between two points:
every query Spark ran in between is the measured operation's. Per scan node it keeps the files it read (a file
source's "number of files read"; Iceberg's "number of file splits read", one per file below its 128 MB split size, at
most the files it planned above it),
what planning skipped (Iceberg's "number of skipped data files", Delta MERGE's target files before/after skipping);
over the whole statement the bytes its tasks read (input metrics: columns actually read, metadata tables included).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from bench.formats.base import Keys
    from bench.workload.datagen import PaymentsData

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
WANTED = {**FILES_READ, **PLANNED, **MERGE_SKIPPING}
MERGE_FIELDS = frozenset(MERGE_SKIPPING.values())
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


_DOT_NODE = re.compile(r'^\s*\d+ \[labelType="html" label="(.*)"\];$', re.MULTILINE)


def dot_nodes(dot: str) -> list[tuple[str, dict[str, str]]]:
    """Each plan node's name and the metrics we keep, from Spark's DOT rendering of a plan with its metrics values.

    A node's label is ``<b>name</b><br><br>metric: value<br>…`` (Java-escaped); a value summed over several tasks
    spans two lines (``total (min, med, max …)`` then the figures), and the figures are what ``metric_value`` reads.
    """
    nodes = []
    for label in _DOT_NODE.findall(dot):
        text = label.encode("latin-1", "backslashreplace").decode("unicode_escape")
        name, _, rest = text.partition("<br><br>")
        lines = rest.split("<br>") if rest else []
        metrics: dict[str, str] = {}
        for i, line in enumerate(lines):
            metric, sep, value = line.partition(": ")
            if sep and metric in WANTED:
                metrics[metric] = "\n".join([value, lines[i + 1]]) if value.startswith("total (") and i + 1 < len(lines) else value
        nodes.append((name.removeprefix("<b>").removesuffix("</b>"), metrics))
    return nodes


def summarize(scans: list[dict[str, Any]], merges: list[dict[str, Any]], input_bytes: int, statements: int) -> dict[str, Any]:
    """One record of the locate step from its scan nodes (pure, for unit tests)."""
    scans = [_files_not_splits(s) for s in scans]
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


def _files_not_splits(scan: dict[str, Any]) -> dict[str, Any]:
    """Iceberg counts file splits read: a 263 MB file is read as 3 splits of its 128 MB split size. Files read are at
    most the files the scan planned (the splits are kept), so a full scan reads "4 of 4 files", never "12 of 4"."""
    planned = scan.get("data_files_planned")
    if planned is None or scan.get("files_read", 0) <= planned:
        return scan
    return {**scan, "files_read": planned, "file_splits_read": scan["files_read"]}


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
        store = watch._sql_store()
        count = store.executionsCount()
        watch.after_execution = store.executionsList(count - 1, 1).head().executionId() if count else -1
        return watch

    @staticmethod
    def _seq(scala_seq: Any) -> list[Any]:
        """A Scala Seq's elements by index (py4j's iteration of a converted Java list costs ~20 ms an element)."""
        return [scala_seq.apply(i) for i in range(scala_seq.size())]

    def _drain(self) -> None:
        """Spark's listener bus is asynchronous: wait until it has recorded every finished query."""
        self.spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()

    def _sql_store(self) -> Any:
        return self.spark._jsparkSession.sharedState().statusStore()

    def _executions_since(self, after: int) -> list[Any]:
        """The executions after ``after``, fetched from the newest end (the store keeps up to 1,000, by id)."""
        store = self._sql_store()
        count, want = store.executionsCount(), 16
        while True:
            offset = max(0, count - want)
            batch = self._seq(store.executionsList(offset, count - offset))
            if offset == 0 or not batch or batch[0].executionId() <= after:
                return [e for e in batch if e.executionId() > after]
            want *= 4

    def finish(self) -> dict[str, Any]:
        self._drain()
        jvm = self.spark._jvm
        sql_store = self._sql_store()
        app_store = self.spark.sparkContext._jsc.sc().statusStore()
        scans: list[dict[str, Any]] = []
        merges: list[dict[str, Any]] = []
        input_bytes, statements = 0, 0
        no_statuses, no_quantiles = jvm.java.util.ArrayList(), self.spark.sparkContext._gateway.new_array(jvm.double, 0)
        for execution in self._executions_since(self.after_execution):
            execution_id = execution.executionId()
            statements += 1
            dot = sql_store.planGraph(execution_id).makeDotFile(sql_store.executionMetrics(execution_id))
            for name, metrics in dot_nodes(dot):
                values = {WANTED[k]: int(v) for k, text in metrics.items() if (v := metric_value(text)) is not None}
                scan = {k: v for k, v in values.items() if k not in MERGE_FIELDS}
                merge = {k: v for k, v in values.items() if k in MERGE_FIELDS}
                if "files_read" in scan:
                    scans.append({"node": name[:80], **scan})
                if merge:
                    merges.append(merge)
            for stage_id in (int(s) for s in execution.stages().mkString(",").split(",") if s):
                for stage in self._seq(app_store.stageData(stage_id, False, no_statuses, False, no_quantiles)):
                    input_bytes += stage.inputBytes()
        return summarize(scans, merges, input_bytes, statements)


def update_keys(spark: SparkSession, route: str, name: str, keys: list[int], data: PaymentsData) -> Keys:
    """The keys an update changes, as literals and as a view; for the index route also a view of those rows as the
    generated ``data`` holds them (a correction feed's rows: Hudi's MERGE takes the ordering value, and on
    merge-on-read every value an assignment reads, from its source)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from bench.formats.base import INDEX, Keys

    spark.createDataFrame([(int(k),) for k in keys], "txn_id bigint").createOrReplaceTempView(name)
    ordered = None
    if route == INDEX:
        rows = data.rows_with(keys)
        spark.createDataFrame(rows.to_pandas(), schema=from_arrow_schema(rows.schema)) \
            .createOrReplaceTempView(ordered := f"{name}_ordered")
    return Keys(tuple(int(k) for k in keys), name, ordered)
