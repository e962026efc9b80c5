from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd

from bench.workload.queries import normalize, payments_queries


def test_normalize_makes_spark_and_pandas_comparable():
    assert normalize([("A", 2, Decimal("1.5")), ("B", 1, Decimal("2"))]) == [("A", 2, "1.50"), ("B", 1, "2.00")]
    assert normalize([(dt.date(2026, 1, 2),)]) == [("2026-01-02",)]


def test_expected_answers_by_hand():
    frame = pd.DataFrame({
        "txn_id": [1, 2, 3, 4], "merchant_id": [10, 10, 11, 12], "amount_cents": [100, 250, 5, 1000],
        "status": ["SETTLED", "SETTLED", "FAILED", "SETTLED"],
        "settled_date": [dt.date(2026, 1, 1), dt.date(2026, 1, 9), dt.date(2026, 1, 10), dt.date(2026, 1, 10)],
    })
    q = {x.name: x for x in payments_queries(dt.date(2026, 1, 10), lookup_id=3)}
    assert q["revenue_last_7_days"].expected(frame) == [("FAILED", 1, "0.05"), ("SETTLED", 2, "12.50")]
    assert q["status_totals"].expected(frame) == [("FAILED", 1, "0.05", 1), ("SETTLED", 3, "13.50", 2)]
    assert q["point_lookup"].expected(frame) == [(3, "FAILED", "0.05")]
    assert "DATE '2026-01-04'" in q["revenue_last_7_days"].sql


def test_the_frame_read_part_by_part_is_the_frame_read_whole_and_answers_the_same(tmp_path):
    """The seed's 152M rows are converted a part at a time (no whole Arrow copy beside the frame); nothing else changes."""
    from bench.workload.datagen import generate_payments
    from bench.workload.queries import PAYMENTS_FRAME_COLUMNS, payments_frame

    data = generate_payments(tmp_path, days=3, files_per_day=2, rows_per_file=500, seed=7, progress=None)
    whole = payments_frame(data.read(PAYMENTS_FRAME_COLUMNS))
    parts = payments_frame(data.read_in_parts(PAYMENTS_FRAME_COLUMNS, rows_per_part=1100))
    pd.testing.assert_frame_equal(whole, parts)
    totals = {x.name: x for x in payments_queries(data.last_day, lookup_id=int(whole.txn_id[0]))}["status_totals"]
    naive = whole.groupby("status").agg(n=("txn_id", "size"), cents=("amount_cents", "sum"),
                                        merchants=("merchant_id", "nunique"))
    assert totals.expected(parts) == normalize([(s, int(r.n), f"{r.cents / 100:.2f}", int(r.merchants))
                                                for s, r in naive.iterrows()])


def test_a_frame_folded_around_the_changed_keys_answers_every_dashboard_as_the_whole_frame_does(tmp_path):
    """The expected answers at the seeds' size come from a frame whose other rows are summed per (day, status,
    merchant): the same answers as every row, before and after an edit of the kept keys, in far fewer rows."""
    from bench.workload.datagen import generate_payments
    from bench.workload.queries import PAYMENTS_FRAME_COLUMNS, payments_frame, settlement_queries

    data = generate_payments(tmp_path, days=9, files_per_day=2, rows_per_file=800, seed=3, progress=None)
    keys = data.hotfix_keys(40)
    lookups = [keys[0], keys[-1], keys[0] + 1]  # a key the update does not change, looked up too
    whole = payments_frame(data.read(PAYMENTS_FRAME_COLUMNS))
    folded = payments_frame(data.read_in_parts(PAYMENTS_FRAME_COLUMNS, rows_per_part=3000), keep=[*keys, *lookups])
    assert len(folded) < len(whole) / 2
    queries = [*payments_queries(data.last_day, lookup_id=keys[0]), *settlement_queries(lookups)]
    for frame in (whole, folded):
        frame.loc[frame["txn_id"].isin(keys[::2]), "status"] = "REVERSED"
        frame.loc[frame["txn_id"].isin(keys[1::2]), "amount_cents"] += 100
    for q in queries:
        assert q.expected(folded) == q.expected(whole), q.name
