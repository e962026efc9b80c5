"""An order-independent digest of a table's rows, computed the same way by every engine in SQL and by Python from
the generated data: the whole-table oracle of the several-writers races.

Each row becomes one string (every column cast to text, the timestamp as microseconds since the epoch, a NULL as
``\\N``, joined by ``|``); its MD5's first 15 hex digits are a number; the digest is their sum over the rows (so row
order, files and engines do not matter) with the row count. Two digests are taken: the rows the race did not touch,
every column; the rows it touched, every column but those its batches change (their values are judged key by key,
``invariants.check_rows``).
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

NULL = "\\N"
HEX_DIGITS = 15  # 60 bits: a row's number fits a BIGINT, the sum of a billion of them a DECIMAL(38, 0)


def _texts(table: pa.Table, names: list[str]) -> list[str]:
    """Each row of ``table``'s ``names`` columns as the engines' SQL writes it (``sql``): every value cast to text,
    a timestamp as microseconds since the epoch, a NULL as ``\\N``, joined by ``|``."""
    columns = []
    for name in names:
        column = table.column(name)
        if pa.types.is_timestamp(column.type):
            column = pc.cast(column, pa.int64())  # the epoch microseconds of the stored instant (unit: us)
        columns.append(pc.fill_null(pc.cast(column, pa.string()), NULL))
    return pc.binary_join_element_wise(*columns, "|").to_pylist()


def _number(text: str) -> int:
    return int(hashlib.md5(text.encode()).hexdigest()[:HEX_DIGITS], 16)


def expected(table: pa.Table, key: str, touched: set[int], deleted: set[int], changed: tuple[str, ...]) -> dict[str, list[int]]:
    """The digests of the generated ``table`` after a race that changed ``changed`` columns of the ``touched`` keys
    and deleted the ``deleted`` ones: ``{"untouched": [rows, sum], "touched": [rows, sum]}``."""
    keys = table.column(key)
    gone = pc.is_in(keys, pa.array(sorted(deleted), keys.type))
    hit = pc.is_in(keys, pa.array(sorted(touched), keys.type))
    untouched = table.filter(pc.invert(pc.or_(gone, hit)))
    changed_rows = table.filter(pc.and_(hit, pc.invert(gone)))
    kept = [c for c in table.column_names if c not in changed]
    return {"untouched": [untouched.num_rows, _sum(untouched, table.column_names)],
            "touched": [changed_rows.num_rows, _sum(changed_rows, kept)]}


SLICE_ROWS = 100_000  # rows made text at a time: a table's every row as a Python string at once took gigabytes


def _sum(table: pa.Table, names: list[str]) -> int:
    """The sum of the rows' numbers, a slice at a time (the same sum: addition does not care about order)."""
    return sum(sum(map(_number, _texts(table.slice(start, SLICE_ROWS), names)))
               for start in range(0, table.num_rows, SLICE_ROWS))


class Dialect(Protocol):
    """The two expressions the digest needs that Spark SQL and DuckDB spell differently (``ReadEngine``)."""

    def epoch_micros(self, column: str) -> str: ...

    def hex_number(self, hex_text: str) -> str: ...


def sql(columns: list[tuple[str, pa.DataType]], key: str, touched: set[int], changed: tuple[str, ...],
        dialect: Dialect) -> str:
    """The engine-side digests in one statement over ``{table}``: rows and sums of the untouched rows (every column)
    and of the touched ones (every column but ``changed``)."""
    def number(names: list[tuple[str, pa.DataType]]) -> str:
        texts = ", ".join(f"coalesce(CAST({dialect.epoch_micros(n) if pa.types.is_timestamp(t) else n} AS STRING), "
                          f"'{NULL}')" for n, t in names)
        hex_text = f"substr(md5(concat_ws('|', {texts})), 1, {HEX_DIGITS})"
        return f"CAST({dialect.hex_number(hex_text)} AS DECIMAL(38, 0))"

    listed = ", ".join(str(k) for k in sorted(touched)) or "NULL"
    is_touched = f"{key} IN ({listed})"
    kept = [c for c in columns if c[0] not in changed]
    return (f"SELECT SUM(CASE WHEN {is_touched} THEN 0 ELSE 1 END), SUM(CASE WHEN {is_touched} THEN 0 ELSE {number(columns)} END), "
            f"SUM(CASE WHEN {is_touched} THEN 1 ELSE 0 END), SUM(CASE WHEN {is_touched} THEN {number(kept)} ELSE 0 END) "
            "FROM {table}")


def from_row(row: tuple[Any, ...]) -> dict[str, list[int]]:
    """The engine's one result row as ``expected`` gives its digests (an empty part sums to NULL: 0)."""
    return {"untouched": [int(row[0] or 0), int(row[1] or 0)], "touched": [int(row[2] or 0), int(row[3] or 0)]}
