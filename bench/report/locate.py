"""Finding the rows, aggregated: per record what the update read to find its rows, and per family and route how
copy-on-write compares with merge-on-read once the search is the same (the section only renders this)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.core import uncertainty
from bench.results.contract import BASELINE_ROUTE, DINNER_PEAK, FILE_SIZE, HOTFIX, SETTLEMENTS, Matrix, Origin, Record, Run
from bench.results.schema import (
    DinnerPeakSequence,
    FileChanges,
    FileSizeUpdate,
    HotfixUpdate,
    LiveFiles,
    Locate,
    SettlementsSequence,
)

RATIO_NOTE = ("median ratio with what its rounds support: [95% bootstrap] at 5 rounds a side or more, else the "
              "min–max range and no verdict; p: the exact rank test; interleaved: the sides took rounds in turn; "
              "not divided: the sides ran on other hosts or commits")
ROUTE_TEXT = {"join": "MERGE / IN (SELECT …) from a keys table", "pruned": "literal keys the file statistics prune by",
              "index": "keys looked up in the table's index"}


@dataclass(frozen=True)
class Located:
    """One update by one route: its time and what it read to find its rows."""

    scenario: str
    param: str | None
    config_id: str
    route: str
    seconds: list[float]
    files_read: int | None  # the largest scan's files (the search), None without Spark's metrics
    table_files: int
    files_touched: int | None  # None where the record does not know which files hold the changed rows
    bytes_read: int | None
    bytes_written: int
    full_scan: bool | None
    requests: dict | None = None  # the object-store requests of the last round, by kind (absent on local disk)
    layout: str | None = None  # the file-size steps' ``1 of 8 files`` touched: runs of two layouts share file sizes
    origin: Origin = Origin("", "", "")  # the run, host and commit that measured it
    interleaved_with: tuple[str, ...] = ()  # --interleave: the configurations whose rounds alternated with its own

    @property
    def step(self) -> str | None:
        return step_label(self.param, self.layout)

    @property
    def promised_pruning(self) -> bool:
        return self.route != BASELINE_ROUTE

    @property
    def flagged(self) -> bool:
        """A route that promises to prune, yet read every file of the table in one scan."""
        return self.promised_pruning and self.full_scan is True


@dataclass(frozen=True)
class Ratio:
    """Copy-on-write's median over merge-on-read's, with what both sets of rounds support (``uncertainty.RatioSpread``:
    a 95% bootstrap interval at 5 rounds a side or more, a range below) and the exact rank test's p."""

    scenario: str
    param: str | None
    route: str
    cow: str
    mor: str
    layout: str | None = None  # as ``Located.layout``
    crossed: tuple[str, str] | None = None  # the two runs, where the sides come from other hosts or commits
    spread: uncertainty.RatioSpread | None = None  # None where ``crossed``: never divided
    interleaved: bool = False  # the two sides' rounds alternated (``--interleave``): a drift reached both

    @property
    def step(self) -> str | None:
        return step_label(self.param, self.layout)

    @property
    def ratio(self) -> float:
        return self.spread.ratio if self.spread else float("nan")

    @property
    def low(self) -> float | None:
        return self.spread.low if self.spread else None

    @property
    def high(self) -> float | None:
        return self.spread.high if self.spread else None

    @property
    def divided(self) -> bool:
        return self.crossed is None

    @property
    def decided(self) -> bool:
        return self.spread is not None and self.divided and self.spread.decided

    def interval_text(self) -> str:
        if self.crossed:
            return "not divided"
        assert self.spread is not None
        return self.spread.interval_text()

    def cell(self) -> str:
        """The ratio with its interval and method, or why there is none."""
        if self.crossed:
            return f"not divided (runs {self.crossed[0]}, {self.crossed[1]})"
        return f"{self.ratio:.2f}x ({self.interval_text()}{', interleaved' if self.interleaved else ''})"

    @property
    def verdict(self) -> str:
        if self.crossed:
            return f"not divided: runs {self.crossed[0]} and {self.crossed[1]} ran on other hosts or commits"
        assert self.spread is not None  # every ratio not crossed is divided
        return self.spread.verdict("copy-on-write faster", "merge-on-read faster")


def located(run: Run, superseded: bool = False) -> list[Located]:
    """Every update's search and cost; with ``superseded``, also those a merge of runs replaced by newer ones (oldest
    first), so ``ratios`` can take a pair's two sides from one run."""
    def records(scenario: str, operation: str) -> list[Record]:
        return run.records(scenario, operation, route=None, superseded=superseded)
    out = [_located(r, r.view(HotfixUpdate)) for r in records(HOTFIX, "update")]
    out += [_located(r, r.view(FileSizeUpdate)) for r in records(FILE_SIZE, "update")]
    settlements = [(r, r.view(SettlementsSequence)) for r in records(SETTLEMENTS, "sequence")]
    out += [_adjustments(r, s) for r, s in settlements if s.writes]
    peaks = [(r, r.view(DinnerPeakSequence)) for r in records(DINNER_PEAK, "sequence")]
    out += [_upserts(r, p) for r, p in peaks if p.route]
    return out


