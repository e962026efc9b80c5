"""An Iceberg table's facts through pyiceberg: its live data and delete files, its snapshots' summaries."""

from __future__ import annotations

from pathlib import Path

from bench.exceptions import BadOption
from bench.inspect import Commit, DataFile, TableFacts

COMPACTIONS = ("replace",)


def _metadata_file(location: str) -> str:
    if location.endswith(".metadata.json"):
        return location
    folder = Path(location.removeprefix("file://")) / "metadata"
    hint = folder / "version-hint.text"
    if hint.exists():
        return str(folder / f"v{hint.read_text().strip()}.metadata.json")
    versions = sorted(folder.glob("*.metadata.json"), key=lambda p: p.stat().st_mtime)
    if not versions:
        raise BadOption(f"{location}: no metadata/*.metadata.json: not an Iceberg table folder (or give its metadata file)")
    return str(versions[-1])


def read(location: str, key: str | None) -> TableFacts:
    from pyiceberg.conversions import from_bytes
    from pyiceberg.table import StaticTable

    table = StaticTable.from_metadata(_metadata_file(location))
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
    commits = []
    for s in table.metadata.snapshots:
        summary = s.summary.additional_properties if s.summary else {}
        operation = str(s.summary.operation.value) if s.summary else "?"
        rows = sum(int(summary.get(k, 0)) for k in ("deleted-records", "added-position-deletes")) or None
        commits.append(Commit(int(s.timestamp_ms), operation, rows, int(summary.get("added-data-files", 0)),
                              int(summary.get("deleted-data-files", 0)), operation in COMPACTIONS))
    notes = [] if field is None or any(f.key_min is not None for f in files) or not files else \
        [f"the manifests keep no bounds for {key}: key spread unknown"]
    return TableFacts("iceberg", location, files, commits, key, [f.name for f in spec.fields], deletes, notes)
