"""The project's own answers as data: the reference runs behind every figure it states, and their manifest.

``results/reference/`` holds one folder per run (its record files, never its tables) and ``manifest.json``: per run
its id, the exact command that made it, the harness commit, the machine (cores, memory, CPU), the storage, what it
backs (the figures' names, ``bench.report.figures``) and each file's sha256. A reference run is evidence: it is
added with ``cowmor reference add`` from the folder the run wrote, and ``check`` fails on a file that differs from
what was added, a folder with no manifest line, or a manifest line whose run says otherwise.
"""

from __future__ import annotations

import hashlib
import functools
import json
import shutil
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.exceptions import BadRecord
from bench.results.contract import FILES, LOCAL_DISK, Run, load_run, validate

REFERENCE_DIR = Path(__file__).resolve().parents[2] / "results" / "reference"
MANIFEST = "manifest.json"
RECORD_FILES = (*FILES, "time_breakdown.json")


@dataclass(frozen=True)
class Entry:
    """One reference run as the manifest states it."""

    run_id: str
    command: str
    commit: str | None
    machine: dict[str, Any]
    storage: str
    scale: str
    backs: list[str]
    sha256: dict[str, str] = field(default_factory=dict)

    @property
    def machine_label(self) -> str:
        """``2 cores, 24 GB, AMD EPYC …``: runs of different labels are never mixed in one ratio or fit."""
        memory = self.machine.get("memory_bytes") or 0
        return f"{self.machine.get('cpus', '?')} cores, {memory / 2**30:.0f} GB, {self.machine.get('cpu_model') or 'CPU not recorded'}"


def machine_of(environment: dict[str, Any]) -> dict[str, Any]:
    machine = environment.get("machine") or {}
    return {"cpus": machine.get("cpus"), "memory_bytes": machine.get("memory_bytes"), "cpu_model": machine.get("cpu_model")}


def storage_of(environment: dict[str, Any]) -> str:
    storage = environment.get("storage") or {"kind": LOCAL_DISK}
    delay = storage.get("delay_ms_per_request") or 0
    return storage.get("kind", "?") + (f", +{delay:g} ms per request" if delay else "")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_manifest(folder: Path = REFERENCE_DIR) -> list[Entry]:
    """The manifest's entries (none where the folder has no manifest yet).

    Raises:
        BadRecord: a manifest that is not a list of entries.
    """
    path = folder / MANIFEST
    if not path.exists():
        return []
    try:
        return [Entry(**e) for e in json.loads(path.read_text())]
    except (TypeError, ValueError) as err:
        raise BadRecord(f"{path}: not a manifest of reference runs ({err})") from None


def _write_manifest(folder: Path, entries: list[Entry]) -> None:
    (folder / MANIFEST).write_text(json.dumps([asdict(e) for e in entries], indent=2) + "\n")


def add(run_dir: Path, backs: list[str], folder: Path = REFERENCE_DIR, command: str | None = None) -> Entry:
    """Copy a recorded run's record files into the reference set and state it in the manifest.

    Raises:
        BadRecord: the run breaks the contract, is partial, is already in the set, or its command is unknown.
    """
    problems = validate(run_dir)
    if problems:
        raise BadRecord(f"{run_dir}: not a complete valid run: {problems[0]}")
    run = load_run(run_dir)
    env = run.environment
    command = command or env.get("command")
    if not command:
        raise BadRecord(f"{run_dir}: the run does not record the command that made it; name it with --command")
    entries = load_manifest(folder)
    if any(e.run_id == run.run_id for e in entries):
        raise BadRecord(f"{run.run_id} is already in {folder}: a reference run is added once, never replaced")
    target = folder / run.run_id
    target.mkdir(parents=True)
    for name in RECORD_FILES:
        if (run_dir / name).exists():
            shutil.copyfile(run_dir / name, target / name)
    entry = Entry(run.run_id, command, env.get("harness_commit"), machine_of(env), storage_of(env), run.scale,
                  sorted(set(backs)), {p.name: _sha256(p) for p in sorted(target.iterdir())})
    _write_manifest(folder, [*entries, entry])
    return entry