def _upserts(r: Record, peak: DinnerPeakSequence) -> Located:
    """The dinner peak's upsert batches: their times are the samples, the last batch's search and bytes stand for them
    (the files its updated rows sit in are not recorded: an upsert's batch is rows, not keys of known files)."""
    last = peak.series[-1]
    files_read, bytes_read = _search(last.locate)
    return Located(r.scenario, "per upsert batch", r.config_id, r.route, [b.upsert_s or 0.0 for b in peak.series],
                   files_read, int((last.live_files or LiveFiles()).data_files or 0), None, bytes_read,
                   int(last.bytes_added or 0), None, origin=r.origin)


def _adjustments(r: Record, month: SettlementsSequence) -> Located:
    """The settlements' adjustments as one update each: their times are the samples (the same statement on batches
    of the same size), the last adjustment's search and bytes stand for them (its timed month also holds reads)."""
    last = month.writes[-1]
    files_read, bytes_read = _search(last.locate)
    return Located(r.scenario, "per adjustment", r.config_id, r.route, [w.seconds or 0.0 for w in month.writes], files_read,
                   int(month.table_data_files or 0), int(last.files_touched or 0), bytes_read,
                   int((last.filesystem or FileChanges()).bytes_added or 0), last.locate_full_scan, last.requests,
                   origin=r.origin)


def step_label(param: str | None, layout: str | None) -> str | None:
    """The file size (or batch) with the layout where one is recorded: what tells two points apart."""
    return f"{param} ({layout})" if layout else param


def _located(r: Record, update: HotfixUpdate | FileSizeUpdate) -> Located:
    sized = update if isinstance(update, FileSizeUpdate) else None
    files = update.table_data_files or (sized.files_total if sized else 0)
    files_read, bytes_read = _search(update.locate)
    plan = getattr(update, "rounds_plan", None)
    return Located(r.scenario, r.param, r.config_id, r.route, r.seconds, files_read, int(files or 0),
                   int(update.files_touched or 0), bytes_read, int(update.filesystem.bytes_added or 0),
                   update.locate_full_scan, update.requests, layout_touched(sized) if sized else None, r.origin,
                   tuple((plan.interleaved_with or ()) if plan else ()))


def layout_touched(update: FileSizeUpdate) -> str:
    """``1 of 8 files``: the file-size steps' layout (the files holding a changed row, of the table's)."""
    return f"{update.files_touched} of {update.files_total} files"


def _search(locate: Locate | None) -> tuple[int | None, int | None]:
    """What a statement read to find its rows: the largest scan's files (None without a SQL scan) and its bytes."""
    if locate is None:
        return None, None
    return (locate.largest_scan_files if locate.scans else None), locate.bytes_read


def ratios(items: list[Located], matrix: Matrix, resamples: int = uncertainty.RESAMPLES, seed: int = 0) -> list[Ratio]:
    """CoW ÷ MoR for every family pair measured on the same scenario, file size, layout and route; a pair whose sides
    were measured on other hosts or commits is kept, marked ``crossed`` and never divided (its ratio is NaN). Where
    ``items`` hold one key several times (oldest first), the pair is the newest whose sides one run measured."""
    by_key: dict[tuple, list[Located]] = {}
    for x in items:
        by_key.setdefault((x.scenario, x.param, x.layout, x.route, x.config_id), []).append(x)
    rng = np.random.default_rng(seed)
    out = []
    for (scenario, param, layout, route, config_id), cows in by_key.items():
        for cow_id, mor_id in matrix.cow_mor_pairs():
            mors = by_key.get((scenario, param, layout, route, mor_id))
            if cow_id != config_id or mors is None:
                continue
            cow, mor = _one_runs_pair(cows, mors)
            if cow.origin.key != mor.origin.key:
                out.append(Ratio(scenario, param, route, cow_id, mor_id, layout, (cow.origin.run_id, mor.origin.run_id)))
                continue
            out.append(Ratio(scenario, param, route, cow_id, mor_id, layout,
                             spread=uncertainty.ratio_spread(cow.seconds, mor.seconds, rng, resamples),
                             interleaved=mor_id in cow.interleaved_with and cow_id in mor.interleaved_with))
    return out


def _one_runs_pair(cows: list[Located], mors: list[Located]) -> tuple[Located, Located]:
    """The newest pair one run measured, else one host and commit, else the newest of each side (to be refused)."""
    for same in (lambda c, m: c.origin == m.origin, lambda c, m: c.origin.key == m.origin.key):
        pairs = [(i, j) for i, c in enumerate(cows) for j, m in enumerate(mors) if same(c, m)]
        if pairs:
            i, j = max(pairs)
            return cows[i], mors[j]
    return cows[-1], mors[-1]
