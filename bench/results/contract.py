"""The results contract: what a recorded run holds, how a scenario writes its record, how everyone reads it back.

A run is a folder ``results/<run-id>/`` with pytest-benchmark's ``benchmark.json`` (every measured operation,
cowmor's fields in ``extra_info``), ``environment.json`` (versions, machine, the configuration matrix) and
``outcomes.json`` (every configuration's pass / fail / skip). Scenarios write the header of each record with
``header()``; the report, compare and history read runs through ``load_run()`` and the typed ``Record`` and
``Matrix``, never through loops over string keys. ``validate()`` checks a folder against this contract
(``python -m bench validate RUNDIR``). A change to what is recorded bumps ``SCHEMA_VERSION``.
"""

from __future__ import annotations

import json
import math
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.core.ledger import TimeBreakdown
from bench.exceptions import BadRecord

# the scenarios' names and every record's typed shape live in ``bench.results.schema``; re-exported for its readers
from bench.results.schema import (  # noqa: F401
    COMPACTION_CADENCE, CONCURRENT_COMPACTION, DEGRADATION, DINNER_PEAK, FILE_SIZE, HOTFIX, KINDS, LAST_ROUND, LATE_ARRIVALS, MEMORY_FIELDS,
    MEMORY_NEEDED, SETTLEMENTS, SEVERAL_WRITERS, TABLE_GROWTH, UPDATE_SWEEP, Environment, Memory, T, Uncertainty, parse,
    required_and_optional)

SCHEMA_VERSION = 2  # 1: every run recorded before the contract existed (no schema_version anywhere); 2 adds route/locate as optional fields
LOCAL_DISK = "local disk"  # the storage of a run on no object store
REFERENCE_ENGINE = "spark"  # the engine that writes every table; its reads are the report's reference
FILES = ("benchmark.json", "environment.json", "outcomes.json")

# the header every measured record carries, whatever the scenario
HEADER = ("schema_version", "scenario", "operation", "config_id", "family", "mode", "scale", "seed", "settings")


# peak memory over an operation (``bench.measure.memory``): the key of its figures in a record and in each round
MEMORY = "memory"
# what a record carries beyond its header and its spec's fields: the grid point, the answer check, the timing's spread
RECORD_EXTRAS = ("param", "answers_verified", "uncertainty")
BASELINE_ROUTE = "join"  # the route every record without one took (a MERGE / IN (SELECT …) from a keys table)


@dataclass(frozen=True)
class Spec:
    """What one (scenario, operation) record holds beyond the header: required fields and optional ones, each with its
    type. ``record()`` refuses a record that lacks a required field, carries an undeclared one or a wrong type."""

    required: dict[str, Any]
    optional: dict[str, Any] = field(default_factory=dict)

    def problems(self, fields: dict[str, Any]) -> list[str]:
        declared = self.required | self.optional
        out = [f"lacks {k}" for k in self.required if k not in fields]
        out += [f"undeclared field {k}" for k in fields if k not in declared]
        out += [f"{k} is {type(v).__name__}, not {_type_name(declared[k])}" for k, v in fields.items()
                if k in declared and v is not None and not isinstance(v, declared[k])]
        return out


def _type_name(t: Any) -> str:
    return " or ".join(x.__name__ for x in t) if isinstance(t, tuple) else t.__name__


# what ``record()`` accepts and ``validate`` checks, per (scenario, operation): derived from the typed classes
SPECS: dict[tuple[str, str], Spec] = {key: Spec(*required_and_optional(kind)) for key, kind in KINDS.items()}


