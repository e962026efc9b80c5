"""The .hoodie timeline parser on the real Hudi sample tables (layout 1 JSON and layout 2 Avro)."""

from __future__ import annotations

from bench.formats import hudi_timeline as tl
from bench.formats.base import TableRef
from bench.formats.hudi import HudiFormat


def test_layout1_mor_upsert_writes_a_log(hudi_sample):
    path = hudi_sample("sample_table/mor/parquet/v6_nonpartitioned.zip")
    assert tl.table_properties(path)["hoodie.table.type"] == "MERGE_ON_READ"
    writes = tl.completed_writes(path)
    assert [w.action for w in writes] == ["deltacommit", "deltacommit"]
    insert, upsert = tl.summaries_since(path, None)
    assert insert.records_inserted == 3 and insert.base_files_written == 1
    assert upsert.log_files_written == 1 and upsert.records_updated == 1
    assert tl.live_files(path) == {"data_files": 2, "delete_files": 1}


def test_layout1_cow_rewrites_base_files(hudi_sample):
    path = hudi_sample("sample_table/cow/v6_nonpartitioned.zip")
    first, second = tl.summaries_since(path, None)
    assert second.action == "commit" and second.log_files_written == 0 and second.base_files_replaced >= 1


def test_layout2_avro_timeline_with_compaction(hudi_sample):
    path = hudi_sample("sample_table/mor/avro/v9_txns_simple_nometa.zip")
    assert tl.timeline_dir(path).name == "timeline"
    summaries = tl.summaries_since(path, None)
    actions = [s.action for s in summaries]
    assert actions.count("deltacommit") == 10 and actions.count("replacecommit") == 2
    (compaction,) = [s for s in summaries if s.is_compaction]
    assert compaction.action == "commit" and compaction.log_files_compacted == 3 and compaction.log_bytes_compacted == 5939
    deletes = [s for s in summaries if s.operation == "DELETE_PREPPED"]
    assert deletes and all(s.records_deleted == 1 and s.log_files_written == 1 for s in deletes)
    assert tl.summaries_since(path, compaction.instant)[0].instant > compaction.instant


def test_adapter_sums_commits_since_a_marker(hudi_sample, tmp_path):
    path = hudi_sample("sample_table/mor/avro/v9_txns_simple_nometa.zip")
    fmt = HudiFormat("hudi-mor", "mor", tmp_path, 1 << 27)
    ref = TableRef("t", path, "txn_id", "region", "txn_ts")
    first = tl.completed_writes(path)[0].requested
    info = fmt.describe_commits(ref, first)
    assert info.commits == len(tl.completed_writes(path)) - 1
    assert info.delete_files_removed == 3 and fmt.commit_marker(ref) == tl.completed_writes(path)[-1].requested
    assert fmt.classify("region=us/.db2f-0_20260307135830801.log.1_0-10-23") == "log"
    assert fmt.classify(".hoodie/timeline/x.commit") == "metadata"
    assert fmt.classify("region=us/db2f-0_0-62-129_20260307135839895.parquet") == "data"


def test_every_sample_table_parses(shared_testdata, hudi_sample):
    for zip_path in sorted((shared_testdata / "hudi").rglob("*.zip")):
        path = hudi_sample(str(zip_path.relative_to(shared_testdata / "hudi")))
        for summary in tl.summaries_since(path, None):
            assert summary.bytes_written >= 0
        tl.live_files(path)


def test_instant_times_read_as_epoch_seconds_in_the_writers_zone():
    import datetime

    at = tl.epoch("20261126074512345")
    assert at == datetime.datetime(2026, 11, 26, 7, 45, 12, 345000).timestamp()
    assert tl.epoch(None) is None and tl.epoch("00000000") is None
