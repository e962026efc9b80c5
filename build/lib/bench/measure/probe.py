"""Filesystem truth: list a table directory before and after an operation and diff the two."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.core.storage import Files
from bench.formats.base import FILE_KINDS

CHECKSUM_SUFFIX = ".crc"  # Hadoop writes a .crc beside every file; counted apart, never as data


@dataclass(frozen=True)
class Listing:
    files: dict[str, int]  # relative path -> size in bytes
    checksums: dict[str, int]

    @property
    def bytes(self) -> int:
        return sum(self.files.values())

    def fingerprint(self) -> dict[str, object]:
        """Count, bytes and a digest of every (relative path, size): equal exactly when the listings are."""
        digest = hashlib.sha256("\n".join(f"{p}\t{n}" for p, n in sorted(self.files.items())).encode()).hexdigest()
        return {"files": len(self.files), "bytes": self.bytes, "sha256": digest}


def list_files(table_dir: Path | str | Files) -> Listing:
    """Every file under ``table_dir`` (relative path -> size), ``.crc`` sidecars apart; any warehouse URI."""
    files: dict[str, int] = {}
    checksums: dict[str, int] = {}
    for rel, size in Files.of(table_dir).walk().items():
        (checksums if rel.endswith(CHECKSUM_SUFFIX) else files)[rel] = size
    return Listing(files, checksums)


@dataclass
class KindDelta:
    files_added: int = 0
    bytes_added: int = 0
    files_removed: int = 0
    bytes_removed: int = 0


@dataclass
class StorageDelta:
    """What an operation did to the table directory, split by file kind."""

    by_kind: dict[str, KindDelta] = field(default_factory=lambda: {k: KindDelta() for k in FILE_KINDS})
    checksum_files_added: int = 0
    # finer parts a format names by path prefix (Hudi's metadata table), reported beside the kinds
    by_part: dict[str, KindDelta] = field(default_factory=dict)

    @property
    def files_added(self) -> int:
        return sum(d.files_added for d in self.by_kind.values())

    @property
    def bytes_added(self) -> int:
        return sum(d.bytes_added for d in self.by_kind.values())

    @property
    def files_removed(self) -> int:
        return sum(d.files_removed for d in self.by_kind.values())

    @property
    def bytes_removed(self) -> int:
        return sum(d.bytes_removed for d in self.by_kind.values())

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"files_added": self.files_added, "bytes_added": self.bytes_added,
                                  "files_removed": self.files_removed, "bytes_removed": self.bytes_removed,
                                  "checksum_files_added": self.checksum_files_added}
        for kind, d in self.by_kind.items():
            out[kind] = vars(d).copy()
        if self.by_part:
            out["parts"] = {part: vars(d).copy() for part, d in self.by_part.items()}
        return out


def diff(before: Listing, after: Listing, classify: Callable[[str], str],
         parts: dict[str, str] | None = None) -> StorageDelta:
    """Files present only after are added, only before removed; a file rewritten in place counts as both.

    ``parts`` maps a path prefix to a name (e.g. ``.hoodie/metadata/`` -> ``metadata_table``): files under it
    are also summed under that name, so a cost hidden inside a kind can be shown on its own.
    """
    delta = StorageDelta(by_part={name: KindDelta() for name in (parts or {}).values()})

    def touched(rel: str) -> list[KindDelta]:
        return [delta.by_kind[classify(rel)]] + [delta.by_part[n] for p, n in (parts or {}).items() if rel.startswith(p)]

    for rel, size in after.files.items():
        if rel not in before.files or before.files[rel] != size:
            for d in touched(rel):
                d.files_added += 1
                d.bytes_added += size
    for rel, size in before.files.items():
        if rel not in after.files or after.files[rel] != size:
            for d in touched(rel):
                d.files_removed += 1
                d.bytes_removed += size
    delta.checksum_files_added = len(set(after.checksums) - set(before.checksums))
    return delta


def table_size(listing: Listing, classify: Callable[[str], str]) -> dict[str, dict[str, int]]:
    """Files and bytes currently on disk per kind (live and not-yet-expired alike)."""
    out = {k: {"files": 0, "bytes": 0} for k in FILE_KINDS}
    for rel, size in listing.files.items():
        kind = classify(rel)
        out[kind]["files"] += 1
        out[kind]["bytes"] += size
    return out