def record(scenario: str, operation: str, head: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """A whole record (header + fields), checked against its typed spec; ``answers_verified`` is set here, for a record
    can only be built after its scenario checked every answer (a wrong one raises before this is reached).

    Raises:
        ValueError: no spec for the pair, or the fields break it (one line naming every problem).
    """
    spec = SPECS.get((scenario, operation))
    if spec is None:
        raise ValueError(f"({scenario!r}, {operation!r}) has no typed spec in bench/results/contract.py")
    problems = spec.problems(fields)
    if problems:
        raise ValueError(f"({scenario}, {operation}) record: {'; '.join(problems)}")
    return {**head, **fields, "answers_verified": True}


OUTCOMES = ("passed", "failed", "skipped")
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
MAX_JSON_BYTES = 512 * 2**20


def header(scenario: str, operation: str, config_id: str, family: str, mode: str, scale: str, seed: int,
           settings: list[dict[str, Any]], param: str | None = None) -> dict[str, Any]:
    """The fields every measured record starts with (``benchmark.extra_info``).

    Raises:
        ValueError: a scenario/operation pair the contract does not know (add its ``Spec`` to ``SPECS``).
    """
    if (scenario, operation) not in SPECS:
        raise ValueError(f"({scenario!r}, {operation!r}) is not in the results contract (bench/results/contract.py)")
    out = {"schema_version": SCHEMA_VERSION, "scenario": scenario, "operation": operation, "config_id": config_id,
           "family": family, "mode": mode, "scale": scale, "seed": seed, "settings": settings}
    if param is not None:
        out["param"] = param
    return out


def check_run_id(run_id: str) -> str:
    """A run id is one path component of at most 100 safe characters (it names folders under results/ and reports/).

    Raises:
        BadRecord: anything else (``..``, a slash, an absolute path, an empty or overlong name).
    """
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id) or run_id in (".", ".."):
        raise BadRecord(f"run id {str(run_id)[:120]!r} is not a folder name: use 1-100 letters, digits, '.', '_' "
                        f"or '-', starting with a letter or digit")
    return run_id


# --- reading ---------------------------------------------------------------------------------------------------

ORIGIN = "cowmor_origin"  # a merged view's mark on each benchmark: the run, host and commit that measured it


@dataclass(frozen=True)
class Origin:
    """Where one record was measured. Two records' times may be divided only when host and commit are the same: a
    recorded host identity (``Machine.host_id``), not a CPU class; a run that recorded none is a host of its own."""

    run_id: str
    host: str
    commit: str

    @property
    def key(self) -> tuple[str, str]:
        return self.host, self.commit

    def as_dict(self) -> dict[str, str]:
        return {"run_id": self.run_id, "host": self.host, "commit": self.commit}


@dataclass(frozen=True)
class Record:
    """One measured operation of a run: its name, timing statistics and cowmor's fields."""

    name: str
    fullname: str
    stats: dict[str, Any]
    info: dict[str, Any]
    origin: Origin = Origin("", "", "")

    @property
    def scenario(self) -> str:
        return self.info.get("scenario", "")

    @property
    def operation(self) -> str:
        return self.info.get("operation", "")

    @property
    def config_id(self) -> str:
        return self.info.get("config_id", "")

    @property
    def family(self) -> str:
        return self.info.get("family", "")

    @property
    def mode(self) -> str:
        return self.info.get("mode", "")

    @property
    def param(self) -> str | None:
        return self.info.get("param")

    @property
    def route(self) -> str:
        """How the operation found its rows (records made before routes existed took the baseline, ``join``)."""
        return self.info.get("route") or BASELINE_ROUTE

    @property
    def answers_verified(self) -> bool:
        """Every answer of the operation was checked (a record is only written after its scenario checked them)."""
        return bool(self.info.get("answers_verified"))

    @property
    def measured(self) -> bool:
        """Timed and recorded; a test that failed after its timed rounds has a name and stats but no header."""
        return bool(self.info.get("config_id"))

    @property
    def seconds(self) -> list[float]:
        """Every round's time (the median alone where pytest-benchmark kept no data)."""
        return list(self.stats.get("data") or [self.stats["median"]])

    @property
    def memory(self) -> dict[str, int | None]:
        """Peak memory over the operation: each field's largest over its rounds (the memory it needed at most), or
        the record's own where it kept no rounds; empty for runs recorded before memory was."""
        measured = [r[MEMORY] for r in self.info.get("rounds") or [] if isinstance(r, dict) and r.get(MEMORY)]
        measured = measured or ([self.info[MEMORY]] if self.info.get(MEMORY) else [])
        if not measured:
            return {}
        return {f: max((m[f] for m in measured if m.get(f) is not None), default=None) for f in MEMORY_FIELDS}

    @property
    def spread(self) -> Uncertainty:
        """The timing's median and its 95% interval, as recorded; for records made before that, from their rounds."""
        from bench.core.uncertainty import describe

        return parse(Uncertainty, self.info.get("uncertainty") or describe(self.seconds))

    def view(self, kind: type[T]) -> T:
        """The record's fields as their typed class (``bench.results.schema``): attributes, not string keys.

        Raises:
            TypeError: the record is of another (scenario, operation) than ``kind`` gives.
        """
        if KINDS.get((self.scenario, self.operation)) is not kind:
            raise TypeError(f"{self.name}: a ({self.scenario}, {self.operation}) record is not a {kind.__name__}")
        return parse(kind, self.info)

    @property
    def peak_memory(self) -> Memory:
        """``memory`` as its typed class (every field None for runs recorded before memory was)."""
        return parse(Memory, self.memory)

    def get(self, key: str, default: Any = None) -> Any:
        return self.info.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.info[key]


