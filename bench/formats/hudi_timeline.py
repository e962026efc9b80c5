"""Read a Hudi table's ``.hoodie`` timeline in Python: instants, commit metadata, write stats, live files.

Handles both timeline layouts: version 1 (flat ``.hoodie/``, JSON commit metadata; table versions <= 6)
and version 2 (``.hoodie/timeline/``, completed instants named ``<requested>_<completed>.<action>``,
Avro commit metadata; table versions 8+, which Hudi 1.0 writes).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.core.storage import Files

WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")
_INSTANT = re.compile(r"^(\d+)(?:_(\d+))?\.([a-z_]+)(?:\.(requested|inflight))?$")
_COMMIT_INFLIGHT = re.compile(r"^(\d+)\.inflight$")  # both layouts name a commit's inflight file without the action
_BASE_FILE = re.compile(r"^(?P<file_id>.+)_(?P<token>\d+-\d+-\d+)_(?P<instant>\d+)\.(parquet|orc|hfile)$")
_LOG_FILE = re.compile(r"^\.(?P<file_id>.+)_(?P<instant>\d+)\.log\.(?P<version>\d+)(?:_(?P<token>[\d-]+))?$")


@dataclass(frozen=True)
class Instant:
    requested: str
    action: str
    state: str  # REQUESTED | INFLIGHT | COMPLETED
    completed: str | None
    path: Files

    @property
    def is_write(self) -> bool:
        return self.action in WRITE_ACTIONS


def epoch(instant_time: str | None) -> float | None:
    """An instant time (``yyyyMMddHHmmssSSS``, the writer JVM's local time zone, Hudi's default
    ``hoodie.table.timeline.timezone=LOCAL``) as epoch seconds, read in this machine's zone (the writers run here)."""
    if not instant_time or len(instant_time) < 17:
        return None
    import datetime

    return datetime.datetime.strptime(instant_time[:17], "%Y%m%d%H%M%S%f").timestamp()


def timeline_dir(table_dir: Path | str | Files) -> Files:
    hoodie = Files.of(table_dir) / ".hoodie"
    return hoodie / "timeline" if (hoodie / "timeline").is_dir() else hoodie


def table_properties(table_dir: Path | str | Files) -> dict[str, str]:
    props: dict[str, str] = {}
    for line in (Files.of(table_dir) / ".hoodie" / "hoodie.properties").read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            props[key.strip()] = value.strip().replace("\\:", ":")
    return props


def instants(table_dir: Path | str | Files) -> list[Instant]:
    """Every instant file on the active timeline, sorted by requested time then state."""
    out = []
    for path in timeline_dir(table_dir).iterdir():
        if path.name.startswith(".") or path.name in ("archived", "history", "timeline", "metadata", ".aux", ".temp") \
                or "." not in path.name:
            continue
        match = _INSTANT.match(path.name)
        if _COMMIT_INFLIGHT.match(path.name):  # before _INSTANT, which would read "inflight" as a completed action
            out.append(Instant(path.name.split(".")[0], "commit", "INFLIGHT", None, path))
        elif match:
            requested, completed, action, state = match.groups()
            out.append(Instant(requested, action, (state or "completed").upper(), completed, path))
    order = {"REQUESTED": 0, "INFLIGHT": 1, "COMPLETED": 2}
    return sorted(out, key=lambda i: (i.requested, order[i.state]))


def completed_writes(table_dir: Path | str | Files) -> list[Instant]:
    """Completed commits, delta commits and replace commits (a finished compaction is a ``commit``)."""
    return [i for i in instants(table_dir) if i.state == "COMPLETED" and i.is_write]


def compaction_instants(table_dir: Path | str | Files) -> set[str]:
    return {i.requested for i in instants(table_dir) if i.action == "compaction"}


@dataclass(frozen=True)
class ArchivedInstant:
    """A completed instant moved off the active timeline (``hoodie.keep.max.commits``, 30 by default, is reached
    within minutes by several writers and a table service), as Hudi 1.x's LSM timeline keeps it."""

    requested: str
    completed: str
    action: str
    metadata: dict[str, Any]


def archived_instants(table_dir: Path | str | Files) -> list[ArchivedInstant]:
    """The LSM timeline (``timeline/history``): the files its latest manifest names (``_version_`` -> ``manifest_N``,
    JSON), each a Parquet table of instants with their commit metadata (Avro container bytes); [] without one."""
    history = timeline_dir(table_dir) / "history"
    version = history / "_version_"
    if not version.is_file():
        return []
    manifest = json.loads((history / f"manifest_{version.read_text().strip()}").read_text())
    import pyarrow.parquet as pq

    out = []
    for entry in manifest.get("files", []):
        part = history / entry["fileName"]
        with part.fs.open_input_file(part.path) as f:
            rows = pq.read_table(f, columns=["instantTime", "completionTime", "action", "metadata"]).to_pylist()
        out += [ArchivedInstant(r["instantTime"], r["completionTime"], r["action"], _decode(r["metadata"] or b""))
                for r in rows]
    return sorted(out, key=lambda i: i.requested)


