"""DuckDB 1.4.4 reads Iceberg and Delta with its own extensions and Hudi through hudi-rs (Arrow), offline.

The extension binaries come from the PyPI packages ``duckdb-ext-iceberg``, ``duckdb-ext-delta`` and
``duckdb-ext-avro`` (DuckDB's ``extension_directory`` points at them, autoinstall off): nothing is
downloaded at run time. Tables on an S3 endpoint (``AWS_ENDPOINT_URL``, or the run's delaying proxy
``COWMOR_MEASURED_S3_ENDPOINT``, and keys in the environment, as the run sets them for its object store) are read through ``duckdb-ext-httpfs`` with an S3 secret for that endpoint, and
by hudi-rs with the same settings as storage options.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.core.storage import measured_s3_endpoint, object_store_options
from bench.engines.base import ReadEngine

if TYPE_CHECKING:
    from bench.formats.base import TableFormat, TableRef

DUCKDB_VERSION = "1.4.4"
EXTENSIONS = ("avro", "iceberg", "delta")
PACKAGES = (f"duckdb=={DUCKDB_VERSION}", "duckdb-ext-iceberg==1.4.4.20260205", "duckdb-ext-delta==1.4.4.20260205",
            "duckdb-ext-avro==1.4.4.20260205", "hudi==0.5.0")
HTTPFS = "duckdb-ext-httpfs==1.4.4.20260205"  # S3 tables only
DOC_EXTENSIONS = "https://duckdb.org/docs/stable/extensions/overview#installation-location"
READ_OPTIMIZED = "hoodie.read.use.read_optimized.mode"  # hudi-rs HudiReadConfig.USE_READ_OPTIMIZED_MODE


def extension_directory() -> Path | None:
    try:
        import duckdb_ext
    except ImportError:
        return None
    return Path(next(iter(duckdb_ext.__path__))) / "extensions"


def missing() -> str | None:
    """Why this engine cannot run here (one line with what to install), or None."""
    try:
        import duckdb
        import hudi  # noqa: F401
    except ImportError as err:
        return f"duckdb: {err.name} is not installed (pip install {' '.join(PACKAGES)})"
    if duckdb.__version__ != DUCKDB_VERSION:
        return f"duckdb: version {duckdb.__version__} installed, the extension packages are built for {DUCKDB_VERSION}"
    folder = extension_directory()
    found = {p.name.split(".")[0] for p in folder.rglob("*.duckdb_extension")} if folder else set()
    absent = [e for e in (*EXTENSIONS, *(("httpfs",) if _s3_endpoint() else ())) if e not in found]
    if absent:
        return f"duckdb: extension(s) {', '.join(absent)} not installed (pip install {' '.join(PACKAGES[1:4])} {HTTPFS})"
    return None


def _memory_limit() -> int:
    """A quarter of the machine's memory: Spark's driver and executors share the rest."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4
    except (ValueError, OSError, AttributeError):
        return 2 << 30


def _s3_endpoint() -> str | None:
    return measured_s3_endpoint()


def _local_path(location: str) -> str:
    """The table's path for DuckDB: a local path, or ``s3://bucket/key`` where an S3 endpoint is configured."""
    if location.startswith("file:"):
        return re.sub(r"^file:(//)?", "", location)
    scheme = location.split("://")[0] if "://" in location else ""
    if scheme in ("s3a", "s3") and _s3_endpoint():
        return "s3://" + location.split("://", 1)[1]
    if scheme:
        raise OSError(f"{scheme}:// tables are not read by this engine here (local tables, or S3 with AWS_ENDPOINT_URL)")
    return location


def _iceberg_metadata(location: str) -> str:
    """The table's current metadata file (a Hadoop catalog names it in ``version-hint.text``; a catalog that keeps the
    pointer itself, as the JDBC catalog does, is asked for it by the caller, who passes the file as the location)."""
    from bench.core.storage import Files

    if location.endswith(".metadata.json"):
        return _local_path(location)
    meta = Files.of(location) / "metadata"
    hint = meta / "version-hint.text"
    prefix = _local_path(location) + "/metadata"
    if hint.exists():
        return f"{prefix}/v{hint.read_text().strip()}.metadata.json"
    versions = sorted((p.name for p in meta.iterdir() if re.fullmatch(r"v\d+\.metadata\.json", p.name)),
                      key=lambda n: int(re.sub(r"\D", "", n.split(".")[0]) or 0))
    if not versions:
        raise OSError(f"{meta}: no metadata file")
    return f"{prefix}/{versions[-1]}"


def _storage_options() -> dict[str, str]:
    """hudi-rs's object-store settings for the configured S3 endpoint (empty for local tables)."""
    endpoint = _s3_endpoint()
    return object_store_options(endpoint) if endpoint else {}


