"""A cost model fitted from what was measured and checked on a measurement it did not see.

Each quantity (the update W, the compaction C, the read after the update R) is a non-negative linear function of
the quantities that drive it, per configuration: ``y = a + Σ b_i · x_i`` with every coefficient ≥ 0 (a cost never
falls as files grow). It is fitted on the medians of the measured points; its 95% interval comes from refitting
on bootstrap resamples of every point's rounds (of the fit's residuals where each point is one measurement).
Before it predicts anything it is checked: refitted without the
point that lies furthest out (the largest files), it predicts that point, and a prediction whose interval misses
the measurement is flagged.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from bench.core.uncertainty import RESAMPLES
from bench.exceptions import BadOption

# the seeds' headline: 1,200 rows over 4,800 files of about 1.25 MB (6 GB); copy-on-write 6 GB in 8 min, MoR 4 MB in 12 s
SEED_TABLE = {"files": 4800, "file_mb": 1.25, "rows_per_update": 1200, "partitions": 90}  # (the `seed` preset's 90 days)
SEED_FIGURES = {"copy-on-write": (480.0, "6 GB written in 8 minutes"), "merge-on-read": (12.0, "4 MB written in 12 seconds")}
MB = 2**20
ROUTES = ("join", "pruned", "index")  # the locate routes (bench.formats.base.ROUTES; the report never imports formats)


@dataclass(frozen=True)
class Point:
    """One measured point: the values of the drivers and the timings behind it (rounds or repeats)."""

    drivers: dict[str, float]
    samples: list[float]
    label: str


def nnls(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares with every coefficient ≥ 0, exactly, by trying every set of free coefficients (few drivers)."""
    return nnls_many(a, y[:, None])[0]


