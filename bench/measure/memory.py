"""Peak memory over one operation: Spark's executors, the driver JVM and this Python process.

Three sources, each the engine's or the kernel's own account:

- Spark's executor metrics of the stages the operation ran (the status store's ``peakExecutorMetrics`` per stage,
  polled every ``spark.executor.metrics.pollingInterval`` and carried by every task's end): the heap the executors
  used, and the execution and storage memory Spark's memory manager handed out. In local mode the driver is the
  executor; on a cluster each figure is the largest executor's.
- The driver JVM's heap pools (their peaks reset when the operation starts): planning, commits, Hudi's metadata
  table and Iceberg's manifests run in the driver. The figure is the sum of each pool's own peak (eden, survivor,
  old), at most the heap's maximum, so an upper bound of the heap's peak; a garbage-collected heap fills up before it is collected, so a peak
  says how full the heap got, not how much the operation needs (``scenarios/test_memory_needed.py`` searches that).
- Resident memory (the kernel's high-water mark, reset through ``/proc/<pid>/clear_refs``) of the driver JVM where
  it runs on this machine, and of this Python process (DuckDB and hudi-rs read inside it). Where the mark cannot be
  reset (not Linux), the process's lifetime peak is recorded and ``python_rss_scope`` says so.
"""

from __future__ import annotations

import os
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bench.core import resident

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

POLLING_INTERVAL = "100ms"  # spark.executor.metrics.pollingInterval: a peak between two polls is missed
# Spark's executor metric -> the record's field (each the largest over the operation's stages)
EXECUTOR_METRICS = {"JVMHeapMemory": "executor_heap_peak_bytes", "OnHeapExecutionMemory": "execution_memory_peak_bytes",
                    "OnHeapStorageMemory": "storage_memory_peak_bytes"}
OFF_HEAP_EXECUTION = "OffHeapExecutionMemory"
FIELDS = (*EXECUTOR_METRICS.values(), "driver_heap_peak_bytes", "jvm_rss_peak_bytes", "python_rss_peak_bytes")
OPERATION, PROCESS = "operation", "process"  # what a Python peak covers: the operation, or the process's lifetime


def summarize(stage_peaks: list[dict[str, int]], driver_heap: int | None, jvm_rss: int | None, python_rss: int | None,
              python_scope: str) -> dict[str, Any]:
    """One record from the stages' peak executor metrics and the processes' peaks (pure, for unit tests).

    A figure no source gave is None (an operation that ran no Spark stage has no executor figures), never 0.
    """
    out: dict[str, Any] = {}
    # a stage whose tasks all ended before the first poll carries zeros: not sampled, not a heap of 0 bytes
    sampled = [p for p in stage_peaks if p.get("JVMHeapMemory", 0) > 0]
    for metric, name in EXECUTOR_METRICS.items():
        values = [p[metric] + (p.get(OFF_HEAP_EXECUTION, 0) if metric == "OnHeapExecutionMemory" else 0)
                  for p in sampled if metric in p]
        out[name] = max(values) if values else None
    out |= {"driver_heap_peak_bytes": driver_heap, "jvm_rss_peak_bytes": jvm_rss, "python_rss_peak_bytes": python_rss,
            "python_rss_scope": python_scope, "stages": len(stage_peaks), "stages_sampled": len(sampled)}
    return out