@dataclass(frozen=True)
class ConfigEntry:
    id: str
    family: str
    mode: str
    merges_on_read: bool


@dataclass(frozen=True)
class Matrix:
    """The configurations a run measured, as it recorded them: the report takes families and modes from here."""

    configs: dict[str, ConfigEntry] = field(default_factory=dict)

    @property
    def families(self) -> list[str]:
        return list(dict.fromkeys(c.family for c in self.configs.values()))

    def family_of(self, config_id: str) -> str:
        entry = self.configs.get(config_id)
        return entry.family if entry else config_id.split("-", 1)[0]

    def merges_on_read(self, config_id: str) -> bool:
        entry = self.configs.get(config_id)
        return entry.merges_on_read if entry else not config_id.endswith("-cow")

    def cow_mor_pairs(self, config_ids: Any = None) -> list[tuple[str, str]]:
        """Each family's copy-on-write configuration against its merge-on-read ones, where both are present."""
        present = set(self.configs if config_ids is None else config_ids)
        pairs = []
        for family in self.families:
            members = [c for c in self.configs.values() if c.family == family and c.id in present]
            pairs += [(cow.id, mor.id) for cow in members if not cow.merges_on_read
                      for mor in members if mor.merges_on_read]
        return pairs

    @classmethod
    def from_ids(cls, config_ids: Any) -> Matrix:
        """A matrix guessed from ids alone (``family-mode``, ``-cow`` copies on write): for records with no environment."""
        return cls({c: ConfigEntry(c, c.split("-", 1)[0], c.split("-", 1)[-1], not c.endswith("-cow")) for c in config_ids})


def _matrix(environment: dict[str, Any], records: list[Record]) -> Matrix:
    configs: dict[str, ConfigEntry] = {}
    for config_id, c in (environment.get("configs") or {}).items():
        if isinstance(c, dict):
            configs[config_id] = ConfigEntry(config_id, str(c.get("family") or config_id.split("-", 1)[0]),
                                             str(c.get("mode") or ""), bool(c.get("merges_on_read")))
    for r in records:  # a record whose configuration the environment does not list still belongs to the matrix
        if r.measured and r.config_id not in configs:
            configs[r.config_id] = ConfigEntry(r.config_id, r.family or r.config_id.split("-", 1)[0], r.mode,
                                               not r.config_id.endswith("-cow"))
    return Matrix(configs)


@dataclass(frozen=True)
class Run:
    """One recorded run: its benchmark JSON, environment and outcomes (skips and failures included).

    ``partial`` is set for a run that died before pytest-benchmark wrote ``benchmark.json``, or that a signal
    stopped early (``environment.interrupted``): what it kept is still a run, reported as such.
    """

    path: Path
    data: dict[str, Any]
    partial: bool = False

    @property
    def why_partial(self) -> str:
        signal = self.environment.get("interrupted")
        return f"stopped by {signal} before it finished" if signal else "the run died before it finished"

    @property
    def cowmor(self) -> dict[str, Any]:
        return self.data.get("cowmor") or {}

    @property
    def environment(self) -> dict[str, Any]:
        return self.cowmor.get("environment") or {}

    @property
    def env(self) -> Environment:
        """The environment as its typed class (``bench.results.schema.Environment``)."""
        return parse(Environment, self.environment)

    @property
    def outcomes(self) -> list[dict[str, Any]]:
        return self.cowmor.get("outcomes") or []

    @property
    def time_breakdown(self) -> TimeBreakdown | None:
        """Where the run's time went (``time_breakdown.json``); None for a run that recorded none."""
        raw = self.cowmor.get("time_breakdown")
        return parse(TimeBreakdown, raw) if raw else None

    @property
    def run_id(self) -> str:
        return str(self.environment.get("run_id") or self.path.parent.name)

    @property
    def scale(self) -> str:
        return str((self.environment.get("scale") or {}).get("name", "?"))

    @property
    def origin(self) -> Origin:
        host = (self.environment.get("machine") or {}).get("host_id")
        return Origin(self.run_id, str(host or f"host of run {self.run_id}"), str(self.environment.get("harness_commit") or "?"))

    @property
    def benchmarks(self) -> list[dict[str, Any]]:
        return self.data.get("benchmarks") or []

    def records(self, scenario: str | None = None, operation: str | None = None,
                route: str | None = BASELINE_ROUTE, other_layouts: bool = False, superseded: bool = False) -> list[Record]:
        """The measured records, optionally of one scenario and operation; of the baseline locate route unless asked
        for another (``route=None``: every route), so a view that knows no routes never mixes them. With
        ``other_layouts``, also those a merge of runs kept aside: the same test on another table layout (the cost
        model's points; every other view keeps one record per test). With ``superseded``, first the records a merge
        replaced by newer ones, oldest first (a ratio's pair is taken from one run)."""
        out, own = [], self.origin
        older = self.cowmor.get("superseded") or [] if superseded else []
        for b in [*older, *self.benchmarks, *(self.cowmor.get("other_layouts") or [] if other_layouts else [])]:
            r = Record(b.get("name", ""), b.get("fullname") or b.get("name", ""), b.get("stats") or {},
                       b.get("extra_info") or {}, Origin(**b[ORIGIN]) if ORIGIN in b else own)
            if r.measured and (scenario is None or r.scenario == scenario) and (operation is None or r.operation == operation) \
                    and (route is None or r.route == route):
                out.append(r)
        return out

    @property
    def matrix(self) -> Matrix:
        return _matrix(self.environment, self.records())


