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


def _avro_commit(label: str | None, files: int) -> bytes:
    import io

    import fastavro

    schema = {"type": "record", "name": "HoodieCommitMetadata", "fields": [
        {"name": "partitionToWriteStats", "type": {"type": "map", "values": {"type": "array", "items": {
            "type": "record", "name": "HoodieWriteStat", "fields": [{"name": "path", "type": "string"},
                                                                    {"name": "fileId", "type": "string"}]}}}},
        {"name": "extraMetadata", "type": {"type": "map", "values": "string"}},
        {"name": "operationType", "type": "string"}]}
    record = {"partitionToWriteStats": {"d=1": [{"path": f"d=1/.f{n}_1.log.1", "fileId": f"f{n}"} for n in range(files)]},
              "extraMetadata": {"_cowmor.batch": label} if label else {},
              "operationType": "UPSERT_PREPPED" if label else "COMPACT"}
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), [record])
    return out.getvalue()


def test_archived_instants_join_the_history(tmp_path):
    """Hudi 1.x moves instants beyond ``hoodie.keep.max.commits`` to its LSM timeline; several writers and a table
    service reach it in minutes, and a history read from the active timeline alone then lacks acknowledged commits.
    Only the files the latest manifest names count (an LSM compaction leaves replaced files behind)."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    history = tmp_path / ".hoodie" / "timeline" / "history"
    history.mkdir(parents=True)
    rows = [("20260101000001000", "20260101000002000", "deltacommit", _avro_commit("w0b0#1", 2)),
            ("20260101000003000", "20260101000004000", "commit", _avro_commit(None, 1)),
            ("20260101000005000", "20260101000006000", "deltacommit", _avro_commit("w1b0#1", 0))]
    table = pa.table({"instantTime": [r[0] for r in rows], "completionTime": [r[1] for r in rows],
                      "action": [r[2] for r in rows], "metadata": [r[3] for r in rows], "plan": [None] * 3,
                      "version": pa.array([1] * 3, pa.int32())})
    pq.write_table(table, history / "a_0.parquet")
    pq.write_table(table.slice(0, 1), history / "replaced_0.parquet")
    (history / "manifest_2").write_text(json.dumps({"files": [{"fileName": "a_0.parquet", "fileLen": 1}]}))
    (history / "_version_").write_text("2")
    (tmp_path / ".hoodie" / "timeline" / "20260101000007000_20260101000008000.deltacommit").write_bytes(_avro_commit("w0b1#1", 2))
    entries = HudiFormat.history(None, None, TableRef("t", str(tmp_path), "id", "d", "ts"))
    assert [(e.id, e.by_writer, e.label, e.files_written) for e in entries] == [
        ("20260101000001000", True, "w0b0#1", 2), ("20260101000003000", False, None, None),
        ("20260101000005000", True, "w1b0#1", 0), ("20260101000007000", True, "w0b1#1", 2)]
    assert [e.file_groups for e in entries] == [("d=1/f0", "d=1/f1"), None, (), ("d=1/f0", "d=1/f1")]
    assert tl.archived_instants(tmp_path / "elsewhere") == []


def test_an_instant_archived_between_the_listing_and_its_read_is_read_again_from_the_archive(tmp_path, monkeypatch):
    """Other writers archive instants while a writer reads the history (its checked retry): a listed file gone when
    read crashed a writer at `small`; the history is read again and finds the instant in the archive."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from bench.formats import hudi_timeline

    timeline = tmp_path / ".hoodie" / "timeline"
    history = timeline / "history"
    history.mkdir(parents=True)
    active = timeline / "20260101000001000_20260101000002000.deltacommit"
    active.write_bytes(_avro_commit("w0b0#1", 2))
    read = hudi_timeline.commit_metadata

    def archived_meanwhile(instant):
        """The first read finds the file gone: Hudi moved the instant to its LSM timeline after the listing."""
        if active.exists():
            active.unlink()
            table = pa.table({"instantTime": ["20260101000001000"], "completionTime": ["20260101000002000"],
                              "action": ["deltacommit"], "metadata": [_avro_commit("w0b0#1", 2)]})
            pq.write_table(table, history / "a_0.parquet")
            (history / "manifest_1").write_text(json.dumps({"files": [{"fileName": "a_0.parquet", "fileLen": 1}]}))
            (history / "_version_").write_text("1")
        return read(instant)

    monkeypatch.setattr(hudi_timeline, "commit_metadata", archived_meanwhile)
    entries = HudiFormat.history(None, None, TableRef("t", str(tmp_path), "id", "d", "ts"))
    assert [(e.id, e.label, e.files_written) for e in entries] == [("20260101000001000", "w0b0#1", 2)]


def test_a_copy_on_write_commits_inflight_file_is_its_inflight_state(tmp_path):
    """Hudi names a commit's inflight file ``<instant>.inflight`` in both layouts (seen on a 1.1.1 COPY_ON_WRITE table):
    read as an action of its own it tied with the completed commit, and the history lost that commit at random."""
    timeline = tmp_path / ".hoodie" / "timeline"
    timeline.mkdir(parents=True)
    for name in ("20261127090610690.commit.requested", "20261127090610690.inflight",
                 "20261127090610690_20261127090615638.commit", "20261127090617859.commit.requested",
                 "20261127090617859.inflight"):
        (timeline / name).write_text("")
    seen = [(i.requested, i.action, i.state) for i in tl.instants(tmp_path)]
    assert seen == [("20261127090610690", "commit", "REQUESTED"), ("20261127090610690", "commit", "INFLIGHT"),
                    ("20261127090610690", "commit", "COMPLETED"), ("20261127090617859", "commit", "REQUESTED"),
                    ("20261127090617859", "commit", "INFLIGHT")]
