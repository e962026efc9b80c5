"""``cowmor inspect``: tables whose truth is known (written here by delta-rs and pyiceberg at known layouts, and the
real Hudi sample tables in ../shared/testdata) read back exactly, read-only, and bad input in one line."""

from __future__ import annotations

import dataclasses
import hashlib
import zipfile
from pathlib import Path

import pyarrow as pa
import pytest

from bench.exceptions import BadOption
from bench.inspect import detect, read_facts
from bench.inspect.profile import files_touched_by_random_keys, profile

TESTDATA = Path(__file__).resolve().parents[3] / "shared" / "testdata"
FILES, ROWS = 4, 250


def _batch(i: int) -> pa.Table:
    first = i * ROWS
    return pa.table({"txn_id": pa.array(range(first, first + ROWS), pa.int64()),
                     "status": pa.array(["SETTLED"] * ROWS), "day": pa.array([i % 2] * ROWS, pa.int32())})


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def delta_table(tmp_path) -> Path:
    import deltalake

    path = tmp_path / "delta"
    for i in range(FILES):
        deltalake.write_deltalake(str(path), _batch(i), mode="append")
    deltalake.DeltaTable(str(path)).update({"status": "'REVERSED'"}, predicate="txn_id = 3 OR txn_id = 7")
    return path


@pytest.fixture
def iceberg_table(tmp_path) -> Path:
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh")
    catalog.create_namespace("n")
    table = catalog.create_table("n.payments", schema=_batch(0).schema)
    for i in range(FILES):
        table.append(_batch(i))
    return Path(table.metadata_location.removeprefix("file://"))


def test_a_delta_table_at_a_known_layout_reads_back_exactly_and_is_left_untouched(delta_table):
    before = _tree(delta_table)
    facts = read_facts(str(delta_table), key="txn_id")
    p = profile(facts, keys_per_update=1)
    assert _tree(delta_table) == before  # read-only: every file and the log byte-identical
    assert p["format"] == "delta" and p["rows"] == FILES * ROWS
    assert p["data_files"] == FILES  # the update rewrote the one file holding both keys
    assert sorted((f.key_min, f.key_max) for f in facts.files) == [(i * ROWS, (i + 1) * ROWS - 1) for i in range(FILES)]
    assert p["files_touched_by_random_keys"] == 1.0
    assert p["workload"]["row_level_commits"] == 1 and p["workload"]["rows_changed_per_update"] == 2
    assert p["workload"]["commits"] == FILES + 1


def test_an_iceberg_table_at_a_known_layout_reads_back_exactly_and_is_left_untouched(iceberg_table):
    root = iceberg_table.parent.parent
    before = _tree(root)
    facts = read_facts(str(iceberg_table), key="txn_id")
    p = profile(facts, keys_per_update=ROWS * FILES)
    assert _tree(root) == before
    assert p["format"] == "iceberg" and p["data_files"] == FILES and p["rows"] == FILES * ROWS
    assert sorted((f.key_min, f.key_max) for f in facts.files) == [(i * ROWS, (i + 1) * ROWS - 1) for i in range(FILES)]
    assert p["files_touched_by_random_keys"] == FILES  # a key in every file's range, for that many keys
    assert detect(str(root)) == "iceberg" and p["workload"]["commits"] == FILES


@pytest.mark.skipif(not TESTDATA.exists(), reason="../shared/testdata is not beside this clone")
def test_a_real_hudi_table_gives_its_files_logs_commits_and_compaction(tmp_path):
    with zipfile.ZipFile(TESTDATA / "hudi" / "quickstart_trips_table" / "mor" / "avro" / "v8_trips_8i3u1d.zip") as z:
        z.extractall(tmp_path)
    root = tmp_path / "v8_trips_8i3u1d"
    before = _tree(root)
    p = profile(read_facts(str(root)))
    assert _tree(root) == before
    assert p["format"] == "hudi" and p["key"] == "uuid" and p["data_files"] == 3 and p["rows"] == 1671
    assert p["outstanding_deletes"] == 1 and p["workload"]["compactions"] == 1 and p["workload"]["commits"] == 7


def test_bad_input_is_one_line(tmp_path):
    with pytest.raises(BadOption, match="no such table folder"):
        detect(str(tmp_path / "nothing"))
    with pytest.raises(BadOption, match="not a Delta"):
        detect(str(tmp_path))
    (tmp_path / "_delta_log").mkdir()
    with pytest.raises(BadOption, match="cannot read it as a delta table") as err:
        read_facts(str(tmp_path))
    assert "\n" not in str(err.value)


def test_random_keys_touch_the_files_whose_ranges_hold_them():
    ranges = [(0, 9), (10, 19), (20, 29), (30, 39)]
    assert files_touched_by_random_keys(ranges, 1) == 1.0
    assert files_touched_by_random_keys(ranges, 10_000) == 4.0
    overlapping = [(0, 39)] * 4  # an unclustered key: every file holds every key's range
    assert files_touched_by_random_keys(overlapping, 1) == 4.0
    assert files_touched_by_random_keys([(None, None)], 5) is None