def _read_json(path: Path, what: str) -> Any:
    """JSON from a regular file, or one line saying what is wrong with it."""
    try:
        info = path.stat()
    except OSError as err:
        raise BadRecord(f"{path}: cannot read {what} ({err.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise BadRecord(f"{path}: {what} is not a regular file")
    if info.st_size > MAX_JSON_BYTES:
        raise BadRecord(f"{path}: {what} is {info.st_size / 2**20:.0f} MiB, over the {MAX_JSON_BYTES // 2**20} MiB a run holds")
    try:
        return json.loads(path.read_text())
    except OSError as err:
        raise BadRecord(f"{path}: cannot read {what} ({err.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError) as err:
        raise BadRecord(f"{path}: {what} is not valid JSON ({err})") from None


def _version(path: Path, payload: dict[str, Any]) -> int:
    found = payload.get("schema_version", 1)
    if not isinstance(found, int) or isinstance(found, bool):
        raise BadRecord(f"{path}: schema_version {found!r} is not an integer")
    return found


def _expect(condition: bool, path: Path, message: str) -> None:
    if not condition:
        raise BadRecord(f"{path}: {message}")


def _check_benchmark(path: Path, i: int, b: Any) -> None:
    where = f"benchmarks[{i}]"
    _expect(isinstance(b, dict), path, f"{where} is not an object")
    _expect(isinstance(b.get("name"), str) and b["name"] != "", path, f"{where} has no 'name'")
    stats = b.get("stats")
    _expect(isinstance(stats, dict), path, f"{where} ({b['name']}) has no 'stats'")
    for key in ("min", "median", "max"):
        value = stats.get(key)
        _expect(_is_time(value), path, f"{where} ({b['name']}) stats.{key} is {value!r}, not a time in seconds")
    data = stats.get("data")
    if data is not None:
        _expect(isinstance(data, list) and all(_is_time(v) for v in data), path,
                f"{where} ({b['name']}) stats.data holds something that is not a time in seconds")
    info = b.get("extra_info", {})
    _expect(isinstance(info, dict), path, f"{where} ({b['name']}) extra_info is not an object")
    if info.get("config_id") is not None:
        missing = [k for k in HEADER if k != "schema_version" and k not in info and k != "settings"]
        _expect(not missing, path, f"{where} ({b['name']}) lacks {', '.join(missing)} of the record header")


def _is_time(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _check_outcomes(path: Path, outcomes: Any) -> list[dict[str, Any]]:
    _expect(isinstance(outcomes, list), path, "outcomes are not a list")
    for i, o in enumerate(outcomes):
        _expect(isinstance(o, dict), path, f"outcome {i} is not an object")
        missing = [k for k in ("config_id", "outcome") if not isinstance(o.get(k), str)]
        _expect(not missing, path, f"outcome {i} lacks {', '.join(missing)}")
        _expect(o["outcome"] in OUTCOMES, path, f"outcome {i} is {o['outcome']!r}, not one of {', '.join(OUTCOMES)}")
    return outcomes


def load_run(path: Path | str) -> Run:
    """Load ``results/<run-id>/`` (or its benchmark.json), checked against the contract.

    A folder with no ``benchmark.json`` but an ``outcomes.json`` (the run died before pytest-benchmark wrote
    its JSON) loads as a partial run.

    Raises:
        BadRecord: a missing path, a malformed file, a run of another schema version; one line naming the file.
    """
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    bench_path = path / "benchmark.json" if path.is_dir() else path
    if not path.exists():
        raise BadRecord(f"{path}: no such file or folder (give a results/<run-id>/ folder or its benchmark.json)")
    partial = not bench_path.exists()
    if partial:
        if not (folder / "outcomes.json").exists():
            raise BadRecord(f"{folder}: no benchmark.json and no outcomes.json: not a recorded run")
        data: dict[str, Any] = {"benchmarks": [], "machine_info": {}}
    else:
        data = _read_json(bench_path, "benchmark.json")
        _expect(isinstance(data, dict) and isinstance(data.get("benchmarks"), list), bench_path,
                "not a pytest-benchmark JSON (no 'benchmarks' list)")
        for i, b in enumerate(data["benchmarks"]):
            _check_benchmark(bench_path, i, b)
    cowmor = data.get("cowmor")
    if cowmor is None:
        env_path, out_path = folder / "environment.json", folder / "outcomes.json"
        cowmor = {"environment": _read_json(env_path, "environment.json") if env_path.exists() else {},
                  "outcomes": _read_json(out_path, "outcomes.json") if out_path.exists() else []}
        data["cowmor"] = cowmor
        where = env_path
    else:
        where = bench_path
    _expect(isinstance(cowmor, dict), where, "the 'cowmor' block is not an object")
    env = cowmor.get("environment")
    env = {} if env is None else env
    _expect(isinstance(env, dict), where, "the environment is not an object")
    version = _version(where, env)
    if version != SCHEMA_VERSION:
        raise BadRecord(f"{folder}: recorded with results schema version {version}, this cowmor reads version "
                        f"{SCHEMA_VERSION}: re-run it with this version, or read it with the cowmor that recorded it")
    _check_outcomes(where, [] if cowmor.get("outcomes") is None else cowmor["outcomes"])
    if env.get("run_id") is not None:
        try:
            check_run_id(env["run_id"])
        except BadRecord as err:
            raise BadRecord(f"{where}: the recorded {err}") from None
    return Run(bench_path, data, partial=partial or bool(env.get("interrupted")))


def validate(path: Path | str) -> list[str]:
    """Everything about a recorded run folder that breaks the contract (empty when it holds); never raises."""
    try:
        run = load_run(path)
    except BadRecord as err:
        return [str(err)]
    problems = []
    if run.partial:
        problems.append(f"{path}: partial run ({run.why_partial})")
    for r in run.records(route=None):
        if r.info.get("schema_version") not in (None, SCHEMA_VERSION):
            problems.append(f"{r.name}: header schema_version {r.info.get('schema_version')!r}")
        missing = [k for k in HEADER if k not in r.info]
        if missing:
            problems.append(f"{r.name}: lacks {', '.join(missing)}")
        spec = SPECS.get((r.scenario, r.operation))
        if spec is None:
            problems.append(f"{r.name}: ({r.scenario}, {r.operation}) is not in the contract")
            continue
        body = {k: v for k, v in r.info.items() if k not in (*HEADER, *RECORD_EXTRAS)}
        problems += [f"{r.name}: {p}" for p in spec.problems(body)]
    for name in ("configs", "run_id", "scale", "seed"):
        if name not in run.environment:
            problems.append(f"{path}: environment lacks {name!r}")
    unknown = {r.config_id for r in run.records()} - set(run.environment.get("configs") or {})
    if unknown:
        problems.append(f"{path}: records of configurations the environment does not list: {', '.join(sorted(unknown))}")
    return problems


def iter_runs(folder: Path) -> Iterator[Path]:
    """Recorded run folders under ``folder`` (complete or partial), oldest first by their recorded creation time."""
    found = []
    for child in folder.iterdir() if folder.is_dir() else ():
        if child.is_dir() and any((child / f).is_file() for f in ("benchmark.json", "outcomes.json")):
            found.append(child)
    return iter(sorted(found, key=lambda p: max((p / f).stat().st_mtime for f in FILES if (p / f).exists())))
