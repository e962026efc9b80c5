"""The read-engine layer: selection, answers checked per engine, unsupported reads recorded, DuckDB offline."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.engines import duckdb as duck
from bench.engines import select_engines
from bench.engines.base import ReadEngine
from bench.exceptions import BadOption, WrongAnswer
from bench.formats import make_adapter
from bench.formats.base import TableRef
from bench.measure.reads import run_reads
from bench.workload.queries import Query

needs_duckdb = pytest.mark.skipif(duck.missing() is not None, reason=str(duck.missing()))


class Scripted(ReadEngine):
    """An engine that answers from a script (or raises), to test what the harness does with its answers."""

    def __init__(self, name: str, rows=None, error: Exception | None = None) -> None:
        super().__init__()
        self.name, self.rows, self.error, self.calls = name, rows, error, 0

    def version(self) -> str:
        return f"{self.name} 0.0"

    def relation(self, fmt, table, mode, sql):
        return "t"

    def fetch(self, sql):
        self.calls += 1
        if self.error:
            raise self.error
        return self.rows


FMT = make_adapter("iceberg-mor", Path("/nowhere"), 1 << 20)
TABLE = TableRef("payments", "/nowhere/payments", "txn_id", "settled_date", "created_at")
QUERY = Query("status_totals", "SELECT status, COUNT(*) FROM {table} GROUP BY status", lambda f: [])
RIGHT = [("REVERSED", 12), ("SETTLED", 100)]


def test_engine_selection():
    assert select_engines("all") == ["spark", "duckdb"]
    assert select_engines("spark") == ["spark"]
    assert select_engines("duckdb") == ["spark", "duckdb"]  # Spark writes the tables, so it always reads too
    with pytest.raises(BadOption, match="unknown engine 'trino'"):
        select_engines("spark,trino")


def test_every_engine_reads_and_is_recorded():
    spark, second = Scripted("spark", RIGHT), Scripted("duckdb", list(reversed(RIGHT)))
    out = run_reads([spark, second], FMT, TABLE, [QUERY], {QUERY.name: RIGHT}, repeats=2)
    record = out[QUERY.name]
    assert record["n"] == 1 and record["cold_s"] and record["answer_ok"] and record["version"] == "spark 0.0"  # 1 cold + 1 warm
    assert set(record["engines"]) == {"spark", "duckdb"} and record["engines"]["duckdb"]["n"] == 1
    assert second.support() == {"iceberg-mor": {"snapshot": "reads"}}


def test_a_wrong_answer_from_the_second_engine_fails_with_engine_configuration_query_and_rows():
    wrong = [("SETTLED", 112)]  # e.g. an engine that ignores the position deletes
    with pytest.raises(WrongAnswer) as err:
        run_reads([Scripted("spark", RIGHT), Scripted("duckdb", wrong)], FMT, TABLE, [QUERY], {QUERY.name: RIGHT}, 1)
    message = str(err.value)
    assert "duckdb 0.0" in message and "iceberg-mor" in message and "status_totals" in message
    assert "('SETTLED', 112)" in message and "('REVERSED', 12)" in message


def test_an_engine_that_cannot_read_a_configuration_is_recorded_and_the_run_goes_on():
    second = Scripted("duckdb", error=RuntimeError("Not implemented Error: equality deletes\nmore detail"))
    out = run_reads([Scripted("spark", RIGHT), second], FMT, TABLE, [QUERY, QUERY], {QUERY.name: RIGHT}, 3)
    assert out[QUERY.name]["answer_ok"] and second.calls == 1  # asked once, then known unsupported
    reason = out[QUERY.name]["engines"]["duckdb"]["unsupported"]
    assert reason == "RuntimeError: Not implemented Error: equality deletes"
    assert second.support() == {"iceberg-mor": {"snapshot": f"unsupported by duckdb 0.0: {reason}"}}


def test_the_reference_engine_failing_to_read_is_a_failure_not_a_finding():
    with pytest.raises(RuntimeError):
        run_reads([Scripted("spark", error=RuntimeError("boom"))], FMT, TABLE, [QUERY], {QUERY.name: RIGHT}, 1)


# --- DuckDB and hudi-rs on the real sample tables in ../shared/testdata ------------------------------

@pytest.fixture(scope="module")
def duckdb_engine():
    engine = duck.DuckDBEngine()
    yield engine
    engine.close()


def _hudi(hudi_sample, relative: str) -> TableRef:
    path = hudi_sample(relative)
    return TableRef(path.name, str(path), "uuid", "city", "ts")


@needs_duckdb
def test_duckdb_loads_its_extensions_offline_and_records_its_limits(duckdb_engine):
    settings = duckdb_engine.settings()
    assert set(settings["extensions"]) == {"avro", "iceberg", "delta"}
    assert settings["autoinstall_known_extensions"] is False and settings["memory_limit_bytes"] > 0


@needs_duckdb
def test_hudi_rs_reads_a_merge_on_read_delete_in_its_log(duckdb_engine, hudi_sample):
    """v6_trips_8i3d: 8 inserts, then a DELETE of 3 rows written to a log file: 5 rows in the snapshot,
    and the read-optimized view (base files only) still shows all 8."""
    fmt = make_adapter("hudi-mor", Path("/nowhere"), 1 << 20)
    table = _hudi(hudi_sample, "quickstart_trips_table/mor/avro/v6_trips_8i3d.zip")
    count = "SELECT COUNT(*), COUNT(DISTINCT uuid) FROM {table}"
    assert duckdb_engine.query(fmt, table, count, "snapshot") == [(5, 5)]
    assert duckdb_engine.query(fmt, table, count, "read_optimized") == [(8, 8)]


@needs_duckdb
def test_hudi_rs_reads_a_merge_on_read_update_in_its_log(duckdb_engine, hudi_sample):
    """v6_trips_8i1u: 8 inserts, then 1 update in a log file: 8 rows, one from the second commit."""
    fmt = make_adapter("hudi-mor", Path("/nowhere"), 1 << 20)
    table = _hudi(hudi_sample, "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip")
    by_commit = "SELECT _hoodie_commit_time, COUNT(*) FROM {table} GROUP BY 1 ORDER BY 1"
    snapshot = duckdb_engine.query(fmt, table, by_commit, "snapshot")
    assert sum(n for _, n in snapshot) == 8 and [n for _, n in snapshot] == [7, 1]
    assert [n for _, n in duckdb_engine.query(fmt, table, by_commit, "read_optimized")] == [8]


@needs_duckdb
def test_duckdb_lets_go_of_the_arrow_tables_hudi_rs_read_once_the_query_is_answered(duckdb_engine, hudi_sample):
    """Each read of a Hudi table loads its columns into this process as Arrow; DuckDB holds a registered table until it
    is unregistered, so over a run one per table and read mode piled up in the harness's own memory."""
    fmt = make_adapter("hudi-mor", Path("/nowhere"), 1 << 20)
    table = _hudi(hudi_sample, "quickstart_trips_table/mor/avro/v6_trips_8i3d.zip")
    count = "SELECT COUNT(*) FROM {table}"
    held = "SELECT COUNT(*) FROM duckdb_tables() UNION ALL SELECT COUNT(*) FROM duckdb_views() WHERE NOT internal"
    assert duckdb_engine.query(fmt, table, count, "snapshot") == [(5,)]
    took, rows = duckdb_engine.attempt(fmt, table, count, "read_optimized")
    assert rows == [(8,)] and took > 0
    assert duckdb_engine.fetch(held) == [(0,), (0,)]
    with pytest.raises(Exception, match="hudi_"):  # the name the read registered is gone
        duckdb_engine.fetch(f"SELECT COUNT(*) FROM hudi_{table.name}_snapshot")


