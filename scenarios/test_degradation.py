"""Degradation and recovery (the LST-Bench idea, made precise): K update batches without compaction, the
same read after each, then compaction and the read again.

Records per configuration the read latency before any batch and after each one, the degradation rate
(LST-Bench: the mean of the relative change between consecutive measurements), the recovery after
compaction (read after compaction / read before any batch), and the table's files and bytes after each
batch. Every read's answer is checked against pandas.

Run with:  pytest scenarios/test_degradation.py --scale tiny --formats iceberg
Grid:      every selected configuration x one scale (degradation_batches, hotfix_rows per batch).
"""

from __future__ import annotations

import pytest

from bench.exceptions import NotSupported
from bench.measure.rounds import Observation, degradation_rate, timed
from bench.workload.datagen import HOTFIX_STATUS
from bench.workload.queries import status_batches

pytestmark = pytest.mark.spark
TABLE = "payments"  # the hotfix's base table, restored


@pytest.fixture(scope="module")
def plan(payments, cowmor):
    """Disjoint scattered keys per batch, and the expected answer of the read after each batch."""
    return status_batches(payments, cowmor.scale.degradation_batches, cowmor.scale.hotfix_rows, HOTFIX_STATUS)


def test_degradation(benchmark, lab, payments, plan, config_id, progress):
    scale, fmt, spark = lab.session.scale, lab.fmt, lab.spark
    query, expected = plan.query, plan.expected
    state: dict = {}

    def read(table, answer):
        return lab.reads(table, [query], {query.name: answer}, scale.read_repeats)[query.name]

    def setup():
        progress(f"{config_id}: base table")
        table = lab.session.tables.base_table(spark, fmt, TABLE, payments)
        # no extra untimed read first: each read's cold first run is kept apart from its warm repeats
        state["table"], state["before"] = table, read(table, expected[0])
        return (table,), {}

    def sequence(table):
        series = []
        for number, batch in enumerate(plan.batches, start=1):
            lab.keys_view("degradation_keys", batch)
            observation = Observation.start(fmt, table)
            update_s, _ = timed(fmt.update, spark, table, "degradation_keys", {"status": f"'{HOTFIX_STATUS}'"})
            written = observation.finish()
            r = read(table, expected[number])
            series.append({"batch": number, "update_s": update_s, "read_s": r["median"], "read": r,
                           "live_files": fmt.live_files(spark, table), "table_on_disk": written["table_on_disk"],
                           "table_bytes_on_disk": written["table_bytes_on_disk"],
                           "bytes_added": written["filesystem"]["bytes_added"], "memory": written.get("memory")})
            progress(f"{config_id}: batch {number}: read {r['median']:.3f}s, live {series[-1]['live_files']}")
        state["series"] = series

    benchmark.pedantic(sequence, setup=setup, rounds=1, iterations=1)
    table, series, before = state["table"], state["series"], state["before"]
    latencies = [before["median"]] + [s["read_s"] for s in series]
    try:
        seconds, _ = timed(fmt.compact, spark, table)
        after = read(table, expected[-1])
        recovery = {"compaction_s": seconds, "read_after_compaction_s": after["median"],
                    "recovery_vs_start": after["median"] / before["median"],
                    "recovery_vs_last_batch": after["median"] / latencies[-1],
                    "live_files_after": fmt.live_files(spark, table)}
        assert recovery["live_files_after"]["delete_files"] == 0
    except NotSupported as why:
        recovery = {"skipped": str(why)}
    lab.record(benchmark, "degradation", "sequence", query=query.name, read_before_s=before["median"], series=series,
               degradation_rate=degradation_rate(latencies), recovery=recovery)
