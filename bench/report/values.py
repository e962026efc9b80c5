"""Figures quoted in prose, generated: ``<!-- value:NAME -->5.1 GB<!-- /value -->`` in a doc holds what ``VALUES[NAME]``
reads from one reference run's record, rewritten by ``cowmor docs`` and compared by ``--check`` like a figure block, so
a number in a sentence cannot go stale or be typed by hand unnoticed."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.core.units import human_bytes
from bench.results.contract import HOTFIX, Record
from bench.results.reference import REFERENCE_DIR, runs
from bench.results.schema import HotfixUpdate

INLINE = re.compile(r"(<!-- value:(?P<name>[\w-]+) -->)(?P<body>.*?)(<!-- /value -->)")


@dataclass(frozen=True)
class Value:
    """One figure of one record: the run (it must be in the manifest), the record's configuration and route, and how
    the figure is read from it and written."""

    run_id: str
    config_id: str
    route: str
    read: Callable[[Record], str]
    scenario: str = HOTFIX
    operation: str = "update"


def _hotfix(read: Callable[[HotfixUpdate], str]) -> Callable[[Record], str]:
    return lambda record: read(record.view(HotfixUpdate))


VALUES: dict[str, Value] = {
    "seed-join-dv-bytes-read": Value("hotfix-seed-iceberg-dv-join-m1", "iceberg-dv", "join",
                                     _hotfix(lambda u: human_bytes(u.locate.bytes_read if u.locate else None))),
    "seed-join-cow-bytes-read": Value("hotfix-seed-iceberg-delta-join-m1", "iceberg-cow", "join",
                                      _hotfix(lambda u: human_bytes(u.locate.bytes_read if u.locate else None))),
    "seed-index-hudi-cow-files-replaced": Value("hotfix-seed-hudi-cow-index-m1", "hudi-cow", "index",
                                                _hotfix(lambda u: f"{u.metadata.data_files_removed:,}")),
    "seed-index-hudi-cow-written": Value("hotfix-seed-hudi-cow-index-m1", "hudi-cow", "index",
                                         _hotfix(lambda u: human_bytes(u.filesystem.bytes_added))),
}


def value(name: str, folder: Path = REFERENCE_DIR) -> str:
    """The text of value ``name`` as its run records it.

    Raises:
        KeyError: no such value, or its run is not in the reference set, or the run holds no such record.
    """
    spec = VALUES[name]
    run = {e.run_id: run for e, run in runs(folder)}.get(spec.run_id)
    if run is None:
        raise KeyError(f"value {name}: run {spec.run_id} is not in the reference set")
    records = [r for r in run.records(spec.scenario, spec.operation, route=spec.route) if r.config_id == spec.config_id]
    if not records:
        raise KeyError(f"value {name}: run {spec.run_id} holds no {spec.scenario} {spec.operation} of {spec.config_id} ({spec.route})")
    return spec.read(records[0])


def rewrite(text: str, folder: Path = REFERENCE_DIR) -> str:
    """``text`` with every inline value regenerated."""
    return INLINE.sub(lambda m: m.group(1) + value(m.group("name"), folder) + m.group(4), text)


def drift(path: Path, folder: Path = REFERENCE_DIR) -> list[str]:
    """One line per inline value of ``path`` that is unknown or differs from its run."""
    out = []
    for m in INLINE.finditer(path.read_text()):
        if m.group("name") not in VALUES:
            out.append(f"{path}: unknown value {m.group('name')!r}")
        elif m.group("body") != value(m.group("name"), folder):
            out.append(f"{path}: value {m.group('name')} is not what run {VALUES[m.group('name')].run_id} records (run `make docs`)")
    return out
