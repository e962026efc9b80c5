"""The _delta_log parser on real Delta tables: written here by delta-rs, and the shared sample tables."""

from __future__ import annotations

import pyarrow as pa
import pytest

from bench.formats import delta_log
from bench.formats.delta import DeltaFormat

deltalake = pytest.importorskip("deltalake")


@pytest.fixture
def cow_table(tmp_path):
    """A partitioned Delta table with a copy-on-write UPDATE and DELETE (delta-rs writes add/remove)."""
    path = tmp_path / "t"
    data = pa.table({"id": list(range(100)), "day": [i % 4 for i in range(100)], "v": [1.0] * 100})
    deltalake.write_deltalake(str(path), data, partition_by=["day"])
    table = deltalake.DeltaTable(str(path))
    table.update(predicate="id < 3", updates={"v": "2.0"})
    table.delete("id = 99")
    return path


def test_versions_and_commit_summaries(cow_table):
    assert delta_log.commit_versions(cow_table) == [0, 1, 2]
    create, update, delete = delta_log.commits_since(cow_table, None)
    assert create.files_added == 4 and create.files_removed == 0 and create.bytes_added > 0
    assert update.operation == "UPDATE" and update.files_removed >= 1 and update.files_added == update.files_removed
    assert int(update.operation_metrics["num_updated_rows"]) == 3
    assert delete.operation == "DELETE" and delete.files_removed == 1 and delete.dvs_added == 0
    assert [c.version for c in delta_log.commits_since(cow_table, 1)] == [2]


def test_live_files_replay(cow_table):
    live = delta_log.live_files(cow_table)
    assert live["data_files"] == 4 and live["delete_files"] == 0
    files = {p for p in cow_table.rglob("*.parquet")}
    assert live["data_bytes"] < sum(p.stat().st_size for p in files)  # removed files stay on disk until VACUUM


def test_adapter_describes_commits(cow_table, tmp_path):
    from bench.formats.base import TableRef

    fmt = DeltaFormat("delta-cow", "cow", tmp_path, 1 << 27)
    ref = TableRef("t", cow_table, "id", "day", "id")
    info = fmt.describe_commits(ref, 0)
    assert info.commits == 2 and info.operation == "UPDATE+DELETE"
    assert info.data_files_removed == info.raw[0]["files_removed"] + info.raw[1]["files_removed"]
    assert fmt.commit_marker(ref) == 2


def test_shared_table_with_deletion_vector(shared_testdata):
    path = shared_testdata / "delta" / "table-with-dv-small"
    (commit,) = delta_log.commits_since(path, 0)
    assert commit.operation == "DELETE" and commit.dvs_added == 1
    assert commit.dv_storage_types == ["u"] and commit.dv_bytes_added == 36 and commit.dv_rows_added == 2
    assert commit.files_added == 0 and commit.files_removed == 0  # same file re-added with its DV
    assert delta_log.live_files(path) == {"data_files": 1, "delete_files": 1, "data_bytes": 635}
    assert DeltaFormat("delta-dv", "dv", path, 1).classify("deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin") == "delete"


def test_shared_tables_with_many_commits_and_checkpoints(shared_testdata):
    simple = delta_log.commits_since(shared_testdata / "delta" / "simple_table", None)
    assert len(simple) == 5 and sum(c.files_added for c in simple) > 0
    logs = shared_testdata / "delta" / "table_with_deletion_logs"
    commits = delta_log.commits_since(logs, None)
    # 3 descriptors in all (README): two on re-added files, one carried by a remove
    assert sum(c.dvs_added for c in commits) == 2 and sum(c.dvs_removed for c in commits) == 1
    live = delta_log.live_files(shared_testdata / "delta" / "simple_table_with_checkpoint")
    assert live["data_files"] >= 1


def test_a_deletion_vector_commit_keeps_the_file_live_whatever_the_action_order(tmp_path):
    """Delta writes add(path, new DV) and remove(path, old DV) in one commit, in no fixed order (the protocol
    keys a logical file by path and DV id); the replay must keep the file live with its DV."""
    import json

    log = tmp_path / "t" / "_delta_log"
    log.mkdir(parents=True)
    dv = {"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^", "offset": 1, "sizeInBytes": 36, "cardinality": 2}
    commits = [
        [{"add": {"path": "a.parquet", "size": 100, "dataChange": True}}, {"add": {"path": "b.parquet", "size": 50}}],
        [{"add": {"path": "a.parquet", "size": 100, "deletionVector": dv}},
         {"remove": {"path": "a.parquet", "size": 100, "dataChange": True}},
         {"commitInfo": {"operation": "MERGE", "operationMetrics": {"numTargetRowsUpdated": "2"}}}],
    ]
    for version, actions in enumerate(commits):
        (log / f"{version:020d}.json").write_text("\n".join(json.dumps(a) for a in actions))
    assert delta_log.live_files(tmp_path / "t") == {"data_files": 2, "delete_files": 1, "data_bytes": 150}
    merge = delta_log.commits_since(tmp_path / "t", 0)[0]
    assert merge.dvs_added == 1 and merge.dv_rows_added == 2 and merge.files_added == 0 and merge.files_removed == 0


def test_a_commits_user_metadata_and_time_reach_the_history(tmp_path):
    """A writer's label (``commitInfo.userMetadata``), the commit's time, its isolation level and updated rows, as
    the several-writers checks read them."""
    import json

    log = tmp_path / "t" / "_delta_log"
    log.mkdir(parents=True)
    info = {"operation": "UPDATE", "userMetadata": "w1b0#2", "timestamp": 1795000000123,
            "isolationLevel": "WriteSerializable", "operationMetrics": {"numUpdatedRows": "4"}}
    (log / f"{0:020d}.json").write_text("\n".join(json.dumps(a) for a in (
        {"add": {"path": "a.parquet", "size": 100}}, {"commitInfo": info})))
    from bench.formats.base import TableRef

    fmt = DeltaFormat.__new__(DeltaFormat)
    entry = fmt.history(None, TableRef("t", str(tmp_path / "t"), "id", "day", "ts"))[0]
    assert (entry.label, entry.completed_at, entry.by_writer) == ("w1b0#2", 1795000000.123, True)
    assert (entry.isolation, entry.rows_changed) == ("WriteSerializable", 4)  # how it was checked, what it changed
