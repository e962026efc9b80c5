"""Monthly settlements: a read-heavy table with a few auditor adjustments and very many dashboard reads.

A handful of small adjustment batches (amount + 1.00, status ADJUSTED) and ``settlement_reads`` varied
finance-dashboard reads (merchant x month totals, top-10 merchants, status mix, point lookups) run on the
adjusted table and, before the adjustments, on the same table in its never-updated (restored) state. Measures total write cost, total read cost and
the per-read overhead the adjustments leave behind; every answer is checked against pandas.

Each adjustment finds its rows by the configuration's locate route (``--routes``: the join, literal keys, Hudi's
record index), like the hotfix: a month of small adjustments on a table the statement cannot prune reads the whole
table every time, which is merge-on-read's write saving hidden again.

Run with:  pytest scenarios/test_monthly_settlements.py --scale tiny --formats iceberg
Grid:      every selected configuration x locate route x one scale (settlement_* parameters).
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.measure.locate import full_scan
from bench.measure.rounds import Observation, timed
from bench.workload.queries import PAYMENTS_FRAME_COLUMNS, payments_frame, settlement_queries

pytestmark = pytest.mark.spark
ADJUSTED = "ADJUSTED"
ASSIGNMENT = {"amount": "CAST(t.amount + 1.00 AS DECIMAL(12,2))", "status": f"'{ADJUSTED}'"}


@pytest.fixture(scope="module")
def audit(payments, cowmor):
    s = cowmor.scale
    keys = payments.hotfix_keys(s.settlement_batches * s.settlement_rows_per_batch)
    batches = [keys[i::s.settlement_batches] for i in range(s.settlement_batches)]
    lookups = [keys[0], keys[-1], payments.hotfix_keys(1)[0] + 1]
    pristine = payments_frame(payments.read_in_parts(PAYMENTS_FRAME_COLUMNS), keep=[*keys, *lookups])
    adjusted = pristine.copy()
    adjusted.loc[adjusted["txn_id"].isin(keys), "amount_cents"] += 100
    adjusted.loc[adjusted["txn_id"].isin(keys), "status"] = ADJUSTED
    queries = settlement_queries(lookups)
    return {"batches": batches, "queries": queries,
            "pristine": {q.name: q.expected(pristine) for q in queries},
            "adjusted": {q.name: q.expected(adjusted) for q in queries}}


def _read_mix(lab, table, queries, answers, total: int) -> dict:
    """``total`` reads cycling through the query mix, on every engine; per-query timings and the sum, per engine
    (the reference engine's at the top level)."""
    per_engine: dict[str, dict[str, list[float]]] = {}
    unsupported: dict[str, str] = {}
    for i in range(total):
        q = queries[i % len(queries)]
        for engine, r in lab.reads(table, [q], answers, 1)[q.name]["engines"].items():
            if "unsupported" in r:
                unsupported[engine] = r["unsupported"]
            else:
                per_engine.setdefault(engine, {}).setdefault(q.name, []).append(r["seconds"][0])

    def mix(per_query: dict[str, list[float]]) -> dict:
        return {"total_s": sum(map(sum, per_query.values())), "reads": total, "per_query_s": per_query,
                "per_query_mean_s": {k: float(np.mean(v)) for k, v in per_query.items() if v}}
    engines = {e: mix(pq) for e, pq in per_engine.items()} | {e: {"unsupported": why} for e, why in unsupported.items()}
    return {**engines[lab.engines[0].name], "engines": engines}


def _overhead(reads: dict, pristine: dict) -> dict[str, float]:
    return {k: reads["per_query_mean_s"][k] - pristine["per_query_mean_s"][k] for k in reads["per_query_mean_s"]}


def test_monthly_settlements(benchmark, lab, payments, audit, config_id, route, progress):
    scale, fmt, spark = lab.session.scale, lab.fmt, lab.spark
    state: dict = {}
    batches = [lab.keys(f"adjustment_keys_{number}", batch, payments) for number, batch in enumerate(audit["batches"])]

    def setup():
        progress(f"{config_id} ({route}): restore the payments table; {scale.settlement_reads} reads on it before any adjustment")
        state["table"] = lab.session.tables.base_table(spark, fmt, "payments", payments)
        # the never-updated state is the restored base itself: read it before the month's adjustments (untimed here)
        state["pristine"] = _read_mix(lab, state["table"], audit["queries"], audit["pristine"], scale.settlement_reads)
        return (state["table"],), {}

    def month(table):
        writes = []
        for number, keys in enumerate(batches, start=1):
            observation = Observation.start(fmt, table)
            seconds, _ = timed(lab.update, table, keys, ASSIGNMENT)
            observed = observation.finish()
            touched = payments.files_holding(keys.values)
            writes.append({"batch": number, "seconds": seconds, **observed, "files_touched": touched,
                           "locate_full_scan": full_scan(observed.get("locate"), len(payments.files), touched)})
        progress(f"{config_id} ({route}): {len(writes)} adjustment batches, now {scale.settlement_reads} reads on each table")
        state["writes"] = writes
        state["reads"] = _read_mix(lab, table, audit["queries"], audit["adjusted"], scale.settlement_reads)

    benchmark.pedantic(month, setup=setup, rounds=1, iterations=1)
    pristine, reads, writes = state["pristine"], state["reads"], state["writes"]
    overhead = _overhead(reads, pristine)
    overhead_by_engine = {e: float(np.mean(list(_overhead(r, pristine["engines"][e]).values())))
                          for e, r in reads["engines"].items() if "unsupported" not in r | pristine["engines"].get(e, {"unsupported": ""})}
    lab.record(benchmark, "monthly_settlements", "sequence", route=route,
               table_data_files=len(payments.files), locate_full_scan=any(w["locate_full_scan"] for w in writes),
               write_total_s=sum(w["seconds"] for w in writes), writes=writes,
               write_bytes_total=sum(w["filesystem"]["bytes_added"] for w in writes),
               read_total_s=reads["total_s"], read_total_pristine_s=pristine["total_s"], reads=reads,
               reads_pristine=pristine, per_read_overhead_s=overhead,
               mean_read_overhead_s=float(np.mean(list(overhead.values()))), mean_read_overhead_by_engine_s=overhead_by_engine,
               live_files_after=fmt.live_files(spark, state["table"]))
