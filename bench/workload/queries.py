"""Dashboard queries and their expected answers, computed from the generated data with pandas (no Spark)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

if TYPE_CHECKING:
    from bench.workload.datagen import PaymentsData

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


def among(column: str, keys: Iterable[int]) -> str:
    """``column`` is one of ``keys``, as a semi-join on an inline table that Spark and DuckDB both read.

    Not a literal IN list: Hudi's data skipping turns one into a nested OR that Spark's cached column statistics
    filter walks recursively, and a few hundred keys overflow the JVM's stack (a dinner peak at `small`).
    """
    rows = ", ".join(f"({int(k)})" for k in keys)
    return f"{column} IN (SELECT k FROM (VALUES {rows}) AS listed_keys(k))"


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


ROWS = "rows"  # how many table rows a frame row stands for (1, or a group of rows no query tells apart)
GROUP = ["settled_date", "status", "merchant_id"]  # every aggregate the dashboards compute is a sum over these groups
AGGREGATED = -1  # the txn_id of a group's row: no lookup asks for it


def payments_frame(parts: pa.Table | Iterable[pa.Table], keep: Iterable[int] | None = None) -> pd.DataFrame:
    """The columns the dashboards use, with the amount as integer cents and a ``rows`` weight; from one table or from
    parts of it (``PaymentsData.read_in_parts``), converted part by part.

    With ``keep`` (the keys a scenario changes or looks up), every other row is folded into one row per (day, status,
    merchant) as each part is read, weighted by its row count: every dashboard answer is a sum over those groups
    (or a lookup of a kept key), so the answers are the same, and the frame holds a few hundred thousand rows
    whatever the table's size (every row of the seed's 152M took about 100 bytes at the peak: 15 GB).
    """
    kept = None if keep is None else np.unique(np.fromiter((int(k) for k in keep), dtype=np.int64))
    frames = []
    for table in [parts] if isinstance(parts, pa.Table) else parts:
        frame = pd.DataFrame({"txn_id": table.column("txn_id").to_numpy(),
                              "settled_date": table.column("settled_date").to_pandas().to_numpy(),
                              "merchant_id": table.column("merchant_id").to_numpy(),
                              "amount_cents": cents_of(table.column("amount")),
                              "status": table.column("status").to_pandas().to_numpy()})
        frame[ROWS] = np.ones(len(frame), dtype=np.int64)
        frames.append(frame if kept is None else _fold(frame, kept))
        del frame
    columns = ["txn_id", "settled_date", "merchant_id", "amount_cents", "status", ROWS]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def _fold(frame: pd.DataFrame, kept: np.ndarray) -> pd.DataFrame:
    """The rows of ``kept`` keys as they are, every other row summed into its (day, status, merchant) group."""
    is_kept = np.isin(frame["txn_id"].to_numpy(), kept)
    groups = frame[~is_kept].groupby(GROUP, sort=False, observed=True)[["amount_cents", ROWS]].sum().reset_index()
    groups["txn_id"] = AGGREGATED
    return pd.concat([frame[is_kept], groups], ignore_index=True)


def _weights(frame: pd.DataFrame) -> np.ndarray:
    """Each frame row's table rows (1 each for a frame made without the ``rows`` column)."""
    return frame[ROWS].to_numpy() if ROWS in frame else np.ones(len(frame), dtype=np.int64)


def _by_status(frame: pd.DataFrame, with_merchants: bool) -> list[tuple]:
    """Rows, revenue and (optionally) distinct merchants per status, on integer codes."""
    codes, statuses = pd.factorize(frame["status"].to_numpy())
    counts = np.bincount(codes, weights=_weights(frame), minlength=len(statuses)).astype(np.int64)
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


@dataclass(frozen=True)
class StatusBatches:
    """Disjoint batches of scattered keys whose ``status`` is set one batch after another, the full-table read, and
    its expected answer after 0, 1, … of them."""

    batches: list[list[int]]
    query: Query
    expected: list[list[tuple]]


def status_batches(payments: PaymentsData, count: int, rows_per_batch: int, status: str) -> StatusBatches:
    """``count`` batches of ``rows_per_batch`` hotfix keys (taken round-robin, so each batch spans the table) and
    ``status_totals``' answer before any and after each (the degradation and the cadence check)."""
    keys = payments.hotfix_keys(count * rows_per_batch)
    batches = [keys[i::count] for i in range(count)]
    frame = payments_frame(payments.read_in_parts(PAYMENTS_FRAME_COLUMNS), keep=keys)
    query = next(q for q in payments_queries(payments.last_day, keys[0]) if q.name == "status_totals")
    expected = [query.expected(frame)]
    for batch in batches:
        frame.loc[frame["txn_id"].isin(batch), "status"] = status
        expected.append(query.expected(frame))
    return StatusBatches(batches, query, expected)


def settlement_queries(lookup_ids: list[int]) -> list[Query]:
    """Finance dashboards on monthly settlements: merchant x month aggregates, top-N, status mix, lookups."""

    def merchant_month(f: pd.DataFrame) -> list[tuple]:
        month = pd.to_datetime(f["settled_date"]).dt.month
        g = f.assign(month=month, n=_weights(f)).groupby(["merchant_id", "month"]).agg(
            size=("n", "sum"), sum=("amount_cents", "sum"))
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