@needs_duckdb
def test_hudi_rs_reads_copy_on_write(duckdb_engine, hudi_sample):
    """v6_nonpartitioned (COW): an insert then an upsert, rewritten into base files."""
    fmt = make_adapter("hudi-cow", Path("/nowhere"), 1 << 20)
    table = _hudi(hudi_sample, "sample_table/cow/v6_nonpartitioned.zip")
    rows = duckdb_engine.query(fmt, table, "SELECT COUNT(*), COUNT(DISTINCT _hoodie_record_key) FROM {table}", "snapshot")
    assert rows[0][0] == rows[0][1] > 0


@needs_duckdb
def test_duckdb_applies_a_delta_deletion_vector(duckdb_engine, shared_testdata, tmp_path):
    """table-with-dv-small is table-without-dv-small with a DV of cardinality 2: two rows fewer."""
    fmt = make_adapter("delta-dv", tmp_path, 1 << 20)
    counts = {}
    for name in ("table-with-dv-small", "table-without-dv-small"):
        shutil.copytree(shared_testdata / "delta" / name, tmp_path / name)
        table = TableRef(name, str(tmp_path / name), "value", "", "")
        counts[name] = duckdb_engine.query(fmt, table, "SELECT COUNT(*) FROM {table}", "snapshot")[0][0]
    assert counts["table-with-dv-small"] == counts["table-without-dv-small"] - 2


@needs_duckdb
def test_duckdb_declines_object_store_tables_with_a_reason(duckdb_engine):
    fmt = make_adapter("delta-cow", Path("/nowhere"), 1 << 20)
    with pytest.raises(OSError, match="s3a:// tables are not read by this engine"):
        duckdb_engine.relation(fmt, TableRef("t", "s3a://bucket/t", "k", "", ""), "snapshot")