def nnls_many(a: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """``nnls`` of each column of ``ys`` at once (one least-squares solve per set of free coefficients, not per
    column: the bootstrap's thousand refits cost what one does); a row of coefficients per column."""
    columns = ys.shape[1]
    best, best_err = np.zeros((columns, a.shape[1])), np.sum(ys ** 2, axis=0)
    for k in range(1, a.shape[1] + 1):
        for free in itertools.combinations(range(a.shape[1]), k):
            coef, *_ = np.linalg.lstsq(a[:, free], ys, rcond=None)
            full = np.zeros((a.shape[1], columns))
            full[list(free)] = coef
            err = np.sum((a @ full - ys) ** 2, axis=0)
            better = np.all(coef >= 0, axis=0) & (err < best_err - 1e-12)
            best[better], best_err[better] = full[:, better].T, err[better]
    return best


@dataclass
class Fit:
    """``y = coef[0] + Σ coef[i] · driver_i``, from ``points``, with bootstrap refits in ``draws``."""

    drivers: list[str]
    points: list[Point]
    coef: np.ndarray
    draws: np.ndarray = field(repr=False)
    # relative errors of one new measurement around the model: the fit's residuals and each point's rounds around
    # their median, so an interval covers a new measurement's own spread, not only the coefficients' uncertainty
    noise: np.ndarray = field(default_factory=lambda: np.zeros(1), repr=False)

    def _x(self, values: dict[str, float]) -> np.ndarray:
        return np.array([1.0, *(values[d] for d in self.drivers)])

    def predict(self, values: dict[str, float]) -> tuple[float, float, float]:
        """The prediction at ``values`` and its 95% interval over the refits."""
        x = self._x(values)
        spread = self.draws @ x
        return float(self.coef @ x), float(np.percentile(spread, 2.5)), float(np.percentile(spread, 97.5))

    def predict_new(self, values: dict[str, float], seed: int = 0) -> tuple[float, float, float]:
        """The prediction at ``values`` with a 95% interval for one new measurement there (coefficients and noise)."""
        x = self._x(values)
        rng = np.random.default_rng(seed)
        spread = (self.draws @ x) * (1 + rng.choice(self.noise, len(self.draws)))
        return float(self.coef @ x), float(np.percentile(spread, 2.5)), float(np.percentile(spread, 97.5))

    def reach(self, values: dict[str, float]) -> float:
        """How far ``values`` lie beyond the measured points: the largest ratio of a driver to its largest measured value."""
        ratios = [values[d] / max(p.drivers[d] for p in self.points) for d in self.drivers
                  if max(p.drivers[d] for p in self.points) > 0]
        return max(ratios, default=1.0)

    def describe(self, units: dict[str, tuple[float, str]]) -> str:
        """``a + b·x`` in readable units (``units``: driver -> (divisor, unit))."""
        parts = [f"{self.coef[0]:.3g} s"]
        for d, c in zip(self.drivers, self.coef[1:]):
            scale, unit = units.get(d, (1.0, d))
            if c > 0:
                parts.append(f"{c * scale:.3g} s per {unit}")
        return " + ".join(parts)


def fit(points: list[Point], drivers: list[str], resamples: int = RESAMPLES, seed: int = 0) -> Fit | None:
    """The non-negative fit of the points' medians; None with fewer points than coefficients."""
    if len(points) < len(drivers) + 1:
        return None
    points = sorted(points, key=_order)  # the resamples are drawn in order: the same points in any order, the same interval
    a = np.array([[1.0, *(p.drivers[d] for d in drivers)] for p in points])
    norm = np.maximum(np.abs(a).max(axis=0), 1e-12)  # columns on one scale: lstsq stays well conditioned
    medians = np.array([float(np.median(p.samples)) for p in points])
    coef = nnls(a / norm, medians) / norm
    rng = np.random.default_rng(seed)
    if min(len(p.samples) for p in points) > 1:  # every point has rounds of its own: resample them
        ys = np.array([[float(np.median(rng.choice(p.samples, len(p.samples)))) for p in points] for _ in range(resamples)])
    else:  # some point is one measurement (one compaction a step, one warm read): resample the residuals
        fitted, residuals = a @ coef, medians - a @ coef
        ys = np.array([fitted + rng.choice(residuals, len(residuals)) for _ in range(resamples)])
    draws = nnls_many(a / norm, ys.T) / norm
    return Fit(drivers, points, coef, draws, _noise(points, a @ coef, medians))


def _order(point: Point) -> tuple:
    return point.label, sorted(point.drivers.items()), point.samples


def _noise(points: list[Point], fitted: np.ndarray, medians: np.ndarray) -> np.ndarray:
    """Relative errors a new measurement may carry: the fit's residuals and the rounds' spread around each median."""
    residuals = [(m - f) / f for m, f in zip(medians, fitted) if f > 0]
    rounds = [(s - m) / m for p, m in zip(points, medians) if m > 0 for s in p.samples]
    both = np.array(residuals + rounds, dtype=float)
    return np.clip(both, -0.95, None) if both.size else np.zeros(1)


@dataclass(frozen=True)
class HeldOut:
    label: str
    predicted: float
    low: float
    high: float
    measured: float
    measured_low: float
    measured_high: float
    reach: float = 1.0  # how far beyond the points it was fitted on (largest driver ratio): 4x is the bar

    @property
    def inside(self) -> bool:
        """The measurement (its median, or its own range) meets the prediction's interval."""
        return self.measured_high >= self.low and self.measured_low <= self.high


def held_out(points: list[Point], drivers: list[str], key: str, resamples: int = RESAMPLES) -> HeldOut | None:
    """Refit without the point with the largest ``key`` driver and predict it."""
    if len(points) < len(drivers) + 2:
        return None
    out = max(points, key=lambda p: p.drivers[key])
    rest = [p for p in points if p is not out]
    model = fit(rest, drivers, resamples)
    if model is None:
        return None
    predicted, low, high = model.predict_new(out.drivers)
    return HeldOut(out.label, predicted, low, high, float(np.median(out.samples)), min(out.samples), max(out.samples),
                   model.reach(out.drivers))


def files_touched(files: float, rows: float) -> float:
    """Expected distinct files ``rows`` uniformly scattered rows fall in, among ``files`` equal files."""
    if files <= 0:
        return 0.0
    return files * (1 - (1 - 1 / files) ** rows) if files > 1 else 1.0


def locate_bytes(route: str, table_bytes: float, bytes_in_touched_files: float) -> float:
    """The bytes an update's search must go through: the whole table for a join (no format prunes it), the touched
    files where literal keys or an index find them (shared/DESIGN.md, "Finding the rows")."""
    return table_bytes if route == "join" else bytes_in_touched_files


def table_drivers(files: float, file_mb: float, rows: float, route: str = "join",
                  partitions: float | None = None) -> dict[str, float]:
    """The drivers of a table of ``files`` files of ``file_mb`` MB in ``partitions`` partitions (by default one per
    file: the most partitions an update can touch), updated on ``rows`` scattered rows by ``route``."""
    touched = files_touched(files, rows)
    touched_bytes, table_bytes = touched * file_mb * MB, files * file_mb * MB
    parts = files if partitions is None else min(partitions, files)
    return {"files_touched": touched, "partitions_touched": min(touched, files_touched(parts, rows)),
            "bytes_in_touched_files": touched_bytes, "table_bytes": table_bytes,
            "locate_bytes": locate_bytes(route, table_bytes, touched_bytes)}


@dataclass(frozen=True)
class UserTable:
    """``--table "name:files=4800,file_mb=128,rows_per_update=1200,updates_per_day=3,reads_per_day=30000,writes_per_compaction=10,partitions=90"``."""

    name: str
    files: float
    file_mb: float
    rows_per_update: float
    updates_per_day: float
    reads_per_day: float
    writes_per_compaction: float
    route: str = "join"  # how the user's updates find their rows: join, pruned or index
    partitions: float | None = None  # not given: one per file, the most an update can touch

    @property
    def drivers(self) -> dict[str, float]:
        return table_drivers(self.files, self.file_mb, self.rows_per_update, self.route, self.partitions)


TABLE_KEYS = ("files", "file_mb", "rows_per_update", "updates_per_day", "reads_per_day", "writes_per_compaction",
              "partitions")


def key_numbers(option: str, text: str, spec: str, keys: tuple[str, ...] | list[str]) -> dict[str, float]:
    """``key=number,…`` with known keys and finite numbers ≥ 0.

    Raises:
        BadOption: one line naming the option, the value and what is wrong.
    """
    values: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, eq, value = (s.strip() for s in part.partition("="))
        if not eq or key.lower() not in keys:
            raise BadOption(f"{option} {text!r}: unknown {key!r}; keys: {', '.join(keys)}")
        try:
            number = float(value)
        except ValueError:
            raise BadOption(f"{option} {text!r}: {value!r} is not a number") from None
        if not math.isfinite(number) or number < 0:
            raise BadOption(f"{option} {text!r}: {key} must be a finite number ≥ 0, got {value}")
        values[key.lower()] = number
    return values


def table_from_profile(path: str) -> UserTable:
    """A table as ``cowmor inspect`` profiled it from its own metadata (``-o profile.json``).

    Raises:
        BadOption: not a profile, or one that lacks what the prediction needs (reads per day, a file, an update).
    """
    import json
    from pathlib import Path

    try:
        p = json.loads(Path(path).read_text())
        files, median = p["data_files"], (p.get("file_bytes") or {}).get("median")
        load = p.get("workload") or {}
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise BadOption(f"--table {path}: not a profile written by `cowmor inspect -o` ({err})") from None
    rows = p.get("keys_per_update") or load.get("rows_changed_per_update")
    lacking = [what for what, value in (("data files", files), ("file sizes", median), ("rows per update", rows),
                                        ("reads per day (inspect --reads-per-day)", p.get("reads_per_day"))) if not value]
    if lacking:
        raise BadOption(f"--table {path}: the profile lacks {', '.join(lacking)}")
    assert median is not None and rows is not None  # checked just above
    return UserTable(Path(path).stem, float(files), median / 2**20, float(rows), float(load.get("updates_per_day") or 1.0),
                     float(p["reads_per_day"]), float(load.get("writes_per_compaction") or 10.0),
                     partitions=float(p["partitions"]) if p.get("partitions") else None)


def parse_table(text: str) -> UserTable:
    """``NAME:key=value,…`` or a profile file (``*.json``, from ``cowmor inspect -o``). Raises: BadOption naming what is wrong."""
    if text.endswith(".json"):
        return table_from_profile(text)
    name, sep, spec = text.partition(":")
    if not sep or not name.strip():
        raise BadOption(f"--table {text!r}: expected NAME:files=N,file_mb=M,rows_per_update=R[,updates_per_day=U,"
                        f"reads_per_day=D,writes_per_compaction=K,partitions=P,route=join|pruned|index]")
    route = "join"
    kept = []
    for part in spec.split(","):
        key, _, value = (s.strip() for s in part.partition("="))
        if key.lower() == "route":
            if value not in ROUTES:
                raise BadOption(f"--table {text!r}: route {value!r}; routes: {', '.join(ROUTES)}")
            route = value
        else:
            kept.append(part)
    spec = ",".join(kept)
    values = {"updates_per_day": 1.0, "reads_per_day": 0.0, "writes_per_compaction": 10.0,
              **key_numbers("--table", text, spec, TABLE_KEYS)}
    missing = [k for k in ("files", "file_mb", "rows_per_update") if k not in values]
    if missing:
        raise BadOption(f"--table {text!r}: missing {', '.join(missing)}")
    if values["files"] < 1 or values["file_mb"] <= 0 or values["writes_per_compaction"] <= 0:
        raise BadOption(f"--table {text!r}: files ≥ 1, file_mb > 0 and writes_per_compaction > 0 are needed")
    if "partitions" in values and not 1 <= values["partitions"] <= values["files"]:
        raise BadOption(f"--table {text!r}: partitions must be between 1 and files ({values['files']:g}): every "
                        "partition holds at least one file")
    return UserTable(name.strip(), **{k: values[k] for k in TABLE_KEYS if k != "partitions"}, route=route,
                     partitions=values.get("partitions"))