def test_report_table_takes_the_profile_inspect_wrote(delta_table, tmp_path):
    import json

    from bench.report.model import parse_table

    p = profile(read_facts(str(delta_table), key="txn_id"), reads_per_day=500)
    path = tmp_path / "orders.json"
    path.write_text(json.dumps(p, default=str))
    t = parse_table(str(path))
    assert (t.name, t.files, t.rows_per_update, t.reads_per_day) == ("orders", FILES, 2, 500)
    assert t.file_mb == pytest.approx(p["file_bytes"]["median"] / 2**20)
    path.write_text(json.dumps({**p, "reads_per_day": None}, default=str))
    with pytest.raises(BadOption, match="lacks reads per day"):
        parse_table(str(path))


def test_a_replica_keeps_the_profiles_layout_and_scales_only_its_partitions(tmp_path):
    import deltalake

    from bench.inspect.replica import notes, replica_params

    path = tmp_path / "by_day"
    for i in range(FILES):  # two days, two files each, 250 rows a file
        deltalake.write_deltalake(str(path), _batch(i), mode="append", partition_by=["day"])
    p = profile(read_facts(str(path), key="txn_id"), keys_per_update=10)
    assert (p["partitions"], p["files_per_partition"], p["rows"]) == (2, 2.0, FILES * ROWS)
    assert replica_params(p) == {"days": 2, "files_per_day": 2, "rows_per_file": ROWS, "hotfix_rows": 10}
    assert replica_params(p, 0.5) == {"days": 1, "files_per_day": 2, "rows_per_file": ROWS, "hotfix_rows": 5}
    with pytest.raises(BadOption, match="--fraction"):
        replica_params(p, 1.5)
    # a random update's keys in as many files as keys, at a tenth of 90 days: as clustered as the replica, no note;
    # in 4,000 of its files the table's key is looser than the generator's, and the replica says so
    seed = {"partitions": 90, "files_touched_by_random_keys": 1152.0}
    tenth = {"days": 9, "files_per_day": 54, "rows_per_file": 31408, "hotfix_rows": 120}
    assert notes(seed, tenth) == []
    assert "less clustered" in notes({**seed, "files_touched_by_random_keys": 4000.0}, tenth)[0]
    with pytest.raises(BadOption, match="lacks"):
        replica_params({**p, "keys_per_update": None, "workload": {}})


def test_a_table_without_statistics_or_row_level_history_says_what_it_cannot_know(tmp_path):
    """A Delta table written with no column statistics and only appends: the key spread and the rows an update
    changes are None with a note saying why and which option gives them, never a guess."""
    import deltalake

    path = tmp_path / "bare"
    for i in range(2):
        deltalake.write_deltalake(str(path), _batch(i), mode="append",
                                  configuration={"delta.dataSkippingNumIndexedCols": "0"})
    p = profile(read_facts(str(path), key="txn_id"))
    assert p["data_files"] == 2 and p["rows"] == 2 * ROWS and p["workload"]["row_level_commits"] == 0
    assert p["keys_per_update"] is None and p["files_touched_by_random_keys"] is None
    assert any("no statistics for txn_id" in n for n in p["notes"])
    assert any("give --keys-per-update" in n for n in p["notes"])
    given = profile(read_facts(str(path), key="txn_id"), keys_per_update=10)
    assert given["keys_per_update"] == 10 and given["files_touched_by_random_keys"] is None
    assert any("unknown without per-file key statistics" in n for n in given["notes"])


def test_a_catalog_table_is_found_through_pyicebergs_own_configuration(iceberg_table, tmp_path):
    """The SQL catalog the fixture wrote (a JDBC catalog's schema), named by environment variables as pyiceberg reads
    them when it starts: the same profile as from its metadata file; a missing table, an unconfigured catalog and a
    catalog for another format in one line each, exit 2."""
    import json
    import os
    import subprocess
    import sys

    # a SQL catalog keys its tables by the catalog's name: the fixture's writer named it "t"
    env = {**os.environ, "PYICEBERG_CATALOG__T__URI": f"sqlite:///{tmp_path}/catalog.db",
           "PYICEBERG_CATALOG__T__WAREHOUSE": f"file://{tmp_path}/wh"}

    def inspect(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "bench", "inspect", *args], env=env, capture_output=True, text=True,
                              timeout=120, cwd=Path(__file__).resolve().parents[2])

    root = iceberg_table.parent.parent
    before = _tree(root)
    done = inspect("--catalog", "t", "n.payments", "--key", "txn_id", "--keys-per-update", "1",
                   "-o", str(tmp_path / "p.json"))
    assert done.returncode == 0, done.stderr
    assert _tree(root) == before
    from_catalog = json.loads((tmp_path / "p.json").read_text())
    from_file = json.loads(json.dumps(profile(read_facts(str(iceberg_table), key="txn_id"), keys_per_update=1), default=str))
    assert {k: v for k, v in from_catalog.items() if k != "location"} == \
        {k: v for k, v in from_file.items() if k != "location"}
    assert from_catalog["data_files"] == FILES
    for args, line in ((("--catalog", "t", "n.refunds"), "cowmor: catalog t: no table n.refunds"),
                       (("--catalog", "nowhere", "n.payments"), "cowmor: catalog nowhere: URI missing"),
                       (("--catalog", "t", "--format", "delta", "n.payments"), "cowmor: --catalog t: catalogs are read "
                                                                               "for Iceberg tables")):
        failed = inspect(*args)
        assert failed.returncode == 2 and failed.stderr.startswith(line) and failed.stderr.count("\n") == 1, failed.stderr