def largest(figures: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """Several operations' memory as one: each field's largest (the peak of a sequence of operations)."""
    figures = [f for f in figures if f]
    if not figures:
        return None
    out: dict[str, Any] = {}
    for name in FIELDS:
        values = [f[name] for f in figures if f.get(name) is not None]
        out[name] = max(values) if values else None
    scopes = {f.get("python_rss_scope") for f in figures}
    out["python_rss_scope"] = OPERATION if scopes == {OPERATION} else PROCESS
    out["stages"] = sum(int(f.get("stages") or 0) for f in figures)
    return out


@dataclass(frozen=True)
class _Driver:
    """The JVM objects of one Spark application a watch asks on every operation, looked up once per application:
    each lookup is py4j round trips, about 40 per measured operation otherwise (3 of every 4 calls a tiny run made
    into the JVM; 8 s of a 123 s run of three scenarios at tiny)."""

    listener_bus: Any
    store: Any
    heap_pools: list[Any]
    max_heap: int

    @classmethod
    def of(cls, spark: SparkSession) -> _Driver:
        context = spark.sparkContext
        if context not in _DRIVERS:
            jvm, sc = spark._jvm, context._jsc.sc()
            pools = jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans()
            heap = jvm.java.lang.management.MemoryType.HEAP
            _DRIVERS[context] = cls(sc.listenerBus(), sc.statusStore(),
                                    [p for p in (pools.get(i) for i in range(pools.size())) if p.getType().equals(heap)],
                                    int(jvm.java.lang.Runtime.getRuntime().maxMemory()))
        return _DRIVERS[context]


_DRIVERS: weakref.WeakKeyDictionary[Any, _Driver] = weakref.WeakKeyDictionary()  # SparkContext -> its handles


@dataclass
class MemoryWatch:
    """Peak memory from ``start()`` to ``finish()``; the Spark figures come from the active session, if any."""

    spark: SparkSession | None
    after_job: int
    jvm_pid: int | None
    python_scope: str

    @classmethod
    def start(cls) -> MemoryWatch:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        watch = cls(spark, -1, None, OPERATION if resident.reset_peak() else PROCESS)
        if spark is not None:
            driver = _Driver.of(spark)
            driver.listener_bus.waitUntilEmpty()
            jobs = driver.store.jobsList(spark._jvm.java.util.ArrayList())
            watch.after_job = jobs.apply(0).jobId() if jobs.size() else -1
            for pool in driver.heap_pools:
                pool.resetPeakUsage()
            watch.jvm_pid = _local_jvm_pid(spark)
            if watch.jvm_pid is not None and not resident.reset_peak(watch.jvm_pid):
                watch.jvm_pid = None
        return watch

    def _stage_peaks(self, driver: _Driver) -> list[dict[str, int]]:
        """Each stage of every job after ``after_job``: its peak executor metrics (jobs are listed newest first)."""
        assert self.spark is not None
        jvm, store = self.spark._jvm, driver.store
        jobs = store.jobsList(jvm.java.util.ArrayList())
        stage_ids: set[int] = set()
        for i in range(jobs.size()):
            job = jobs.apply(i)
            if job.jobId() <= self.after_job:
                break
            stage_ids.update(int(s) for s in job.stageIds().mkString(",").split(",") if s)
        no_statuses, no_quantiles = jvm.java.util.ArrayList(), self.spark.sparkContext._gateway.new_array(jvm.double, 0)
        peaks = []
        for stage_id in sorted(stage_ids):
            try:
                attempts = store.stageData(stage_id, False, no_statuses, False, no_quantiles)
            except Exception:  # noqa: BLE001 - a skipped stage never ran and the store has no data for it
                continue
            for attempt in (attempts.apply(i) for i in range(attempts.size())):
                metrics = attempt.peakExecutorMetrics()
                if metrics.isDefined():
                    values = metrics.get()
                    peaks.append({m: int(values.getMetricValue(m)) for m in (*EXECUTOR_METRICS, OFF_HEAP_EXECUTION)})
        return peaks

    def finish(self) -> dict[str, Any]:
        peaks, driver_heap, jvm_rss = [], None, None
        if self.spark is not None:
            driver = _Driver.of(self.spark)
            driver.listener_bus.waitUntilEmpty()  # asynchronous: the store then holds every finished task's metrics
            peaks = self._stage_peaks(driver)
            # each pool's own peak, summed, can pass the heap's size (eden peaks before a collection, old gen after):
            # the heap never holds more than its maximum
            driver_heap = min(sum(int(p.getPeakUsage().getUsed()) for p in driver.heap_pools), driver.max_heap)
            jvm_rss = resident.peak(self.jvm_pid) if self.jvm_pid is not None else None
        python_rss = resident.peak() if self.python_scope == OPERATION else resident.lifetime_peak()
        return summarize(peaks, driver_heap, jvm_rss, python_rss, self.python_scope)


def _local_jvm_pid(spark: SparkSession) -> int | None:
    """The driver JVM's process id where pyspark started it on this machine (its gateway's child process)."""
    from pyspark import SparkContext

    proc = getattr(SparkContext._gateway, "proc", None) if SparkContext._gateway is not None else None
    pid = getattr(proc, "pid", None)
    return pid if isinstance(pid, int) and pid != os.getpid() else None
