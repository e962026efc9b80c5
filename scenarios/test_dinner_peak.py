"""Dinner peak: many small upsert batches into ``order_events``, dashboards after each, then compaction.

Each batch updates existing orders in a few files (~0.3% of them) and inserts new ones; after every batch
the dashboards run ``peak_reads_per_batch`` times. Measures per-batch upsert latency (p50/p95/max) with
bytes and files, read latency as un-compacted batches pile up, the compaction (time, bytes, files before
and after) and the reads after it; for Hudi MoR also the read-optimized read and how many changed rows it
does not show yet. At the end the table must equal the expected state computed in pandas from the batches.
The whole sequence is one pytest-benchmark round; each step is timed and recorded in ``extra_info.series``.

Each upsert finds the existing rows by the configuration's locate route (``--routes``): ``join`` the MERGE from the
batch alone, ``pruned`` with the batch's keys also as a target-only literal condition (Iceberg, Delta), ``index``
Hudi's record index tagging the keys; a route the upsert cannot take is skipped with its reason.

Run with:  pytest scenarios/test_dinner_peak.py --scale tiny --formats iceberg
Grid:      every selected configuration x locate route x one scale (peak_* and orders_* parameters).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bench.core.ledger import DATA, LEDGER
from bench.exceptions import NotSupported, WrongAnswer
from bench.measure.reads import disagreement
from bench.measure.rounds import Observation, degradation_rate, timed, verify_rows
from bench.workload import orders
from bench.workload.queries import among, normalize

pytestmark = pytest.mark.spark
TABLE = "order_events"


@pytest.fixture(scope="module")
def peak(cowmor, progress):
    s = cowmor.scale
    shape = orders.OrdersShape(s.orders_days, s.orders_files_per_day, s.orders_rows_per_file, cowmor.seed)
    progress(f"base data: order_events ({shape.rows:,} rows, {shape.days * shape.files_per_day} files)")
    with LEDGER.spend(DATA):
        base = orders.base_frame(shape)
        path = orders.write_orders(cowmor.workspace.data_dir, shape, base, progress)
        expected, batches = base, []
        for number in range(s.peak_batches):
            rows = orders.batch(expected, shape, number, s.peak_updates_per_batch, s.peak_inserts_per_batch)
            expected = orders.apply(expected, rows)
            batches.append((rows, expected))
    return {"shape": shape, "path": path, "base": base, "batches": batches, "final": expected}


def test_dinner_peak(benchmark, lab, peak, config_id, route, progress):
    scale, fmt, spark = lab.session.scale, lab.fmt, lab.spark
    if reason := fmt.upsert_route_unsupported():
        pytest.skip(f"route {route}: {reason}")
    shape = peak["shape"]
    state: dict = {}

    def setup():
        progress(f"{config_id} ({route}): create order_events")
        state["table"] = lab.session.tables.base_table(spark, fmt, TABLE, str(peak["path"]), key="order_id",
                                                partition_by="event_date", ordering="event_time")
        return (state["table"],), {}

    def sequence(table):
        series = []
        for number, (rows, expected) in enumerate(peak["batches"], start=1):
            spark.createDataFrame(orders.spark_rows(rows), orders.SCHEMA_DDL).createOrReplaceTempView("peak_batch")
            observation = Observation.start(fmt, table)
            upsert_s, _ = timed(fmt.upsert_keys, spark, table, "peak_batch", tuple(int(k) for k in rows["order_id"]))
            written = observation.finish()
            queries = orders.orders_queries(shape.last_day, int(rows["order_id"].iloc[0]))
            answers = {q.name: q.expected(expected) for q in queries}
            reads = lab.reads(table, queries, answers, scale.peak_reads_per_batch)
            previous = peak["base"] if number == 1 else peak["batches"][number - 2][1]
            step = {"batch": number, "upsert_s": upsert_s, "rows": len(rows),
                    "rows_updated": int(rows["order_id"].isin(previous["order_id"]).sum()),
                    "read_s": float(np.mean([r["median"] for r in reads.values()])), "reads": reads,
                    "bytes_added": written["filesystem"]["bytes_added"], "files_added": written["filesystem"]["files_added"],
                    "metadata": written["metadata"], "live_files": fmt.live_files(spark, table),
                    "locate": written.get("locate"), "memory": written.get("memory"),
                    "table_bytes_on_disk": written["table_bytes_on_disk"]}
            if "read_optimized" in fmt.read_modes:
                step["read_optimized"] = _staleness(lab, table, rows, expected)
            series.append(step)
            progress(f"{config_id} ({route}): batch {number}/{len(peak['batches'])}: upsert {upsert_s:.2f}s, read {step['read_s']:.2f}s")
        state["series"] = series

    benchmark.pedantic(sequence, setup=setup, rounds=1, iterations=1)
    table, series = state["table"], state["series"]
    final = peak["final"]
    queries = orders.orders_queries(shape.last_day, int(peak["batches"][-1][0]["order_id"].iloc[0]))
    answers = {q.name: q.expected(final) for q in queries}
    changed = sorted(set().union(*(set(rows["order_id"]) for rows, _ in peak["batches"])))
    verified = verify_rows(spark, fmt.relation(spark, table), final, "order_id", changed, shape.rows + scale.peak_batches * scale.peak_inserts_per_batch)
    compaction = None
    try:
        live_before = fmt.live_files(spark, table)
        observation = Observation.start(fmt, table)
        seconds, _ = timed(fmt.compact, spark, table)
        compaction = {"seconds": seconds, "live_files_before": live_before, "live_files_after": fmt.live_files(spark, table),
                      **observation.finish(), "reads_after": lab.reads(table, queries, answers, scale.read_repeats)}
        assert compaction["live_files_after"]["delete_files"] == 0
        if "read_optimized" in fmt.read_modes:  # after compaction the read-optimized view has caught up
            compaction["read_optimized_after"] = _staleness(lab, table, pd.DataFrame({"order_id": changed}), final)
    except NotSupported as why:
        compaction = {"skipped": str(why)}
    upserts = [s["upsert_s"] for s in series]
    lab.record(benchmark, "dinner_peak", "sequence", route=route, series=series,
               upsert_p50_s=float(np.percentile(upserts, 50)), upsert_p95_s=float(np.percentile(upserts, 95)),
               upsert_max_s=max(upserts), degradation_rate=degradation_rate([s["read_s"] for s in series]),
               compaction=compaction, **verified)


def _staleness(lab, table, rows, expected) -> dict:
    """Hudi MoR read-optimized view: latency, and how many of this batch's rows it does not show yet, per engine.

    The view is the base files alone, so every engine must return the same rows from it (checked against Spark's).
    """
    sql = f"SELECT order_id, status, amount FROM {{table}} WHERE {among('order_id', rows['order_id'])}"
    want = {int(r.order_id): (r.status, int(r.amount_cents)) for r in expected[expected["order_id"].isin(rows["order_id"])].itertuples()}
    per_engine, reference = {}, None
    for engine in lab.engines:
        result = engine.attempt(lab.fmt, table, sql, "read_optimized", reference=engine is lab.engines[0])
        if isinstance(result, str):
            per_engine[engine.name] = {"unsupported": result}
            continue
        seconds, seen = result[0], normalize(result[1])
        if reference is None:
            reference = seen
        elif seen != reference:
            raise WrongAnswer(disagreement(engine.version(), lab.fmt.config_id, "read_optimized", "batch rows", seen, reference))
        got = {int(r[0]): (r[1], round(float(r[2]) * 100)) for r in seen}
        per_engine[engine.name] = {"seconds": seconds, "rows_not_yet_visible": sum(1 for k, v in want.items() if got.get(k) != v)}
    return {**per_engine[lab.engines[0].name], "rows_in_batch": len(want), "engines": per_engine}
