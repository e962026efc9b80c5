"""The dinner-peak ``order_events`` table: base data, deterministic upsert batches, and its expected state.

The expected state is kept in pandas and updated batch by batch, independently of any table format,
so the final table can be checked against it.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pandas as pd
import pyarrow as pa

from bench.workload.datagen import FIRST_DAY, TableShape, decimal_from_cents, write_once
from bench.workload.queries import CENT, Query, money, normalize

ORDER_ID_BASE = 5_000_000_000
CITIES = ("Bengaluru", "Mumbai", "Delhi", "Hyderabad", "Chennai", "Pune")
STATUSES = ("PLACED", "PREPARING", "OUT_FOR_DELIVERY", "DELIVERED", "CANCELLED")
SCHEMA_DDL = ("order_id bigint, restaurant_id int, city string, event_date date, status string, "
              "amount decimal(10,2), event_time timestamp, items int")
COLUMNS = ("order_id", "restaurant_id", "city", "event_date", "status", "amount_cents", "event_time", "items")


class OrdersShape(TableShape):
    """The order_events table's shape (one file per (day, file) block of base rows)."""


def base_frame(shape: OrdersShape) -> pd.DataFrame:
    """All base rows, one block of ``rows_per_file`` per (day, file): the expected state before any batch."""
    rng = np.random.default_rng([shape.seed, 7])
    n = shape.rows
    file_no = np.repeat(np.arange(shape.days * shape.files_per_day), shape.rows_per_file)
    day = file_no // shape.files_per_day
    start = np.datetime64(FIRST_DAY, "us")
    return pd.DataFrame({
        "order_id": np.arange(n, dtype=np.int64) + ORDER_ID_BASE,
        "restaurant_id": rng.integers(1, 5000, n).astype(np.int32),
        "city": np.array(CITIES)[rng.integers(0, len(CITIES), n)],
        "event_date": [FIRST_DAY + dt.timedelta(days=int(d)) for d in day],
        "status": np.array(STATUSES)[rng.choice(len(STATUSES), n, p=[0.05, 0.05, 0.05, 0.8, 0.05])],
        "amount_cents": rng.integers(9_900, 250_000, n).astype(np.int64),
        "event_time": start + (day * 86_400 + rng.integers(0, 86_400, n)) * np.timedelta64(1_000_000, "us"),
        "items": rng.integers(1, 8, n).astype(np.int32),
        "_file": file_no,
    })


def to_arrow(frame: pd.DataFrame) -> pa.Table:
    return pa.table({
        "order_id": pa.array(frame["order_id"].to_numpy(), pa.int64()),
        "restaurant_id": pa.array(frame["restaurant_id"].to_numpy(), pa.int32()),
        "city": pa.array(frame["city"].to_numpy(), pa.string()),
        "event_date": pa.array(list(frame["event_date"]), pa.date32()),
        "status": pa.array(frame["status"].to_numpy(), pa.string()),
        "amount": decimal_from_cents(frame["amount_cents"].to_numpy(), 10, 2),
        "event_time": pa.array(frame["event_time"].to_numpy(), pa.timestamp("us", tz="UTC")),
        "items": pa.array(frame["items"].to_numpy(), pa.int32()),
    })


def batch(expected: pd.DataFrame, shape: OrdersShape, number: int, updates: int, inserts: int,
          files_fraction: float = 0.003) -> pd.DataFrame:
    """Batch ``number``: ``updates`` existing orders from a few files (~0.3% of them) move on a status,
    plus ``inserts`` new orders on the last day. Rows carry every column; event_time grows, so the newest wins."""
    rng = np.random.default_rng([shape.seed, 11, number])
    files = shape.days * shape.files_per_day
    touched = rng.choice(files, size=max(1, round(files * files_fraction)), replace=False)
    pool = expected[expected["_file"].isin(touched)]
    chosen = pool.sample(n=min(updates, len(pool)), random_state=int(rng.integers(2**31))).copy()
    moves = {s: STATUSES[min(i + 1, len(STATUSES) - 2)] if s != "CANCELLED" else "CANCELLED" for i, s in enumerate(STATUSES)}
    chosen["status"] = chosen["status"].map(moves)
    chosen["amount_cents"] = chosen["amount_cents"] + 100 * (number + 1)
    bump = np.timedelta64(3_600_000_000 * (number + 1), "us")
    chosen["event_time"] = np.datetime64(shape.last_day, "us") + np.timedelta64(86_400_000_000, "us") + bump
    first_new = ORDER_ID_BASE + shape.rows + number * inserts
    new = pd.DataFrame({
        "order_id": np.arange(first_new, first_new + inserts, dtype=np.int64),
        "restaurant_id": rng.integers(1, 5000, inserts).astype(np.int32),
        "city": np.array(CITIES)[rng.integers(0, len(CITIES), inserts)],
        "event_date": [shape.last_day] * inserts,
        "status": ["PLACED"] * inserts,
        "amount_cents": rng.integers(9_900, 250_000, inserts).astype(np.int64),
        "event_time": [np.datetime64(shape.last_day, "us") + bump] * inserts,
        "items": rng.integers(1, 8, inserts).astype(np.int32),
        "_file": [-1] * inserts,
    })
    return pd.concat([chosen, new], ignore_index=True)


def apply(expected: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """The expected state after an upsert of ``rows`` (replace by key, insert the rest)."""
    kept = expected[~expected["order_id"].isin(rows["order_id"])]
    return pd.concat([kept, rows], ignore_index=True)


def spark_rows(rows: pd.DataFrame) -> list[tuple]:
    """Plain Python tuples in ``SCHEMA_DDL`` order, decimals exact."""
    return [(int(r.order_id), int(r.restaurant_id), r.city, r.event_date, r.status,
             (Decimal(int(r.amount_cents)) * CENT).quantize(CENT),
             pd.Timestamp(r.event_time).tz_localize("UTC").to_pydatetime(), int(r.items))
            for r in rows.itertuples()]


def _group(frame: pd.DataFrame, column: str) -> list[tuple]:
    return normalize([(k, int(len(g)), money(g["amount_cents"].sum())) for k, g in frame.groupby(column)])


def orders_queries(last_day: dt.date, lookup_id: int) -> list[Query]:
    """The restaurant-ops dashboards: today's orders by status, revenue by city, one order."""
    return [
        Query("orders_today_by_status",
              f"SELECT status, COUNT(*), SUM(amount) FROM {{table}} WHERE event_date = DATE '{last_day}' GROUP BY status",
              lambda f: _group(f[f["event_date"] == last_day], "status")),
        Query("revenue_by_city", "SELECT city, COUNT(*), SUM(amount) FROM {table} GROUP BY city",
              lambda f: _group(f, "city")),
        Query("order_lookup", f"SELECT order_id, status, amount FROM {{table}} WHERE order_id = {lookup_id}",
              lambda f: normalize([(int(r.order_id), r.status, money(r.amount_cents))
                                   for r in f[f["order_id"] == lookup_id].itertuples()])),
    ]


def write_orders(data_dir, shape: OrdersShape, frame: pd.DataFrame, progress=print):
    """The base orders as Parquet, one file per (day, file) block, written once per shape."""
    files = ((f"part-{n:05d}.parquet", to_arrow(block)) for n, block in frame.groupby("_file", sort=True))
    return write_once(data_dir, "order_events", vars(shape), files, progress, total=int(frame["_file"].nunique()))