class DuckDBEngine(ReadEngine):
    name = "duckdb"

    def __init__(self) -> None:
        import duckdb

        super().__init__()
        self.memory_limit = _memory_limit()
        self.threads = os.cpu_count() or 1
        self.con = duckdb.connect(config={
            "extension_directory": str(extension_directory()), "autoinstall_known_extensions": False,
            "autoload_known_extensions": False, "memory_limit": f"{self.memory_limit // (1 << 20)}MiB",
            "threads": self.threads})
        for extension in EXTENSIONS:
            self.con.execute(f"LOAD {extension}")
        if _s3_endpoint():
            self._connect_s3(_s3_endpoint())
        self._settings = self._configured()
        self._registered: list[str] = []  # the Arrow tables hudi-rs read for the current query

    def _connect_s3(self, endpoint: str) -> None:
        """httpfs with an S3 secret for the run's endpoint (path-style, TLS as the URL says)."""
        from urllib.parse import urlparse

        self.con.execute("LOAD httpfs")
        url = urlparse(endpoint)
        self.con.execute(
            "CREATE OR REPLACE SECRET cowmor_s3 (TYPE s3, KEY_ID ?, SECRET ?, REGION ?, ENDPOINT ?, URL_STYLE 'path', "
            f"USE_SSL {str(url.scheme == 'https').lower()})",
            [os.environ.get("AWS_ACCESS_KEY_ID", ""), os.environ.get("AWS_SECRET_ACCESS_KEY", ""),
             os.environ.get("AWS_REGION", "us-east-1"), url.netloc])

    def version(self) -> str:
        return f"duckdb {DUCKDB_VERSION}"

    def settings(self) -> dict[str, Any]:
        return self._settings

    def _configured(self) -> dict[str, Any]:
        loaded = [(name, version) for name, version, is_loaded in self.con.execute(
            "SELECT extension_name, extension_version, loaded FROM duckdb_extensions()").fetchall()
            if is_loaded and name in EXTENSIONS]
        import hudi
        return {"memory_limit_bytes": self.memory_limit, "threads": self.threads,
                "extension_directory": str(extension_directory()), "autoinstall_known_extensions": False,
                "extensions": dict(loaded), "hudi_rs": getattr(hudi, "__version__", "?"), "source": DOC_EXTENSIONS}

    def epoch_micros(self, column: str) -> str:
        return f"epoch_us({column})"

    def hex_number(self, hex_text: str) -> str:
        return f"CAST(('0x' || {hex_text}) AS BIGINT)"

    def relation(self, fmt: TableFormat, table: TableRef, mode: str, sql: str = "") -> str:
        fmt.check_read_mode(mode)
        if fmt.family == "iceberg":
            return f"iceberg_scan('{_iceberg_metadata(table.location)}')"
        if fmt.family == "delta":
            return f"delta_scan('{_local_path(table.location)}')"
        if fmt.family == "hudi":
            return self._hudi(table, mode, sql)
        raise OSError(f"no DuckDB reader for {fmt.family} tables")

    def _hudi(self, table: TableRef, mode: str, sql: str) -> str:
        """hudi-rs reads the snapshot (base files merged with logs) or the read-optimized view into Arrow, only
        the columns the query names; DuckDB queries that. Reading is part of the timed read, as Spark's scan is."""
        import hudi
        import pyarrow as pa

        options = {READ_OPTIMIZED: "true" if mode == "read_optimized" else "false"}
        path = _local_path(table.location)
        builder = hudi.HudiTableBuilder.from_base_uri(path if "://" in path else os.path.abspath(path))
        if store := _storage_options():
            builder = builder.with_storage_options(store)
        reader = builder.with_hudi_options(options).build()
        columns = [f.name for f in reader.get_schema() if re.search(rf"\b{re.escape(f.name)}\b", sql)]
        batches = reader.read(hudi.HudiReadOptions().with_projection(columns) if columns else None)
        arrow = pa.Table.from_batches(batches) if batches else reader.get_schema().empty_table()
        view = f"hudi_{table.name}_{mode}"
        self.con.register(view, arrow)
        self._registered.append(view)
        return view

    def release(self) -> None:
        """Unregister the Arrow tables hudi-rs read: DuckDB holds each registered table (a whole table's columns, in
        this process) until it is unregistered, and one per table and read mode piled up over a run."""
        for view in self._registered:
            self.con.unregister(view)
        self._registered.clear()

    def fetch(self, sql: str) -> list[tuple]:
        return self.con.execute(sql).fetchall()

    def close(self) -> None:
        self.con.close()


ENGINE = DuckDBEngine