def commit_metadata(instant: Instant) -> dict[str, Any]:
    """The commit metadata of a completed instant: JSON (layout 1) or an Avro container (layout 2)."""
    return _decode(instant.path.read_bytes())


def _decode(raw: bytes) -> dict[str, Any]:
    if raw[:4] == b"Obj\x01":
        import io

        import fastavro

        records = list(fastavro.reader(io.BytesIO(raw)))
        return records[0] if records else {}
    return json.loads(raw) if raw.strip() else {}


def write_stats(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-file write stats, flattened over partitions, each marked ``log`` or ``base``."""
    stats = []
    for partition, entries in (metadata.get("partitionToWriteStats") or {}).items():
        for entry in entries or []:
            name = (entry.get("path") or "").rsplit("/", 1)[-1]
            stats.append({**entry, "partition": partition, "kind": "log" if ".log." in name else "base"})
    return stats


@dataclass
class CommitSummary:
    instant: str
    action: str
    is_compaction: bool
    operation: str | None
    base_files_written: int = 0
    log_files_written: int = 0
    base_files_replaced: int = 0  # a new version of an existing file slice (copy-on-write rewrite)
    bytes_written: int = 0
    records_inserted: int = 0
    records_updated: int = 0
    records_deleted: int = 0
    log_records_written: int = 0  # rows that exist only in log files (invisible to read-optimized reads)
    log_files_compacted: int = 0
    log_bytes_compacted: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def summarize(instant: Instant, compactions: set[str]) -> CommitSummary:
    metadata = commit_metadata(instant)
    summary = CommitSummary(instant.requested, instant.action, instant.requested in compactions,
                            metadata.get("operationType"))
    for s in write_stats(metadata):
        if s["kind"] == "log":
            summary.log_files_written += 1
            summary.log_records_written += int(s.get("numWrites") or 0)
        else:
            summary.base_files_written += 1
            prev = s.get("prevCommit")
            if prev not in (None, "null", "") and not summary.is_compaction:
                summary.base_files_replaced += 1
        summary.bytes_written += int(s.get("totalWriteBytes") or 0)
        summary.records_inserted += int(s.get("numInserts") or 0)
        summary.records_updated += int(s.get("numUpdateWrites") or 0)
        summary.records_deleted += int(s.get("numDeletes") or 0)
        summary.log_files_compacted += int(s.get("totalLogFilesCompacted") or 0)
        summary.log_bytes_compacted += int(s.get("totalLogSizeCompacted") or 0)
    return summary


def summaries_since(table_dir: Path | str | Files, since: str | None) -> list[CommitSummary]:
    """Completed write instants requested after ``since`` (all of them when ``since`` is None)."""
    compactions = compaction_instants(table_dir)
    return [summarize(i, compactions) for i in completed_writes(table_dir) if since is None or i.requested > since]


def latest_instant(table_dir: Path | str | Files) -> str | None:
    writes = completed_writes(table_dir)
    return writes[-1].requested if writes else None


def live_files(table_dir: Path | str | Files) -> dict[str, int]:
    """Base and log files of the latest file slices, from the file names and the completed instants.

    A base file counts if its instant completed and it is the newest of its file group; a log file counts
    if it is not older than that base (Hudi <= 0.x names logs by their base instant, 1.x by their delta
    commit, so ``>=`` covers both). Replaced file groups (clustering) are not excluded.
    """
    root = Files.of(table_dir)
    done = {i.requested for i in instants(root) if i.state == "COMPLETED"}
    newest_base: dict[tuple[str, str], str] = {}
    logs: list[tuple[tuple[str, str], str]] = []
    for rel in root.walk():
        if rel.startswith(".hoodie/"):
            continue
        partition, _, name = rel.rpartition("/")
        if m := _BASE_FILE.match(name):
            if m["instant"] in done:
                group = (partition, m["file_id"])
                newest_base[group] = max(newest_base.get(group, ""), m["instant"])
        elif m := _LOG_FILE.match(name):
            logs.append(((partition, m["file_id"]), m["instant"]))
    live_logs = sum(1 for group, instant in logs if instant >= newest_base.get(group, ""))
    return {"data_files": len(newest_base), "delete_files": live_logs}