def _entry(entries: list[Entry], run_id: str, folder: Path) -> Entry:
    found = next((e for e in entries if e.run_id == run_id), None)
    if found is None:
        raise BadRecord(f"{run_id}: not in {folder}")
    return found


def retire(run_id: str, folder: Path = REFERENCE_DIR) -> Entry:
    """Take a run out of the set once a newer run backs its figures (git history keeps it, and its manifest line).

    Raises:
        BadRecord: no such run in the set.
    """
    entries = load_manifest(folder)
    gone = _entry(entries, run_id, folder)
    shutil.rmtree(folder / run_id, ignore_errors=True)
    _write_manifest(folder, [e for e in entries if e is not gone])
    return gone


def also_backs(run_id: str, backs: list[str], folder: Path = REFERENCE_DIR) -> Entry:
    """A run in the set backs more figures (a figure drawn anew from runs already in it); its files stay as added.

    Raises:
        BadRecord: no such run in the set.
    """
    entries = load_manifest(folder)
    found = _entry(entries, run_id, folder)
    grown = replace(found, backs=sorted(set(found.backs) | set(backs)))
    _write_manifest(folder, [grown if e is found else e for e in entries])
    return grown


def runs(folder: Path = REFERENCE_DIR) -> list[tuple[Entry, Run]]:
    """Every reference run with its manifest line, in the manifest's order (each run read once while neither the
    manifest nor its files change: the docs and the findings read the set figure by figure)."""
    entries = load_manifest(folder)
    return [(e, _loaded(folder / e.run_id, _stamp(folder / e.run_id))) for e in entries]


def stamp(folder: Path = REFERENCE_DIR) -> tuple:
    """What changes when the reference set does: the manifest's bytes and each listed run's files (``_stamp``)."""
    manifest = folder / MANIFEST
    return (manifest.read_bytes() if manifest.exists() else b"",
            tuple(_stamp(folder / e.run_id) for e in load_manifest(folder)))


def _stamp(run_dir: Path) -> tuple:
    """What changes when a run folder's files do: each file's name, size and modification time."""
    return tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(run_dir.glob("*")) if p.is_file()) \
        if run_dir.is_dir() else ()


@functools.lru_cache(maxsize=512)
def _loaded(run_dir: Path, stamp: tuple) -> Run:
    return load_run(run_dir)


def backing(figure: str, folder: Path = REFERENCE_DIR) -> list[tuple[Entry, Run]]:
    """The reference runs that back ``figure``."""
    return [(e, r) for e, r in runs(folder) if figure in e.backs]


def check(folder: Path = REFERENCE_DIR) -> list[str]:
    """Everything about the reference set that breaks its promise (empty when it holds)."""
    problems: list[str] = []
    entries = load_manifest(folder)
    listed = {e.run_id for e in entries}
    present = {p.name for p in folder.iterdir() if p.is_dir()} if folder.exists() else set()
    problems += [f"{folder / name}: a run folder with no manifest line" for name in sorted(present - listed)]
    for e in entries:
        run_dir = folder / e.run_id
        if not e.backs:
            problems.append(f"{e.run_id}: backs no figure (a run in the set is evidence for one; retire it)")
        if not run_dir.is_dir():
            problems.append(f"{e.run_id}: in the manifest, not in {folder}")
            continue
        problems += [f"{e.run_id}: {p}" for p in validate(run_dir)]
        files = {p.name for p in run_dir.iterdir()}
        if files != set(e.sha256):
            problems.append(f"{e.run_id}: holds {sorted(files)}, the manifest states {sorted(e.sha256)}")
        for name in sorted(files & set(e.sha256)):
            if _sha256(run_dir / name) != e.sha256[name]:
                problems.append(f"{e.run_id}/{name}: differs from the file that was added (a reference run is never edited)")
        try:
            env = load_run(run_dir).environment
        except BadRecord as err:
            problems.append(str(err))
            continue
        stated = {"run id": (e.run_id, env.get("run_id")), "commit": (e.commit, env.get("harness_commit")),
                  "machine": (e.machine, machine_of(env)), "storage": (e.storage, storage_of(env))}
        problems += [f"{e.run_id}: the manifest's {what} is {said!r}, the run's {found!r}"
                     for what, (said, found) in stated.items() if said != found]
    return problems
