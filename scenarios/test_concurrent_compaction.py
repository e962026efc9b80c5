"""Compaction racing the writer: small upsert batches from one thread while another compacts the same table.

``order_events`` (as in the dinner peak) first takes ``concurrent_batches`` upsert batches alone, then as many
again while a second thread of the same Spark application runs the configuration's compaction back to back
(at most ``MAX_COMPACTIONS`` times, stopping when the writer is done). Iceberg and Delta keep their default
isolation; Hudi runs optimistic concurrency control with its in-process lock provider. A batch whose commit
loses a conflict is retried up to ``RETRIES`` times. Recorded per configuration: commits attempted, succeeded
and failed by conflict (with the exception class), retries per commit, whether compaction ever committed,
the writer's batch latency alone and while compaction runs, and the wall time. The final table must equal
the pandas state of every batch that committed: nothing lost, nothing applied twice.

Run with:  pytest scenarios/test_concurrent_compaction.py --scale tiny --formats iceberg
Grid:      every selected configuration x one scale (concurrent_batches, peak_* batch sizes).
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from bench.exceptions import NotSupported
from bench.formats.base import Setting
from bench.measure.rounds import verify_rows
from bench.measure.writers import failure
from bench.workload import orders

pytestmark = pytest.mark.spark
TABLE = "order_events"
RETRIES, MAX_COMPACTIONS = 3, 3
# how each format names a compaction's commit: Iceberg's rewrite ("replace"), Delta's REORG/OPTIMIZE, Hudi's compaction
COMPACTION_OPERATIONS = ("replace", "reorg", "optimize", "compaction")
HARNESS = Setting("concurrency", "cowmor retries of a batch whose commit lost a conflict", str(RETRIES),
                  "scenarios/test_concurrent_compaction.py")


@pytest.fixture(scope="module")
def stream(cowmor):
    s = cowmor.scale
    shape = orders.OrdersShape(s.orders_days, s.orders_files_per_day, s.orders_rows_per_file, cowmor.seed)
    base = orders.base_frame(shape)
    path = orders.write_orders(cowmor.workspace.data_dir, shape, base, progress=None)
    batches, state = [], base
    for number in range(2 * s.concurrent_batches):
        rows = orders.batch(state, shape, 100 + number, s.peak_updates_per_batch, s.peak_inserts_per_batch)
        state = orders.apply(state, rows)
        batches.append(rows)
    return {"shape": shape, "path": path, "base": base, "batches": batches}


def test_concurrent_compaction(benchmark, lab, stream, config_id, progress):
    fmt, spark, scale = lab.fmt, lab.spark, lab.session.scale
    settings = fmt.concurrency_settings() + [HARNESS]
    applied = [s for s in settings if s.key.startswith("hoodie.")]
    done = threading.Event()
    log: dict = {"batches": [], "compactions": []}

    def write(number: int, rows, table) -> None:
        view = f"cc_batch_{number}"
        spark.createDataFrame(orders.spark_rows(rows), orders.SCHEMA_DDL).createOrReplaceTempView(view)
        record = {"batch": number + 1, "concurrent": number >= scale.concurrent_batches, "attempts": 0, "conflicts": []}
        while record["attempts"] <= RETRIES:
            record["attempts"] += 1
            start = time.perf_counter()
            try:
                fmt.upsert(spark, table, view)
            except Exception as err:  # noqa: BLE001 - a lost conflict is the finding; it is retried and recorded
                record["conflicts"].append(failure(err))
                continue
            record["seconds"], record["committed"] = time.perf_counter() - start, True
            break
        record.setdefault("committed", False)
        log["batches"].append(record)

    def compact(table) -> None:
        while not done.is_set() and len(log["compactions"]) < MAX_COMPACTIONS:
            start, marker = time.perf_counter(), fmt.commit_marker(table)
            try:
                fmt.compact(spark, table)
                seconds = time.perf_counter() - start
                since = fmt.describe_commits(table, marker).operation  # the writer's commits are in there too
                log["compactions"].append({"committed": any(k in since.lower() for k in COMPACTION_OPERATIONS),
                                           "seconds": seconds, "operations_since_start": since})
            except NotSupported as why:
                log["compactions"].append({"committed": False, "not_applicable": str(why)})
                return
            except Exception as err:  # noqa: BLE001 - a compaction that loses the race is recorded, not fatal
                log["compactions"].append({"committed": False, "seconds": time.perf_counter() - start, **failure(err)})

    def setup():
        progress(f"{config_id}: restore order_events")
        table = lab.session.tables.base_table(spark, fmt, TABLE, str(stream["path"]), key="order_id",
                                       partition_by="event_date", ordering="event_time")
        return (table,), {}

    def race(table) -> None:
        for s in applied:
            spark.conf.set(s.key, s.value)
        try:
            for number in range(scale.concurrent_batches):  # the writer alone
                write(number, stream["batches"][number], table)
            progress(f"{config_id}: {scale.concurrent_batches} batches alone; now with compaction racing them")
            compactor = threading.Thread(target=compact, args=(table,), name="cowmor-compaction")
            started = time.perf_counter()
            compactor.start()
            for number in range(scale.concurrent_batches, len(stream["batches"])):
                write(number, stream["batches"][number], table)
            done.set()
            compactor.join(timeout=600)
            log["concurrent_wall_s"] = time.perf_counter() - started
        finally:
            done.set()
            for s in applied:
                spark.conf.unset(s.key)
        log["table"] = table

    benchmark.pedantic(race, setup=setup, rounds=1, iterations=1)
    table, batches = log.pop("table"), log["batches"]
    committed = [stream["batches"][b["batch"] - 1] for b in batches if b["committed"]]
    expected = stream["base"]
    for rows in committed:
        expected = orders.apply(expected, rows)
    changed = sorted(set().union(*(set(rows["order_id"]) for rows in stream["batches"])))
    verified = verify_rows(spark, fmt.relation(spark, table), expected, "order_id", changed, len(expected))
    alone = [b["seconds"] for b in batches if b["committed"] and not b["concurrent"]]
    racing = [b["seconds"] for b in batches if b["committed"] and b["concurrent"]]
    conflicts = [c for b in batches for c in b["conflicts"]]
    lab.record(benchmark, "concurrent_compaction", "sequence", batches=batches,
               compactions=log["compactions"], commits_attempted=sum(b["attempts"] for b in batches),
               commits_succeeded=sum(b["committed"] for b in batches),
               commits_failed_by_conflict=len(conflicts),
               conflict_classes=sorted({c.get("root_cause") or c["class"] for c in conflicts}),
               retries_per_commit=float(np.mean([b["attempts"] - 1 for b in batches])),
               batches_lost=sum(not b["committed"] for b in batches),
               compaction_committed=any(c["committed"] for c in log["compactions"]),
               upsert_alone_p50_s=float(np.median(alone)) if alone else None,
               upsert_racing_p50_s=float(np.median(racing)) if racing else None,
               concurrent_wall_s=log.get("concurrent_wall_s"), **verified,
               concurrency_settings=[vars(s) for s in settings])
