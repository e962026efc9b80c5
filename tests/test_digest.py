"""The whole-table oracle of the several-writers races: the digest computed in Python from the generated data and
in SQL by an engine agree on the same rows, and a planted change in any value the race must not touch fails it."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from bench.engines.duckdb import DuckDBEngine
from bench.measure import digest
from bench.measure.invariants import check_whole_table
from bench.measure.writers import CHANGED_COLUMNS
from bench.workload.datagen import PAYMENTS_SCHEMA, generate_payments

COLUMNS = [(f.name, f.type) for f in PAYMENTS_SCHEMA]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    data = generate_payments(tmp_path_factory.mktemp("digest"), 2, 2, 50, 1, progress=None)
    table = data.read(PAYMENTS_SCHEMA.names)
    keys = table.column("txn_id").to_pylist()
    return table, set(keys[:5]), set(keys[5:7])


def _engine_digest(table: pa.Table, touched: set[int]) -> dict[str, list[int]]:
    """DuckDB's digest of ``table`` through the SQL the races run (its own dialect's two expressions)."""
    con = duckdb.connect()
    con.register("t", table)
    dialect = DuckDBEngine.__new__(DuckDBEngine)  # the dialect only: no connection, no extensions
    return digest.from_row(con.execute(digest.sql(COLUMNS, "txn_id", touched, CHANGED_COLUMNS, dialect).format(table="t")).fetchall()[0])


def _without(table: pa.Table, keys: set[int]) -> pa.Table:
    return table.filter(pc.invert(pc.is_in(table.column("txn_id"), pa.array(sorted(keys), pa.int64()))))


def _set(table: pa.Table, row: int, column: str, value) -> pa.Table:
    values = table.column(column).to_pylist()
    values[row] = value
    return table.set_column(table.schema.get_field_index(column), column, pa.array(values, table.schema.field(column).type))


def test_python_and_sql_digests_agree_and_the_race_s_own_changes_pass(generated):
    table, touched, deleted = generated
    expected = digest.expected(table, "txn_id", touched, deleted, CHANGED_COLUMNS)
    assert expected["untouched"][0] == table.num_rows - 7 and expected["touched"][0] == 5
    raced = _set(_set(_without(table, deleted), 0, "notes", "w0b1"), 1, "amount", None)  # rows 0 and 1 are touched keys
    assert check_whole_table(expected, _engine_digest(raced, touched))["every_other_value_unchanged"]["ok"]


@pytest.mark.parametrize("fault, words", [
    (lambda t: _set(t, 40, "merchant_id", 7), "a value changed"),           # an untouched row, any column
    (lambda t: _set(t, 40, "notes", "w1b0"), "a value changed"),            # an untouched row's note
    (lambda t: _set(t, 2, "status", "REFUNDED"), "a value changed"),        # a touched row, a column no batch changes
    (lambda t: t.slice(1), "rows"),                                         # a touched row lost
    (lambda t: pa.concat_tables([t, t.slice(50, 1)]), "rows"),              # an untouched row twice
])
def test_a_planted_change_the_race_must_not_make_fails_the_check(generated, fault, words):
    table, touched, deleted = generated
    expected = digest.expected(table, "txn_id", touched, deleted, CHANGED_COLUMNS)
    check = check_whole_table(expected, _engine_digest(fault(_without(table, deleted)), touched))["every_other_value_unchanged"]
    assert not check["ok"] and words in check["evidence"][0], check
