"""DuckDB 1.4.4 reads Iceberg and Delta with its own extensions and Hudi through hudi-rs (Arrow), offline.

The extension binaries come from the PyPI packages ``duckdb-ext-iceberg``, ``duckdb-ext-delta`` and
``duckdb-ext-avro`` (DuckDB's ``extension_directory`` points at them, autoinstall off): nothing is
downloaded at run time. Tables must be on a local filesystem for this engine.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.engines.base import ReadEngine

if TYPE_CHECKING:
    from bench.formats.base import TableFormat, TableRef

DUCKDB_VERSION = "1.4.4"
EXTENSIONS = ("avro", "iceberg", "delta")
PACKAGES = (f"duckdb=={DUCKDB_VERSION}", "duckdb-ext-iceberg==1.4.4.20260205", "duckdb-ext-delta==1.4.4.20260205",
            "duckdb-ext-avro==1.4.4.20260205", "hudi==0.5.0")
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
    absent = [e for e in EXTENSIONS if e not in found]
    if absent:
        return f"duckdb: extension(s) {', '.join(absent)} not installed (pip install {' '.join(PACKAGES[1:4])})"
    return None


def _memory_limit() -> int:
    """A quarter of the machine's memory: Spark's driver and executors share the rest."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4
    except (ValueError, OSError, AttributeError):
        return 2 << 30


def _local_path(location: str) -> str:
    """The table's local path; object stores need credentials this engine is not given."""
    if location.startswith("file:"):
        return re.sub(r"^file:(//)?", "", location)
    if "://" in location:
        raise OSError(f"{location.split('://')[0]}:// tables are not read by this engine (local tables only)")
    return location


def _iceberg_metadata(location: str) -> str:
    """The table's current metadata file (a Hadoop catalog names it in ``version-hint.text``)."""
    meta = Path(_local_path(location)) / "metadata"
    hint = meta / "version-hint.text"
    if hint.exists():
        return str(meta / f"v{hint.read_text().strip()}.metadata.json")
    versions = sorted(meta.glob("v*.metadata.json"), key=lambda p: int(re.sub(r"\D", "", p.name.split(".")[0]) or 0))
    if not versions:
        raise OSError(f"{meta}: no metadata file")
    return str(versions[-1])


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
        self._settings = self._configured()

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
        reader = hudi.HudiTableBuilder.from_base_uri(os.path.abspath(_local_path(table.location))) \
            .with_hudi_options(options).build()
        columns = [f.name for f in reader.get_schema() if re.search(rf"\b{re.escape(f.name)}\b", sql)]
        batches = reader.read(hudi.HudiReadOptions().with_projection(columns) if columns else None)
        arrow = pa.Table.from_batches(batches) if batches else reader.get_schema().empty_table()
        view = f"hudi_{table.name}_{mode}"
        self.con.register(view, arrow)
        return view

    def fetch(self, sql: str) -> list[tuple]:
        return self.con.execute(sql).fetchall()

    def close(self) -> None:
        self.con.close()


ENGINE = DuckDBEngine
