"""The filesystem layer on a non-local filesystem (pyarrow's in-memory ``mock://``) and on local paths."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

from bench.core.storage import Files, is_local
from bench.exceptions import UnsafePath
from bench.formats import delta_log
from bench.formats.iceberg import IcebergFormat
from bench.measure.probe import diff, list_files
from bench.run.spark import merge_conf
from bench.run.workspace import MARKER, RemoteWorkspace, Workspace
from bench.workload.datagen import generate_payments


@pytest.fixture
def remote():
    return f"mock:///bucket-{uuid.uuid4().hex[:8]}/cowmor"


def test_local_paths_and_file_uris_are_the_same(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.parquet").write_bytes(b"1234")
    assert Files.of(tmp_path).walk() == Files.of(f"file://{tmp_path}").walk() == {"a/x.parquet": 4}
    assert is_local(tmp_path) and is_local(f"file://{tmp_path}") and not is_local("s3a://b/k")
    assert Files.of("abfss://container@acct.dfs.core.windows.net/w").uri.startswith("abfss://")


def test_probe_on_a_remote_filesystem(remote):
    table = Files.of(remote) / "warehouse/iceberg/bench/t"
    (table / "data/d=1/00000-0-a-00001.parquet").write_bytes(b"x" * 100)
    before = list_files(table.uri)
    (table / "data/d=1/00000-0-b-00001-deletes.parquet").write_bytes(b"x" * 30)
    (table / "metadata/v2.metadata.json").write_bytes(b"x" * 7)
    delta = diff(before, list_files(table.uri), IcebergFormat("iceberg-mor", "mor", remote, 1).classify)
    assert (delta.by_kind["delete"].bytes_added, delta.by_kind["metadata"].files_added, delta.by_kind["data"].files_added) == (30, 1, 0)


def test_remote_workspace_deletes_only_inside(remote):
    ws = Workspace(remote)
    assert isinstance(ws, RemoteWorkspace) and (Files.of(remote) / MARKER).exists()
    table = f"{ws.warehouse}/delta/t"
    (Files.of(table) / "part-0.parquet").write_bytes(b"x")
    for outside in (remote, remote.rsplit("/", 1)[0] + "/other", f"{ws.warehouse}/../../other", remote + "-sibling/x"):
        with pytest.raises(UnsafePath):
            ws.remove(outside)
    ws.remove(table)
    assert not Files.of(table).exists()


def test_remote_workspace_refuses_unmarked_data(remote):
    (Files.of(remote) / "precious.parquet").write_bytes(b"keep")
    with pytest.raises(UnsafePath, match="not empty"):
        Workspace(remote)


def test_generator_and_delta_log_on_a_remote_filesystem(remote, tmp_path):
    data = generate_payments(f"{remote}/data", 2, 2, 50, 3, progress=None)
    assert data.path.startswith("mock://") and len(data.files) == 4 and data.read(["txn_id"]).num_rows == 200
    deltalake = pytest.importorskip("deltalake")
    local = tmp_path / "t"
    deltalake.write_deltalake(str(local), pa.table({"id": list(range(10))}))
    deltalake.DeltaTable(str(local)).delete("id < 3")
    copy = Files.of(f"{remote}/delta/t")
    for rel in Files.of(local).walk():
        (copy / rel).write_bytes((local / rel).read_bytes())
    assert [c.as_dict() for c in delta_log.commits_since(copy.uri, None)] == [c.as_dict() for c in delta_log.commits_since(local, None)]
    assert delta_log.live_files(copy.uri) == delta_log.live_files(local)


def test_user_jars_are_joined_with_the_family_jars():
    merged = merge_conf({"spark.jars.packages": "org.apache.hadoop:hadoop-aws:3.3.4", "spark.executor.memory": "4g"},
                        {"spark.jars.packages": "io.delta:delta-spark_2.12:3.3.2", "spark.sql.extensions": "x"})
    assert merged["spark.jars.packages"] == "org.apache.hadoop:hadoop-aws:3.3.4,io.delta:delta-spark_2.12:3.3.2"
    assert merged["spark.executor.memory"] == "4g" and merged["spark.sql.extensions"] == "x"
