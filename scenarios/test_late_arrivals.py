"""Late data: newer versions of some orders land first, then older versions of some of the same orders.

Each strategy starts from the restored ``order_events`` base table: the current batch (event time T) is
upserted, then the late batch (the same orders at T - 1 hour, an earlier status and amount). Strategies:
the plain upsert (``MERGE … UPDATE SET *``: the last writer wins), the event-time-guarded MERGE
(``WHEN MATCHED AND s.event_time > t.event_time``) on Iceberg and Delta, and Hudi's upsert, which orders two
versions of a key by its ordering field (``EVENT_TIME_ORDERING`` on ``event_time``). Recorded per strategy: rows
that went back in time (checked against pandas), time, bytes and files of the late batch. A strategy that
loses data is a finding; a row that is neither the current nor the late version fails the run.

Run with:  pytest scenarios/test_late_arrivals.py --scale tiny --formats iceberg
Grid:      every selected configuration x its strategies x one scale (peak_updates_per_batch rows).
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.exceptions import NotSupported, WrongAnswer
from bench.measure.rounds import Observation, timed
from bench.workload import orders
from bench.workload.queries import among, money, normalize

pytestmark = pytest.mark.spark
TABLE = "order_events"
STRATEGIES = {
    "upsert": ("plain MERGE upsert (UPDATE SET * / INSERT *): the last writer wins; on Hudi the ordering field decides",
               {"iceberg": "https://iceberg.apache.org/docs/latest/spark-writes/#merge-into",
                "delta": "https://docs.delta.io/latest/delta-update.html#upsert-into-a-table-using-merge",
                "hudi": "https://hudi.apache.org/docs/record_merger"}),
    "guarded_merge": ("MERGE … WHEN MATCHED AND s.event_time > t.event_time THEN UPDATE SET *",
                      {"iceberg": "https://iceberg.apache.org/docs/latest/spark-writes/#merge-into",
                       "delta": "https://docs.delta.io/latest/delta-update.html#upsert-into-a-table-using-merge"}),
}


@pytest.fixture(scope="module")
def late(cowmor, progress):
    s = cowmor.scale
    shape = orders.OrdersShape(s.orders_days, s.orders_files_per_day, s.orders_rows_per_file, cowmor.seed)
    base = orders.base_frame(shape)
    path = orders.write_orders(cowmor.workspace.data_dir, shape, base, progress=None)
    current = orders.batch(base, shape, 1, s.peak_updates_per_batch, 0)
    stale = current.iloc[::2].copy()  # older versions of half of them, arriving after the current ones
    stale["event_time"] = stale["event_time"] - np.timedelta64(3_600_000_000, "us")
    stale["status"], stale["amount_cents"] = "PREPARING", stale["amount_cents"] - 50
    return {"shape": shape, "path": path, "base": base, "current": current, "stale": stale}


def _versions(frame) -> dict[int, tuple]:
    return {int(r.order_id): (r.status, money(r.amount_cents)) for r in frame.itertuples()}


def test_late_arrivals(benchmark, lab, late, config_id, progress):
    fmt, spark = lab.fmt, lab.spark
    current, stale = _versions(late["current"]), _versions(late["stale"])
    results: dict = {}

    def run_strategy(name: str) -> dict:
        table = lab.session.tables.base_table(spark, fmt, TABLE, str(late["path"]), key="order_id", partition_by="event_date",
                                       ordering="event_time")
        spark.createDataFrame(orders.spark_rows(late["current"]), orders.SCHEMA_DDL).createOrReplaceTempView("late_current")
        spark.createDataFrame(orders.spark_rows(late["stale"]), orders.SCHEMA_DDL).createOrReplaceTempView("late_stale")
        verb = fmt.upsert if name == "upsert" else fmt.upsert_if_newer
        verb(spark, table, "late_current")  # must raise NotSupported before anything is timed, if it does
        observation = Observation.start(fmt, table)
        seconds, _ = timed(verb, spark, table, "late_stale")
        written = observation.finish()
        rel = fmt.relation(spark, table)
        rows = normalize(spark.sql(f"SELECT order_id, status, amount FROM {rel} WHERE {among('order_id', current)}").collect())
        got = {int(r[0]): (r[1], r[2]) for r in rows}
        back = sorted(k for k, v in got.items() if k in stale and v == stale[k] and v != current[k])
        wrong = sorted(k for k, v in got.items() if v != current[k] and not (k in stale and v == stale[k]))
        if wrong or len(got) != len(current):
            raise WrongAnswer(f"{config_id} {name}: {len(got)} of {len(current)} orders read back, "
                              f"{len(wrong)} neither the current nor the late version, e.g. {wrong[:3]}")
        count = spark.sql(f"SELECT COUNT(*) FROM {rel}").collect()[0][0]
        if count != late["shape"].rows:
            raise WrongAnswer(f"{config_id} {name}: {count} rows, expected {late['shape'].rows}")
        what, docs = STRATEGIES[name]
        progress(f"{config_id} {name}: {len(back)} of {len(stale)} late rows went back in time ({seconds:.2f}s)")
        return {"strategy": what, "source": docs.get(fmt.family), "seconds": seconds, "rows_late": len(stale),
                "rows_back_in_time": len(back), "rows_kept_current": len(current) - len(back),
                "loses_data": bool(back), "filesystem": written["filesystem"], "metadata": written["metadata"],
                "memory": written.get("memory")}

    def sequence():
        for name in STRATEGIES:
            try:
                results[name] = run_strategy(name)
            except NotSupported as why:
                results[name] = {"skipped": str(why)}

    benchmark.pedantic(sequence, rounds=1, iterations=1)
    assert any("seconds" in r for r in results.values())
    lab.record(benchmark, "late_arrivals", "sequence", strategies=results, ordering_field="event_time")
