"""Dashboard queries and their expected answers, computed from the generated data with pandas (no Spark)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

CENT = Decimal("0.01")


@dataclass(frozen=True)
class Query:
    """A dashboard read: SQL over ``{table}`` and the same question answered by pandas on the expected state."""

    name: str
    sql: str
    expected: Callable[[pd.DataFrame], list[tuple]]


def cents_of(decimals: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Unscaled integer values of a decimal128 column (its cents when scale is 2), read from the buffer."""
    arr = decimals.combine_chunks() if isinstance(decimals, pa.ChunkedArray) else decimals
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64)[2 * arr.offset: 2 * (arr.offset + len(arr))]
    return words[::2].copy()


def money(cents: int) -> str:
    return str((Decimal(int(cents)) * CENT).quantize(CENT))


def normalize_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value.quantize(CENT))
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, (np.integer,)):
        return int(value)
    return value


def normalize(rows: list) -> list[tuple]:
    """Spark rows or tuples -> sorted tuples of plain, comparable values."""
    return sorted(tuple(normalize_value(v) for v in row) for row in rows)


PAYMENTS_FRAME_COLUMNS = ["txn_id", "settled_date", "merchant_id", "amount", "status"]


def payments_frame(parts: pa.Table | Iterable[pa.Table]) -> pd.DataFrame:
    """The columns the dashboards use, with the amount as integer cents; from one table or from parts of it
    (``PaymentsData.read_in_parts``), converted part by part so the Arrow copy never has to fit beside the frame.
    Strings and dates become shared Python objects (one per distinct value and part, not one per row)."""
    columns: dict[str, list[np.ndarray]] = {"txn_id": [], "settled_date": [], "merchant_id": [], "amount_cents": [], "status": []}
    for table in [parts] if isinstance(parts, pa.Table) else parts:
        columns["txn_id"].append(table.column("txn_id").to_numpy())
        columns["settled_date"].append(table.column("settled_date").to_pandas().to_numpy())
        columns["merchant_id"].append(table.column("merchant_id").to_numpy())
        columns["amount_cents"].append(cents_of(table.column("amount")))
        columns["status"].append(table.column("status").to_pandas().to_numpy())
    frame = pd.DataFrame(index=pd.RangeIndex(sum(len(c) for c in columns["txn_id"])))
    for name in list(columns):  # one column at a time: each part list is freed as its column lands
        frame[name] = np.concatenate(columns.pop(name))
    return frame


def _by_status(frame: pd.DataFrame, with_merchants: bool) -> list[tuple]:
    """Rows, revenue and (optionally) distinct merchants per status, on integer codes: a groupby of 152M Python
    strings (the seed) would need several copies of the frame."""
    codes, statuses = pd.factorize(frame["status"].to_numpy())
    counts = np.bincount(codes, minlength=len(statuses))
    cents = pd.Series(frame["amount_cents"].to_numpy()).groupby(codes).sum()  # int64: exact
    out = []
    if with_merchants:
        merchants = frame["merchant_id"].to_numpy().astype(np.int64)
        width = int(merchants.max(initial=0)) + 1  # (status, merchant) pairs as one integer each
        distinct = np.bincount(np.unique(codes.astype(np.int64) * width + merchants) // width, minlength=len(statuses))
    for code, status in enumerate(statuses):
        row = (status, int(counts[code]), money(cents[code]))
        out.append(row + ((int(distinct[code]),) if with_merchants else ()))
    return normalize(out)


def payments_queries(last_day: dt.date, lookup_id: int) -> list[Query]:
    """The payments dashboards: a recent-window aggregate, a full-table aggregate and a point lookup."""
    since = last_day - dt.timedelta(days=6)
    return [
        Query("revenue_last_7_days",
              f"SELECT status, COUNT(*) AS n, SUM(amount) AS revenue FROM {{table}} "
              f"WHERE settled_date >= DATE '{since.isoformat()}' GROUP BY status",
              lambda f: _by_status(f[f["settled_date"] >= since], with_merchants=False)),
        Query("status_totals",
              "SELECT status, COUNT(*) AS n, SUM(amount) AS revenue, COUNT(DISTINCT merchant_id) AS merchants "
              "FROM {table} GROUP BY status",
              lambda f: _by_status(f, with_merchants=True)),
        Query("point_lookup",
              f"SELECT txn_id, status, amount FROM {{table}} WHERE txn_id = {lookup_id}",
              lambda f: normalize([(int(r.txn_id), r.status, money(r.amount_cents))
                                   for r in f[f["txn_id"] == lookup_id].itertuples()])),
    ]


def settlement_queries(lookup_ids: list[int]) -> list[Query]:
    """Finance dashboards on monthly settlements: merchant x month aggregates, top-N, status mix, lookups."""

    def merchant_month(f: pd.DataFrame) -> list[tuple]:
        month = pd.to_datetime(f["settled_date"]).dt.month
        g = f.assign(month=month).groupby(["merchant_id", "month"])["amount_cents"].agg(["size", "sum"])
        return normalize([(int(m), int(mo), int(n), money(s)) for (m, mo), (n, s) in g.iterrows()])

    def top_merchants(f: pd.DataFrame) -> list[tuple]:
        g = f.groupby("merchant_id")["amount_cents"].sum().reset_index()
        g = g.sort_values(["amount_cents", "merchant_id"], ascending=[False, True]).head(10)
        return normalize([(int(r.merchant_id), money(r.amount_cents)) for r in g.itertuples()])

    queries = [
        Query("merchant_month_totals", "SELECT merchant_id, month(settled_date), COUNT(*), SUM(amount) FROM {table} "
              "GROUP BY merchant_id, month(settled_date)", merchant_month),
        Query("top10_merchants", "SELECT merchant_id, SUM(amount) AS revenue FROM {table} GROUP BY merchant_id "
              "ORDER BY revenue DESC, merchant_id LIMIT 10", top_merchants),
        Query("status_mix", "SELECT status, COUNT(*), SUM(amount) FROM {table} GROUP BY status",
              lambda f: _by_status(f, with_merchants=False)),
    ]
    for i, txn in enumerate(lookup_ids):
        queries.append(Query(f"lookup_{i}", f"SELECT txn_id, status, amount FROM {{table}} WHERE txn_id = {txn}",
                             lambda f, txn=txn: normalize([(int(r.txn_id), r.status, money(r.amount_cents))
                                                           for r in f[f["txn_id"] == txn].itertuples()])))
    return queries
