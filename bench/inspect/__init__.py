"""Reading a user's own table: its shape and its workload from its own metadata, read-only, without Spark.

Each format's library reads its metadata (``delta.py``: delta-rs; ``iceberg.py``: pyiceberg; ``hudi.py``: hudi-rs) into
the same ``TableFacts``: every live data file (size, rows, the key's min/max where the metadata keeps them, its
partition), every commit (when, what operation, rows and files it changed) and the delete files or logs outstanding.
``profile.py`` turns facts into the profile the other commands take. What no metadata knows (reads per day) is asked
for, never guessed. May import: core, exceptions; never pyspark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.exceptions import BadOption

FORMATS = ("delta", "iceberg", "hudi")


@dataclass(frozen=True)
class DataFile:
    path: str
    bytes: int
    rows: int | None
    key_min: Any = None  # the record key's lowest value in the file, where the metadata keeps column statistics
    key_max: Any = None
    partition: str = ""


@dataclass(frozen=True)
class Commit:
    at_ms: int  # epoch milliseconds
    operation: str  # as the format names it (UPDATE, MERGE, overwrite, upsert, compaction, …)
    rows_changed: int | None = None  # rows the commit updated or deleted, where its metadata says
    files_added: int | None = None
    files_removed: int | None = None
    compaction: bool = False  # a table service that rewrote files (compaction, OPTIMIZE, rewrite_data_files)


@dataclass
class TableFacts:
    format: str
    location: str
    files: list[DataFile]
    commits: list[Commit]
    key: str | None
    partition_columns: list[str] = field(default_factory=list)
    outstanding_deletes: int = 0  # delete files, deletion vectors or log files not yet compacted
    notes: list[str] = field(default_factory=list)  # what the metadata could not say


OBJECT_STORE_SCHEMES = ("s3://", "s3a://")


def library_uri(location: str) -> str:
    """The table's address as the formats' Python libraries take it (``s3://``, not Hadoop's ``s3a://``)."""
    return "s3://" + location.removeprefix("s3a://") if location.startswith("s3a://") else location.removeprefix("file://")


def object_store_options(location: str) -> dict[str, str]:
    """The S3 settings delta-rs and hudi-rs take for ``location``, from the standard AWS variables the user's shell
    holds (``AWS_ENDPOINT_URL`` for a server of one's own); empty for a table on local disk."""
    import os

    from bench.core import storage

    if not location.startswith(OBJECT_STORE_SCHEMES):
        return {}
    return storage.object_store_options(os.environ.get("AWS_ENDPOINT_URL"))


def detect(location: str) -> str:
    """The table's format from what its folder holds (on local disk or an object store).

    Raises:
        BadOption: not a table of a known format (one line saying what was looked for).
    """
    from bench.core.storage import Files

    root = Files.of(location)
    try:
        if location.endswith(".metadata.json") or any(f.name.endswith(".metadata.json") for f in (root / "metadata").iterdir()):
            return "iceberg"
        if (root / "_delta_log").is_dir():
            return "delta"
        if (root / ".hoodie").is_dir():
            return "hudi"
        missing = not root.exists()
    except OSError as err:  # an object store that refuses the listing: its own words
        raise BadOption(f"{location}: cannot list it: {(str(err).strip().splitlines() or [''])[0][:200]}") from None
    if missing:
        raise BadOption(f"{location}: no such table folder")
    raise BadOption(f"{location}: not a Delta (_delta_log/), Hudi (.hoodie/) or Iceberg (metadata/*.metadata.json) "
                    "table; give the table's root folder, or --format")


def read_facts(location: str, fmt: str | None = None, key: str | None = None, catalog: str | None = None) -> TableFacts:
    """The table's facts through its own format's library; with ``catalog``, ``location`` is an Iceberg table's
    identifier in that catalog (``namespace.table``).

    Raises:
        BadOption: an unknown format, a folder that is not a table, or a table the library cannot read.
    """
    if catalog:
        if fmt not in (None, "iceberg"):
            raise BadOption(f"--catalog {catalog}: catalogs are read for Iceberg tables; give a {fmt} table's folder")
        from bench.inspect import iceberg

        try:
            return iceberg.read_from_catalog(catalog, location, key)
        except BadOption:
            raise
        except Exception as err:  # noqa: BLE001 - the library's own words, in one line
            first = (str(err).strip().splitlines() or [type(err).__name__])[0][:300]
            raise BadOption(f"{catalog}:{location}: cannot read it as an iceberg table: {first}") from None
    fmt = fmt or detect(location)
    if fmt not in FORMATS:
        raise BadOption(f"--format {fmt}: one of {', '.join(FORMATS)}")
    if fmt == "delta":
        from bench.inspect import delta as reader
    elif fmt == "iceberg":
        from bench.inspect import iceberg as reader  # type: ignore[no-redef]
    else:
        from bench.inspect import hudi as reader  # type: ignore[no-redef]
    try:
        return reader.read(location, key)
    except BadOption:
        raise
    except Exception as err:  # noqa: BLE001 - the library's own words, in one line
        first = (str(err).strip().splitlines() or [type(err).__name__])[0][:300]
        raise BadOption(f"{location}: cannot read it as {'an' if fmt == 'iceberg' else 'a'} {fmt} table: {first}") from None
