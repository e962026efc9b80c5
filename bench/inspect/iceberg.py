"""An Iceberg table's facts through pyiceberg: its live data and delete files, its snapshots' summaries."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bench.core.storage import Files
from bench.exceptions import BadOption
from bench.inspect import Commit, DataFile, TableFacts, library_uri, object_store_options

if TYPE_CHECKING:
    from pyiceberg.table import Table

COMPACTIONS = ("replace",)


def _version(name: str) -> int:
    """A metadata file's version from its name (``v12.metadata.json``, ``00012-<uuid>.metadata.json``)."""
    digits = re.match(r"v?(\d+)", name)
    return int(digits.group(1)) if digits else -1


def _rows_changed(summary: dict[str, str]) -> int | None:
    """Rows a commit deleted or updated, from its snapshot summary: the position deletes (or deletion vectors) it
    added net of those it replaced (Iceberg rewrites a partition's delete file with the earlier deletes carried over),
    or the rows its rewritten files lost; None where it rewrote files without changing their row count (a
    copy-on-write update: the summary cannot tell the rows changed from those copied)."""
    number = lambda name: int(summary.get(name, 0))  # noqa: E731
    deletes = number("added-position-deletes") - number("removed-position-deletes")
    lost = number("deleted-records") - number("added-records")
    return (max(deletes, 0) + max(lost, 0)) or None


def _metadata_file(location: str) -> str:
    """The table's current metadata file: the one named, the version hint's, else the highest version listed."""
    if location.endswith(".metadata.json"):
        return location
    folder = Files.of(location) / "metadata"
    hint = folder / "version-hint.text"
    if hint.exists():
        return str(folder / f"v{hint.read_text().strip()}.metadata.json")
    versions = sorted((f for f in folder.iterdir() if f.name.endswith(".metadata.json")), key=lambda f: _version(f.name))
    if not versions:
        raise BadOption(f"{location}: no metadata/*.metadata.json: not an Iceberg table folder (or give its metadata file)")
    return str(versions[-1])


def _properties(location: str) -> dict[str, str]:
    """pyiceberg's S3 settings from the same AWS variables (``object_store_options``)."""
    names = {"aws_access_key_id": "s3.access-key-id", "aws_secret_access_key": "s3.secret-access-key",
             "aws_session_token": "s3.session-token", "aws_region": "s3.region", "aws_endpoint_url": "s3.endpoint"}
    return {names[k]: v for k, v in object_store_options(location).items() if k in names}


def read(location: str, key: str | None) -> TableFacts:
    from pyiceberg.table import StaticTable

    return _facts(StaticTable.from_metadata(library_uri(_metadata_file(location)), properties=_properties(location)),
                  location, key)


def read_from_catalog(catalog: str, identifier: str, key: str | None) -> TableFacts:
    """A catalog's table (``namespace.table``), the catalog as pyiceberg's own configuration names it
    (``~/.pyiceberg.yaml`` or ``PYICEBERG_CATALOG__<NAME>__URI`` and its siblings): REST, SQL (a JDBC catalog's
    tables), Hive, Glue. The catalog gives the current metadata file; the rest is read as from a folder.

    Raises:
        BadOption: a catalog pyiceberg cannot load, or no such table in it (one line, its own words).
    """
    from pyiceberg.catalog import load_catalog
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    try:
        table = load_catalog(catalog).load_table(identifier)
    except (NoSuchTableError, NoSuchNamespaceError):
        raise BadOption(f"catalog {catalog}: no table {identifier}") from None
    except Exception as err:  # noqa: BLE001 - pyiceberg's own words on a catalog it cannot load, in one line
        first = (str(err).strip().splitlines() or [type(err).__name__])[0][:300]
        variable = f"PYICEBERG_CATALOG__{catalog.upper()}__URI"
        raise BadOption(f"catalog {catalog}: {first}" + ("" if variable in first else
                        f" (pyiceberg's configuration: ~/.pyiceberg.yaml or {variable})")) from None
    return _facts(table, table.metadata_location, key)


def _facts(table: Table, location: str, key: str | None) -> TableFacts:
    from pyiceberg.conversions import from_bytes

    schema = table.schema()
    field = schema.find_field(key) if key else None
    files: list[DataFile] = []
    deletes = 0
    spec = table.spec()
    snapshot = table.current_snapshot()
    for task in table.scan().plan_files() if snapshot else ():
        f = task.file
        deletes += len(task.delete_files)
        low = high = None
        if field is not None and f.lower_bounds and field.field_id in f.lower_bounds:
            low = from_bytes(field.field_type, f.lower_bounds[field.field_id])
            high = from_bytes(field.field_type, f.upper_bounds[field.field_id])
        partition = "/".join(f"{spec.fields[i].name}={v}" for i, v in enumerate(f.partition)) if spec.fields else ""
        files.append(DataFile(f.file_path, int(f.file_size_in_bytes), int(f.record_count), low, high, partition))
    commits, rewrote_only = [], False
    for s in table.metadata.snapshots:
        summary = s.summary.additional_properties if s.summary else {}
        operation = str(s.summary.operation.value) if s.summary else "?"
        rows = _rows_changed(summary)
        rewrote_only = rewrote_only or (rows is None and int(summary.get("deleted-records", 0)) > 0
                                        and operation not in COMPACTIONS)
        commits.append(Commit(int(s.timestamp_ms), operation, rows, int(summary.get("added-data-files", 0)),
                              int(summary.get("deleted-data-files", 0)), operation in COMPACTIONS))
    notes = [] if field is None or any(f.key_min is not None for f in files) or not files else \
        [f"the manifests keep no bounds for {key}: key spread unknown"]
    if rewrote_only:
        notes.append("copy-on-write commits record the rows they rewrote, not the rows they changed: give --keys-per-update")
    return TableFacts("iceberg", location, files, commits, key, [f.name for f in spec.fields], deletes, notes)