@pytest.mark.skipif(not TESTDATA.exists(), reason="../shared/testdata is not beside this clone")
def test_a_delta_table_with_deletion_vectors_counts_them_and_its_live_rows():
    """A real Delta table whose DELETE wrote a deletion vector (Databricks' sample, 10 rows, 2 deleted): its one
    vector outstanding, 8 live rows, and the DELETE's 2 rows in the history."""
    root = TESTDATA / "delta" / "table-with-dv-small"
    before = _tree(root)
    facts = read_facts(str(root), key="value")
    p = profile(facts, keys_per_update=2)
    assert _tree(root) == before
    assert p["outstanding_deletes"] == 1 and p["rows"] == 8 and p["data_files"] == 1
    assert [c.rows_changed for c in facts.commits if c.operation == "DELETE"] == [2]


def test_a_compaction_of_several_commits_in_a_row_is_one_and_the_cadence_counts_the_writes_between():
    """Iceberg's merge-on-read compaction is two commits (data files, then position deletes): four writes and a
    compaction, twice, is a compaction every 4 writes, not every 0 or 5."""
    from bench.inspect import Commit, TableFacts
    from bench.inspect.profile import workload

    write, compact = (lambda t: Commit(t, "overwrite", 120)), (lambda t: Commit(t, "replace", None, compaction=True))
    cycle = [write(1), write(2), write(3), write(4), compact(5), compact(6)]
    commits = [Commit(0, "append"), *cycle, *[dataclasses.replace(c, at_ms=c.at_ms + 10) for c in cycle]]
    load = workload(TableFacts("iceberg", "x", [], commits, "txn_id"))
    assert load["compactions"] == 2 and load["writes_per_compaction"] == 4


def test_an_iceberg_commit_changes_its_net_deletes_and_a_copy_on_write_update_is_not_guessed():
    """Snapshot summaries as Iceberg 1.10 on Spark wrote them at `small`: a merge-on-read update rewrites its
    partition's delete file with the earlier deletes carried over; a copy-on-write update keeps the row count."""
    from bench.inspect.iceberg import _rows_changed

    assert _rows_changed({"added-records": "120", "added-position-deletes": "120"}) == 120
    assert _rows_changed({"added-records": "120", "added-position-deletes": "204", "removed-position-deletes": "84"}) == 120
    assert _rows_changed({"added-records": "33856000", "deleted-records": "33856000"}) is None
    assert _rows_changed({"added-records": "990", "deleted-records": "1000"}) == 10  # a copy-on-write delete


def test_a_missing_metadata_file_and_an_unreadable_table_are_one_line_each(iceberg_table, tmp_path):
    """The metadata file a version hint names, gone; a Delta log the user may not read (not as root: root reads
    files whatever their mode)."""
    import os

    hint = iceberg_table.parent / "version-hint.text"
    hint.write_text("99")
    with pytest.raises(BadOption, match=r"cannot read it as an iceberg table: .*v99\.metadata\.json") as err:
        read_facts(str(iceberg_table.parent.parent))
    assert "\n" not in str(err.value)
    if os.geteuid() == 0:
        return
    log = tmp_path / "delta" / "_delta_log"
    log.mkdir(parents=True)
    log.chmod(0)
    try:
        with pytest.raises(BadOption, match="cannot") as err:
            read_facts(str(tmp_path / "delta"))
        assert "\n" not in str(err.value)
    finally:
        log.chmod(0o755)


@pytest.mark.skipif(not TESTDATA.exists(), reason="../shared/testdata is not beside this clone")
def test_hudi_tables_of_older_and_newer_table_versions_read_and_an_empty_one_says_so(tmp_path):
    """hudi-rs reads table versions 6, 8 and 9 (the samples'); an empty table is named empty, not guessed at."""
    from bench.inspect.profile import text

    for name in ("quickstart_trips_table/mor/avro/v6_trips_8i1u.zip", "sample_table/cow/v9_txns_simple_nometa.zip",
                 "sample_table/cow/v6_empty.zip"):
        with zipfile.ZipFile(TESTDATA / "hudi" / name) as z:
            z.extractall(tmp_path)
    assert profile(read_facts(str(tmp_path / "v6_trips_8i1u")))["rows"] == 4469
    assert profile(read_facts(str(tmp_path / "v9_txns_simple_nometa")))["data_files"] == 5
    empty = text(profile(read_facts(str(tmp_path / "v6_empty"))))
    assert "none: an empty table" in empty and "give --keys-per-update" in empty
