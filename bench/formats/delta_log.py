"""Read a Delta table's ``_delta_log`` in Python: commits, add/remove actions, deletion vectors, live files."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.core.storage import Files

_COMMIT = re.compile(r"^(\d{20})\.json$")
_CLASSIC_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint(?:\.\d{10}\.\d{10})?\.parquet$")


def log_dir(table_dir: Path | str | Files) -> Files:
    return Files.of(table_dir) / "_delta_log"


def commit_versions(table_dir: Path | str | Files) -> list[int]:
    return sorted(int(m.group(1)) for p in log_dir(table_dir).iterdir() if (m := _COMMIT.match(p.name)))


def latest_version(table_dir: Path | str | Files) -> int | None:
    versions = commit_versions(table_dir)
    return versions[-1] if versions else None


def read_commit(table_dir: Path | str | Files, version: int) -> list[dict[str, Any]]:
    """The actions of one commit file (one JSON object per line)."""
    text = (log_dir(table_dir) / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@dataclass
class DeltaCommit:
    version: int
    operation: str | None = None
    files_added: int = 0  # new data files (a file re-added only to attach a DV is not new)
    bytes_added: int = 0
    files_removed: int = 0  # data files no longer referenced
    bytes_removed: int = 0
    dvs_added: int = 0
    dv_bytes_added: int = 0
    dv_rows_added: int = 0  # cardinality: rows the new DVs mark deleted
    dvs_removed: int = 0
    dv_storage_types: list[str] = field(default_factory=list)
    operation_metrics: dict[str, str] = field(default_factory=dict)
    user_metadata: str | None = None  # commitInfo.userMetadata (a writer's label)
    timestamp_ms: int | None = None  # commitInfo.timestamp: when the commit was made
    isolation_level: str | None = None  # commitInfo.isolationLevel: how the commit was checked against concurrent ones

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def summarize_commit(version: int, actions: list[dict[str, Any]]) -> DeltaCommit:
    commit = DeltaCommit(version)
    adds = {a["add"]["path"]: a["add"] for a in actions if "add" in a}
    removes = {a["remove"]["path"]: a["remove"] for a in actions if "remove" in a}
    for a in actions:
        if "commitInfo" in a:
            commit.operation = a["commitInfo"].get("operation")
            commit.operation_metrics = a["commitInfo"].get("operationMetrics") or {}
            commit.user_metadata = a["commitInfo"].get("userMetadata")
            commit.timestamp_ms = a["commitInfo"].get("timestamp")
            commit.isolation_level = a["commitInfo"].get("isolationLevel")
    for path, add in adds.items():
        dv = add.get("deletionVector")
        if dv:
            commit.dvs_added += 1
            commit.dv_bytes_added += int(dv.get("sizeInBytes", 0))
            commit.dv_rows_added += int(dv.get("cardinality", 0)) - int(((removes.get(path) or {}).get("deletionVector") or {}).get("cardinality", 0))
            commit.dv_storage_types.append(dv.get("storageType"))
        if path not in removes:
            commit.files_added += 1
            commit.bytes_added += int(add.get("size", 0))
    for path, remove in removes.items():
        if remove.get("deletionVector"):
            commit.dvs_removed += 1
        if path not in adds:
            commit.files_removed += 1
            commit.bytes_removed += int(remove.get("size") or 0)
    return commit


def commits_since(table_dir: Path | str | Files, since: int | None) -> list[DeltaCommit]:
    """Summaries of the commits after version ``since`` (all when None)."""
    return [summarize_commit(v, read_commit(table_dir, v)) for v in commit_versions(table_dir)
            if since is None or v > since]


def file_id(action: dict[str, Any]) -> tuple[str, str | None]:
    """A logical file's identity in the Delta protocol: its path and its deletion vector's unique id.

    A commit that attaches a DV removes (path, old DV) and adds (path, new DV), in any order; keying by path
    alone would let the remove cancel the add.
    """
    dv = action.get("deletionVector")
    if not dv:
        return action["path"], None
    offset = dv.get("offset")
    return action["path"], f"{dv.get('storageType')}{dv.get('pathOrInlineDv')}" + (f"@{offset}" if offset is not None else "")


def _checkpoint_adds(table_dir: Files, version: int) -> dict[tuple[str, str | None], dict[str, Any]]:
    import pyarrow.parquet as pq

    live: dict[tuple[str, str | None], dict[str, Any]] = {}
    parts = sorted((p for p in log_dir(table_dir).iterdir()
                    if (m := _CLASSIC_CHECKPOINT.match(p.name)) and int(m.group(1)) == version), key=lambda p: p.name)
    for part in parts:
        for row in pq.read_table(part.path, columns=["add"], filesystem=part.fs).column("add").to_pylist():
            if row:
                live[file_id(row)] = row
    return live


def live_files(table_dir: Path | str | Files) -> dict[str, int]:
    """Replay the log (from the newest classic checkpoint, else from version 0): live data files and DVs."""
    table_dir = Files.of(table_dir)
    versions = commit_versions(table_dir)
    checkpoints = sorted({int(m.group(1)) for p in log_dir(table_dir).iterdir() if (m := _CLASSIC_CHECKPOINT.match(p.name))})
    start = 0
    live: dict[tuple[str, str | None], dict[str, Any]] = {}
    if versions and versions[0] > 0 or (checkpoints and checkpoints[-1] in versions and checkpoints[-1] > 0):
        if not checkpoints:
            raise ValueError(f"{table_dir}: log starts at version {versions[0]} with no classic checkpoint to start from")
        live = _checkpoint_adds(table_dir, checkpoints[-1])
        start = checkpoints[-1] + 1
    for version in (v for v in versions if v >= start):
        actions = read_commit(table_dir, version)
        for action in actions:  # removes first: within one commit, order carries no meaning
            if "remove" in action:
                live.pop(file_id(action["remove"]), None)
        for action in actions:
            if "add" in action:
                live[file_id(action["add"])] = action["add"]
    return {"data_files": len(live), "delete_files": sum(1 for a in live.values() if a.get("deletionVector")),
            "data_bytes": sum(int(a.get("size") or 0) for a in live.values())}
