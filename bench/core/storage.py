"""Files under any warehouse URI, through pyarrow's filesystem layer: a small pathlib-like view.

The storage probe, the Delta log and Hudi timeline parsers, the workspace and the data generator all read
and write through this, so the same code lists a local directory, ``s3a://``, ``gs://``, ``abfss://`` or
``hdfs://`` (credentials come from each filesystem's usual environment; see README "Running on a cluster").
Spark keeps its own Hadoop FileSystem for the data itself; both see the same URI.
"""

from __future__ import annotations

import functools
import os
import posixpath
from pathlib import Path
from urllib.parse import urlparse

import pyarrow.fs as pafs

from bench.exceptions import NotEnoughDisk

# the S3 endpoint the measured read engines use (a run's delaying proxy); AWS_ENDPOINT_URL is the server itself
MEASURED_ENDPOINT = "COWMOR_MEASURED_S3_ENDPOINT"
LOCAL_SCHEMES = ("", "file")
# Hadoop's S3 connector says s3a://; pyarrow's S3 filesystem says s3://; the bucket and key are the same
PYARROW_SCHEME = {"s3a": "s3", "s3n": "s3"}


def measured_s3_endpoint() -> str | None:
    """Where a measured engine sends its S3 requests: through the run's delaying proxy, if it has one."""
    return os.environ.get(MEASURED_ENDPOINT) or os.environ.get("AWS_ENDPOINT_URL")


def object_store_options(endpoint: str | None) -> dict[str, str]:
    """The S3 settings the Rust ``object_store`` clients take (delta-rs, hudi-rs), from the standard AWS variables,
    with ``endpoint`` for a server of one's own (path-style requests; plain HTTP where it says ``http://``)."""
    names = {"aws_access_key_id": "AWS_ACCESS_KEY_ID", "aws_secret_access_key": "AWS_SECRET_ACCESS_KEY",
             "aws_session_token": "AWS_SESSION_TOKEN", "aws_region": "AWS_REGION"}
    options = {"aws_region": "us-east-1"} | {option: os.environ[name] for option, name in names.items() if os.environ.get(name)}
    if endpoint:
        options |= {"aws_endpoint_url": endpoint, "aws_virtual_hosted_style_request": "false"}
        if endpoint.startswith("http://"):
            options["aws_allow_http"] = "true"
    return options


def is_local(location: str | Path) -> bool:
    return urlparse(str(location)).scheme in LOCAL_SCHEMES or len(urlparse(str(location)).scheme) == 1


GB = 10**9
# room left free beyond what a step writes: Spark spills shuffle and sort files to local disk beside it
DISK_HEADROOM = 1 * GB


def ensure_free(location: str | Path, needed: int, purpose: str) -> None:
    """Refuse a step that would fill the local disk under ``location`` (an object store is not checked): a run
    that stops with a one-line reason before it writes loses nothing, one that runs out of room mid-write leaves a
    half-written table and an error from deep inside Spark or the format.

    Raises:
        NotEnoughDisk: less than ``needed`` plus ``DISK_HEADROOM`` bytes are free there.
    """
    if not is_local(location):
        return
    existing = Path(str(location).removeprefix("file://")).absolute()
    while not existing.exists():
        existing = existing.parent
    disk = os.statvfs(existing)
    free = disk.f_bavail * disk.f_frsize
    if free < needed + DISK_HEADROOM:
        raise NotEnoughDisk(f"{purpose} needs about {needed / GB:.1f} GB (plus {DISK_HEADROOM / GB:.0f} GB headroom) in "
                            f"{existing}, where {free / GB:.1f} GB is free: free some space or choose another --warehouse")


@functools.lru_cache(maxsize=16)
def _filesystem(scheme: str, netloc: str) -> pafs.FileSystem:
    if scheme in LOCAL_SCHEMES:
        return pafs.LocalFileSystem()
    uri = f"{PYARROW_SCHEME.get(scheme, scheme)}://{netloc}/"
    return pafs.FileSystem.from_uri(uri)[0]


class Files:
    """A file or directory on some filesystem, addressed like a ``pathlib.Path``."""

    def __init__(self, fs: pafs.FileSystem, path: str, uri: str) -> None:
        self.fs, self.path, self.uri = fs, path.rstrip("/") or "/", uri.rstrip("/") or uri

    @classmethod
    def of(cls, location: str | Path | Files) -> Files:
        if isinstance(location, Files):
            return location
        text = str(location)
        url = urlparse(text)
        if is_local(text):
            local = str(Path(url.path if url.scheme == "file" else text).absolute())
            return cls(_filesystem("", ""), local, local)
        fs = _filesystem(url.scheme, url.netloc)
        if isinstance(fs, pafs.HadoopFileSystem):
            path = url.path
        elif url.scheme in ("abfs", "abfss"):  # abfss://container@account.dfs.core.windows.net/path
            path = f"{url.username}{url.path}"
        else:  # bucket/key
            path = f"{url.netloc}{url.path}"
        return cls(fs, path, text)

    def __truediv__(self, name: str) -> Files:
        return Files(self.fs, posixpath.join(self.path, name), f"{self.uri}/{name}")

    def __str__(self) -> str:
        return self.uri

    def __repr__(self) -> str:
        return f"Files({self.uri!r})"

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)

    @property
    def parent(self) -> Files:
        return Files(self.fs, posixpath.dirname(self.path), self.uri.rsplit("/", 1)[0])

    def _info(self) -> pafs.FileInfo:
        return self.fs.get_file_info(self.path)

    def exists(self) -> bool:
        return self._info().type != pafs.FileType.NotFound

    def is_dir(self) -> bool:
        return self._info().type == pafs.FileType.Directory

    def is_file(self) -> bool:
        return self._info().type == pafs.FileType.File

    def iterdir(self) -> list[Files]:
        infos = self.fs.get_file_info(pafs.FileSelector(self.path, allow_not_found=True))
        return [self / posixpath.basename(i.path) for i in infos]

    def walk(self) -> dict[str, int]:
        """Every file below (relative path -> size in bytes); empty when the directory does not exist."""
        infos = self.fs.get_file_info(pafs.FileSelector(self.path, recursive=True, allow_not_found=True))
        prefix = self.path.rstrip("/") + "/"
        return {i.path[len(prefix):]: i.size for i in infos if i.type == pafs.FileType.File}

    def read_bytes(self) -> bytes:
        with self.fs.open_input_stream(self.path) as f:
            return f.read()

    def read_text(self) -> str:
        return self.read_bytes().decode()

    def write_bytes(self, data: bytes) -> None:
        self.fs.create_dir(posixpath.dirname(self.path), recursive=True)
        with self.fs.open_output_stream(self.path) as f:
            f.write(data)

    def write_text(self, text: str) -> None:
        self.write_bytes(text.encode())

    def mkdir(self) -> None:
        self.fs.create_dir(self.path, recursive=True)

    def rename(self, target: Files) -> None:
        self.fs.move(self.path, target.path)

    def copy_tree(self, target: Files) -> None:
        """Copy this directory's files to ``target`` (same or another filesystem), keeping relative paths."""
        target.mkdir()
        local = isinstance(self.fs, pafs.LocalFileSystem) and isinstance(target.fs, pafs.LocalFileSystem)
        # threads only on local disk: pyarrow 18 can hang copying to S3 with threads on (apache/arrow#15233)
        pafs.copy_files(self.path, target.path, source_filesystem=self.fs, destination_filesystem=target.fs,
                        use_threads=local)

    def delete(self) -> None:
        if self.is_dir():
            self.fs.delete_dir(self.path)
        elif self.exists():
            self.fs.delete_file(self.path)
