"""The figures the project states, drawn from its reference runs: each a Markdown table named in the manifest's
``backs``, written into README.md and docs/ between markers by ``cowmor docs`` (which ``--check`` compares instead).

A marker pair ``<!-- figure:NAME -->`` … ``<!-- /figure:NAME -->`` holds the generated table; everything between is
rewritten. Each table names its runs by run id and machine; runs of different machines get tables of their own.
"""

from __future__ import annotations

import functools
import math
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bench.core import uncertainty
from bench.core.units import human_bytes
from bench.report import cadence, values, workloads
from bench.report import locate as locate_mod
from bench.report.fitted import drivers_of, mean_read, models
from bench.report.sections import replica, writers
from bench.report.sections.memory import COLUMNS, figures_table, needed_table
from bench.results import load
from bench.results.contract import FILE_SIZE, HOTFIX, LOCAL_DISK, MEMORY_NEEDED, Run
from bench.results.reference import REFERENCE_DIR, Entry, backing, stamp
from bench.results.schema import TOTAL_REQUESTS, FileSizeUpdate, HotfixUpdate, Replica

MARKER = re.compile(r"(<!-- figure:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /figure:(?P=name) -->)", re.DOTALL)
ROUTES = ("join", "pruned", "index")
MAX_LISTED_RUNS = 6
# a figure block in Markdown explains, a grid is for the CSV beside it: at most this many table rows, bytes and
# characters a line; a figure's tables past them go to docs/figures/NAME.csv (and the findings page) whole
MAX_ROWS, MAX_BYTES, MAX_LINE = 25, 8 * 1024, 400
GRIDS_DIR = "docs/figures"
SEED_SCALE = "seed"


def _markdown(frame: pd.DataFrame) -> str:
    head = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *rows])


def _source(entries: list[Entry], where: bool = True) -> str:
    """The runs a table comes from, by id (their commands are in the manifest: a command names the recording machine's
    paths), with the machine and storage they share (``where``); many runs are counted, not listed."""
    first = entries[0]
    on = f" on {first.machine_label}, {first.storage}" if where else ""
    if len(entries) > MAX_LISTED_RUNS:
        return f"{len(entries)} runs{on} (`results/reference/manifest.json` lists each with its command)"
    runs = ", ".join(f"`{e.run_id}`" for e in entries)
    return f"run{'s' if len(entries) > 1 else ''} {runs}{on} (commands in `results/reference/manifest.json`)"


def layout(run: Run) -> str:
    """The payments table a run measured (``90 days x 4 files x 5,000 rows, 120 changed``): runs of one scale on
    other layouts (``--param``) are other answers, never merged with it."""
    scale = run.env.scale
    if scale is None or scale.days is None or scale.files_per_day is None or scale.rows_per_file is None:
        return "layout not recorded"
    return (f"{scale.days} days x {scale.files_per_day} files x {scale.rows_per_file:,} rows, "
            f"{scale.hotfix_rows or 0:,} changed")


def group_of(entry: Entry, run: Run) -> tuple[str, str, str]:
    """What runs must share to be merged into one ratio, fit or table: the machine, the storage and the table layout."""
    return entry.machine_label, entry.storage, layout(run)


def _by_machine(figure: str, folder: Path) -> list[tuple[list[Entry], Run]]:
    """The runs backing ``figure``, merged per machine, storage and table layout (never across any), the seeds' size
    first."""
    groups: dict[tuple[str, str, str], list[tuple[Entry, Run]]] = {}
    for entry, run in backing(figure, folder):
        groups.setdefault(group_of(entry, run), []).append((entry, run))
    merged = [([e for e, _ in group], load.merge([r for _, r in group])) for group in groups.values()]
    # the seeds' own size first (the question's table), then the nearest to it: the largest payments table
    return sorted(merged, key=lambda g: (g[1].scale != SEED_SCALE, -_rows(g[1])))


def route_order(route: str) -> int:
    return ROUTES.index(route) if route in ROUTES else len(ROUTES)


def scenario_ratios(run: Run, scenario: str) -> list[locate_mod.Ratio]:
    """Copy-on-write ÷ merge-on-read (and ÷ deletion vectors) of one scenario's updates, per pair, step and route."""
    return locate_mod.ratios([x for x in locate_mod.located(run, superseded=True) if x.scenario == scenario], run.matrix)


def ratio_points(ratios: list[locate_mod.Ratio], **extra: str) -> list[dict]:
    """Ratios as chart rows: ``pair``, ``route``, ``ratio`` and its interval ``low``/``high``, plus ``extra``."""
    return [{"pair": f"{r.cow} ÷ {r.mor}", "route": r.route, **extra, "ratio": r.ratio, "low": r.low, "high": r.high}
            for r in ratios]


def routes_table(ratios: list[locate_mod.Ratio]) -> pd.DataFrame:
    """Ratios as a table, by pair and route: the ratio with its interval and method, the verdict."""
    return pd.DataFrame([{"pair": f"{r.cow} ÷ {r.mor}", "route": r.route, "update time ratio (interval)": r.cell(),
                          "verdict": r.verdict}
                         for r in sorted(ratios, key=lambda r: (r.cow, r.mor, route_order(r.route)))])


def hotfix_routes(run: Run) -> pd.DataFrame:
    """Copy-on-write ÷ merge-on-read (and ÷ deletion vectors) per family and route, with the 95% interval."""
    return routes_table(scenario_ratios(run, HOTFIX))


def _cell(r: locate_mod.Ratio) -> str:
    """A ratio with its interval and method; marked where its verdict is not merge-on-read's (the headline's usual
    answer)."""
    text, verdict = r.cell(), r.verdict
    marked = ("copy-on-write faster", "too close to call at this scale")  # a cell without a verdict says so already
    return f"{text} ({verdict.replace(' at this scale', '')})" if verdict in marked else text


def hotfix_layouts(layouts: list[tuple[str, Run]]) -> pd.DataFrame:
    """``hotfix_routes`` of one machine's tables side by side: a row per pair and route, a column per table measured
    (the seeds' first), so the answer's dependence on the table's shape reads across one row."""
    rows: dict[tuple[str, str, str], dict[str, str]] = {}
    for label, run in layouts:
        for r in scenario_ratios(run, HOTFIX):
            rows.setdefault((r.cow, r.mor, r.route), {})[label] = _cell(r)
    order = sorted(rows, key=lambda k: (k[0], k[1], route_order(k[2])))
    return pd.DataFrame([{"pair": f"{cow} ÷ {mor}", "route": route,
                          **{label: rows[(cow, mor, route)].get(label, "–") for label, _ in layouts}}
                         for cow, mor, route in order])


def updates_by_storage(storages: list[tuple[str, Run]]) -> pd.DataFrame:
    """Each configuration's hotfix update per route, a column pair per storage: the median with what its rounds support, and
    the requests of its last round by kind (a local disk counts none)."""
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for label, run in storages:
        for r in run.records(HOTFIX, "update", route=None):
            spread, requests = r.spread, r.view(HotfixUpdate).requests
            cell = rows.setdefault((r.config_id, r.route), {})
            cell[f"{label}: update s, median (interval)"] = uncertainty.median_text(spread.median or 0.0, spread.ci95, spread.n)
            cell[f"{label}: requests"] = _requests(requests)
    columns = [f"{label}: {what}" for label, _ in storages for what in ("update s, median (interval)", "requests")]
    return pd.DataFrame([{"configuration": config, "route": route, **{c: cells.get(c, "–") for c in columns}}
                         for (config, route), cells in sorted(rows.items(), key=lambda k: (k[0][0], route_order(k[0][1])))])


def _requests(requests: dict[str, int] | None) -> str:
    """``1,234 (PUT 40, GET 900, LIST 294)``: the kinds that made any."""
    if not requests:
        return "–"
    kinds = [f"{kind} {int(requests[kind]):,}" for kind in load.REQUEST_KINDS if kind != TOTAL_REQUESTS and requests.get(kind)]
    return f"{int(requests.get(TOTAL_REQUESTS, 0)):,}" + (f" ({', '.join(kinds)})" if kinds else "")


def file_size_ratio_points(run: Run) -> pd.DataFrame:
    """Copy-on-write ÷ merge-on-read at each file-size step, per route and layout, as numbers: ``pair``, ``route``,
    ``layout`` (``2 of 4 files`` touched), ``file_mb``, ``ratio`` and its 95% interval ``low``/``high``."""
    updates = [(r, r.view(FileSizeUpdate)) for r in run.records(FILE_SIZE, "update", route=None)]
    steps: dict[tuple[str | None, str | None, str, str], FileSizeUpdate] = {
        (r.param, locate_mod.layout_touched(u), r.config_id, r.route): u for r, u in updates}
    rows = []
    for r in scenario_ratios(run, FILE_SIZE):
        step = steps[(r.param, r.layout, r.cow, r.route)]
        rows.append({"pair": f"{r.cow} ÷ {r.mor}", "route": r.route, "layout": r.layout,
                     "rows_per_file": step.rows_per_file, "file_mb": step.file_bytes_mean / 2**20,
                     "ratio": r.ratio, "low": r.low, "high": r.high, "cell": _cell(r)})
    return pd.DataFrame(rows)


def file_size_ratios(run: Run) -> pd.DataFrame:
    return size_table(file_size_ratio_points(run))


def size_table(points: pd.DataFrame) -> pd.DataFrame:
    """``file_size_ratio_points`` as a table: a row per pair, route and layout, a column per file size."""
    if points.empty:
        return points
    # a step is its rows per file; each family's files of those rows differ a little in bytes (Hudi's meta columns)
    mb = points.groupby("rows_per_file").file_mb.median()
    points["size"] = points.rows_per_file.map(lambda rows: f"{rows:,} rows (~{mb[rows]:.2g} MB)")
    sizes = [f"{rows:,} rows (~{mb[rows]:.2g} MB)" for rows in sorted(mb.index)]
    wide = points.pivot_table(index=["pair", "route", "layout"], columns="size", values="cell", aggfunc="first")
    wide = wide.reindex(columns=sizes).fillna("–").reset_index()
    wide["order"] = wide.route.map(route_order)
    wide.columns.name = None
    return wide.sort_values(["pair", "layout", "order"]).drop(columns="order")


def model_against_unseen(fitted_on: Run, measured: Run) -> pd.DataFrame:
    """The cost model fitted on ``fitted_on`` (one machine's runs on smaller tables) predicting each hotfix update of
    ``measured`` (a table the fit never saw): the 95% interval for one new measurement beside the measured median and
    range, how far the table lies beyond the fitted points, and whether the two meet."""
    rows, by_route = [], {}
    for r in sorted(measured.records(HOTFIX, "update", route=None), key=lambda r: (r.config_id, r.route)):
        if r.route not in by_route:
            by_route[r.route] = models(fitted_on, r.route)
        fitted, drivers = by_route[r.route].get(r.config_id), drivers_of(r)
        if fitted is None or fitted.write is None or drivers is None:
            continue
        predicted, low, high = fitted.write.predict_new(drivers)
        seconds = sorted(r.seconds)
        rows.append({"configuration": r.config_id, "route": r.route,
                     "predicted update s [95%]": f"{predicted:,.1f} [{low:,.1f}, {high:,.1f}]",
                     "measured s, median [min, max]": f"{r.spread.median:,.1f} [{seconds[0]:,.1f}, {seconds[-1]:,.1f}]",
                     "beyond the fitted points": f"{fitted.write.reach(drivers):,.0f}x",
                     "check": "met" if low <= seconds[-1] and high >= seconds[0]
                     else "MISSED: the interval does not meet the measurement"})
    return pd.DataFrame(rows)


def hotfix_memory(run: Run) -> pd.DataFrame:
    frame = load.memory(run)
    frame = frame[(frame.scenario == HOTFIX) & (frame.operation == "update")]
    shown = ("executor_heap_peak_bytes", "jvm_rss_peak_bytes", "python_rss_peak_bytes")
    return figures_table(frame, ["config_id", "route"], {k: v for k, v in COLUMNS.items() if k in shown})


def memory_needed(run: Run) -> pd.DataFrame:
    return needed_table(run.records(MEMORY_NEEDED, route=None))


# what the seeds say of their own table (4,800 files of ~1.25 MB, 1,200 scattered rows): per kind of configuration,
# the claim in their words and the seconds it names
SEED_CLAIMS = {False: ("rewrites ~6 GB in ~8 minutes", 8 * 60.0, 6e9), True: ("writes ~4 MB in ~12 seconds", 12.0, 4e6)}
# a claim of magnitude ("~6 GB in ~8 minutes") holds where both its figures are within this factor of the measured
MAGNITUDE = 2.0


def _seed_updates(run: Run, superseded: bool = False) -> list:
    """The hotfix updates of a run on the seeds' own table, by configuration and route (none at another scale); with
    ``superseded``, also those a merge replaced by newer ones (each with the partner its run measured)."""
    return sorted(run.records(HOTFIX, "update", route=None, superseded=superseded) if run.scale == SEED_SCALE else [],
                  key=lambda r: (r.config_id, r.route, r.origin.run_id))


def seed_claim_points(run: Run) -> pd.DataFrame:
    """Each hotfix update measured at the seeds' own size beside the seeds' claim for its kind, as numbers: the
    median and its 95% interval, the claim's seconds, what it wrote (every kind of file), the data files it replaced."""
    rows = []
    for r in _seed_updates(run):
        update, spread = r.view(HotfixUpdate), r.spread
        merges = run.matrix.merges_on_read(r.config_id)
        claim, claimed_s, claimed_bytes = SEED_CLAIMS[merges]
        low, high = spread.ci95 or (None, None)
        rows.append({"label": f"{r.config_id}\n({r.route})", "config_id": r.config_id, "route": r.route, "merges": merges,
                     "claim": claim, "claimed": claimed_s, "claimed_bytes": claimed_bytes, "median": spread.median, "low": low, "high": high, "n": spread.n,
                     "written": update.filesystem.bytes_added, "files_written": update.filesystem.files_added,
                     "replaced": update.metadata.data_files_removed,
                     "rows": f"{update.rows_changed_verified:,} of {update.rows_targeted:,}"})
    return pd.DataFrame(rows)


def seed_claims(run: Run) -> pd.DataFrame:
    """``seed_claim_points`` as the page's table: the time with its interval and as a multiple of the claim's."""
    return pd.DataFrame([{
        "configuration": p.config_id, "route": p.route, "the seeds' claim": p.claim,
        "measured update s, median (interval)": "–" if pd.isna(p.median) else uncertainty.median_text(
            p.median, (p.low, p.high) if pd.notna(p.low) else None, int(p.n) if pd.notna(p.n) else None, digits=1),
        "÷ the claim's time": "–" if pd.isna(p.median) else f"{p.median / p.claimed:.2f}x",
        "written": human_bytes(p.written), "÷ the claim's bytes": f"{p.written / p.claimed_bytes:.2f}x" if p.written else "–",
        "verdict": magnitude_verdict(p.median / p.claimed, (p.written or 0) / p.claimed_bytes) if pd.notna(p.median) else "–",
        "files written": p.files_written, "data files replaced": p.replaced,
        "rows changed (checked)": p.rows} for p in seed_claim_points(run).itertuples()])


SEED_READ_CLAIM_S = 0.080  # "reads +80 ms for the next 24 hours": merge-on-read's toll on each read until compaction


def seed_read_claim_points(run: Run) -> pd.DataFrame:
    """Each hotfix update at the seeds' size, its dashboards read before and after it: the toll per read (the mean over
    the dashboards' queries, after minus before) as the median of the warm repeats and their range (each side's
    repeats against the other's extremes), beside the seeds' +80 ms for merge-on-read; copy-on-write's as the control,
    one row per run that measured it (a control is its own run's)."""
    rows = []
    for r in _seed_updates(run, superseded=True):
        update = r.view(HotfixUpdate)
        before, after = mean_read(update.reads_before), mean_read(update.reads_after)
        if not before or not after:
            continue
        rows.append({"config_id": r.config_id, "route": r.route, "run": r.origin.run_id,
                     "merges": run.matrix.merges_on_read(r.config_id),
                     "toll": float(np.median(after) - np.median(before)), "low": min(after) - max(before),
                     "high": max(after) - min(before), "repeats": min(len(before), len(after)),
                     "before": float(np.median(before)), "after": float(np.median(after))})
    return pd.DataFrame(rows)


def seed_read_claims(run: Run) -> pd.DataFrame:
    """``seed_read_claim_points`` as the page's table, each merge-on-read toll decided on its magnitude beside its
    family's copy-on-write toll, the control: copy-on-write's reads do not merge, so whatever its toll moved by is
    the noise (an ordering effect: caches, the JIT, a collection), and a claim smaller than that cannot be decided."""
    points = seed_read_claim_points(run)
    if points.empty:
        return points
    control = {(mor, p.route, p.run): (p.low, p.high) for cow, mor in run.matrix.cow_mor_pairs(set(points.config_id))
               for p in points[points.config_id == cow].itertuples()}
    return pd.DataFrame([{
        "configuration": p.config_id, "route": p.route, "run": p.run,
        "the seeds' claim": "reads +80 ms" if p.merges else "– (copy-on-write: the control)",
        "a read before s": f"{p.before:.2f}", "after s": f"{p.after:.2f}",
        "toll per read, median (range)": f"{p.toll * 1000:+,.0f} ms ({p.low * 1000:+,.0f} to {p.high * 1000:+,.0f}, "
                                         f"{p.repeats} repeats a side)",
        "verdict": toll_verdict((p.low, p.high), control.get((p.config_id, p.route, p.run))) if p.merges else "–"}
        for p in points.itertuples()])


def toll_verdict(measured: tuple[float, float], control: tuple[float, float] | None,
                 claimed_s: float = SEED_READ_CLAIM_S) -> str:
    """A read toll's claim decided on its magnitude against a measured range (seconds): *too close to call* where the
    control (copy-on-write's toll, which should be nil) moved by more than the claim or was not measured, unless the
    range less that noise still lies beyond ``MAGNITUDE`` times the claim; else *holds* where the whole range lies
    within ``MAGNITUDE`` of the claim, *does not hold* where none of it does."""
    low, high = sorted(measured)
    if control is None:
        return "too close to call (no copy-on-write control measured beside it)"
    noise = max(abs(v) for v in control)
    if noise > claimed_s and low - noise > claimed_s * MAGNITUDE:
        return (f"does not hold (at least {(low - noise) * 1000:+,.0f} ms beyond the control's {noise * 1000:,.0f} ms "
                f"of noise, over {MAGNITUDE:g}x the claim's)")
    if noise > claimed_s:
        return f"too close to call (the control's reads moved by up to {noise * 1000:,.0f} ms)"
    if claimed_s / MAGNITUDE <= low and high <= claimed_s * MAGNITUDE:
        return f"holds (the whole range within {MAGNITUDE:g}x of {claimed_s * 1000:+.0f} ms)"
    if high < claimed_s / MAGNITUDE:
        return f"does not hold (at most {high * 1000:+,.0f} ms, under 1/{MAGNITUDE:g} of the claim's)"
    if low > claimed_s * MAGNITUDE:
        return f"does not hold (at least {low * 1000:+,.0f} ms, over {MAGNITUDE:g}x the claim's)"
    return f"too close to call (the range reaches within and beyond {MAGNITUDE:g}x of {claimed_s * 1000:+.0f} ms)"


def magnitude_verdict(*ratios: float) -> str:
    """A claim of magnitude decided on its magnitude: *holds* where every measured figure is within ``MAGNITUDE`` of
    the claim's, else *does not hold*, naming how far the furthest is."""
    furthest = max(ratios, key=lambda r: abs(math.log(r)) if r > 0 else math.inf)
    if all(r > 0 and 1 / MAGNITUDE <= r <= MAGNITUDE for r in ratios):
        return f"holds (each figure within {MAGNITUDE:g}x of the claim's)"
    return f"does not hold ({furthest:.2g}x the claim's figure, beyond {MAGNITUDE:g}x)"


def cadence_checked(run: Run) -> pd.DataFrame:
    return cadence.checked_table(cadence.checks(run))


def _in_overlap_order(frame: pd.DataFrame, before: list[str], after: list[str]) -> pd.DataFrame:
    """The races sorted by ``before``, then by overlap (the least contention first: ``writers.overlap_rank``), then
    by ``after``."""
    return frame.assign(order=frame.overlap.map(writers.overlap_rank)).sort_values([*before, "order", "overlap", *after])


WRITERS_GRID_COLUMNS = {
    "configuration": "configuration", "control": "control", "set-up": "set-up", "writers clean": "writers clean",
    "writers": "writers", "overlap": "overlap", "races": "races", "committed": "batches committed", "batches": "of", "conflicts": "failed attempts",
    "failed attempts by kind": "failed attempts by kind", "retries": "retries",
    "lock wait per commit, median / max (s)": "lock wait per commit, median / max (s)",
    "rows/s per race, median (interval)": "committed rows/s, median (interval)", "invariants": "invariants",
    "engines checked": "checked on"}


def writers_grid(run: Run) -> pd.DataFrame:
    """Every point of the several writers' grid: what committed, what failed and why, what the lock cost, the
    throughput over the races, and whether every invariant held on the engines that read the table."""
    frame = writers.races(run)
    missing = writers.unrecorded(run)  # a point whose test failed before it recorded a race: named with its reason
    if not missing.empty:
        missing = missing.reindex(columns=WRITERS_GRID_COLUMNS, fill_value="–").assign(
            races=missing.races, writers=missing.writers, invariants=missing.invariants)
        frame = pd.concat([frame, missing], ignore_index=True) if not frame.empty else missing
    if frame.empty:
        return frame
    frame = _in_overlap_order(frame.fillna({"set-up": "–"}), ["configuration", "control", "set-up"], ["writers"])
    return frame[list(WRITERS_GRID_COLUMNS)].rename(columns=WRITERS_GRID_COLUMNS)


WRITERS_CONTROL_COLUMNS = {
    "configuration": "configuration", "control": "control", "writers": "writers", "overlap": "overlap",
    "set-up": "set-up", "writers clean": "writers clean", "races": "races", "committed": "batches committed", "batches": "of",
    "failed attempts by kind": "failed attempts by kind", "acknowledged, changed no row": "acknowledged, changed no row",
    "invariants": "invariants"}


def writers_controls(run: Run) -> pd.DataFrame:
    """Each grid point raced under more than one set-up, its set-ups one under another: a control changes one factor
    of the set-up, so what changes with it is that factor's doing."""
    frame = writers.races(run)
    point = ["configuration", "control", "writers", "overlap"]
    if not frame.empty:
        frame = frame[frame.groupby(point)["set-up"].transform("nunique") > 1]
    if frame.empty:
        return pd.DataFrame([{"controls": "no grid point was raced under more than one set-up"}])
    frame = _in_overlap_order(frame, ["configuration", "control"], ["writers", "set-up"])
    return frame[list(WRITERS_CONTROL_COLUMNS)].rename(columns=WRITERS_CONTROL_COLUMNS)


def writers_violations(run: Run) -> pd.DataFrame:
    """Every invariant a race broke, with its evidence as the check recorded it (no race broke one: no row)."""
    frame = writers.violations(run)
    if frame.empty:
        return pd.DataFrame([{"invariants": "every invariant held in every race"}])
    return frame.drop(columns=["writers as"])


def writers_claims(run: Run) -> pd.DataFrame:
    """The seeds' four concurrency claims, each decided on the failure kinds that bear on it, the evidence beside it."""
    return pd.DataFrame(writers.claims(run))[["claim", "verdict", "measured"]]


def writers_totals(frame: pd.DataFrame) -> pd.DataFrame:
    """A writers' grid summed per configuration, control and set-up: its points, races, batches committed of those
    run, failed attempts, and the points where an invariant broke (the grid's rows are in its CSV)."""
    number = lambda column: pd.to_numeric(frame[column], errors="coerce").fillna(0).astype(int)  # noqa: E731
    summed = frame.assign(races=number("races"), committed=number("batches committed"), of=number("of"),
                          broken=frame["invariants"].ne("hold").astype(int),
                          failed=number("failed attempts") if "failed attempts" in frame else 0)
    rows = []
    for (config, control, setup), group in summed.groupby(["configuration", "control", "set-up"], sort=False):
        rows.append({"configuration": config, "control": control, "set-up": setup, "grid points": len(group),
                     "races": int(group.races.sum()),
                     "batches committed": f"{int(group.committed.sum()):,} of {int(group.of.sum()):,}",
                     **({"failed attempts": f"{int(group.failed.sum()):,}"} if "failed attempts" in frame else {}),
                     "points with an invariant broken": int(group.broken.sum())})
    return pd.DataFrame(rows)


INVARIANT = re.compile(r"race \d+: (?:\w+: )?(?P<name>[a-z_]+):")


def violations_by_invariant(frame: pd.DataFrame) -> pd.DataFrame:
    """The invariants races broke, counted per configuration, control, set-up and invariant (the evidence of each is
    in the CSV)."""
    if "evidence" not in frame:
        return frame
    named = frame.assign(invariant=frame.evidence.map(lambda e: (m.group("name") if (m := INVARIANT.match(e)) else "other")))
    counted = named.groupby(["configuration", "control", "set-up", "invariant"], sort=False)
    return counted.size().rename("violations").reset_index().assign(
        **{"grid points": counted.apply(lambda g: len(g[["writers", "overlap"]].drop_duplicates())).values})


def claims_verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """Each claim with its verdict's first clause (what was measured beside it is in the CSV)."""
    return frame.assign(verdict=frame.verdict.map(lambda v: v.split(";")[0]))[["claim", "verdict"]]


EXCERPT_CONFIGS = ("iceberg-cow", "iceberg-mor", "delta-cow")


def summary_excerpt(run: Run) -> str:
    """What ``make bench`` prints for the hotfix, cut to three configurations (the full summary is every one)."""
    from bench.report.summary import text_summary

    lines = text_summary(run).splitlines()
    keep, section = [], "operations"
    for line in lines:
        if line.startswith("finding the rows ("):
            section = line
        if line.startswith(("configuration ", "finding the rows (payments hotfix")) and (section == "operations" or "hotfix" in section):
            keep.append(line)
        elif line.startswith(EXCERPT_CONFIGS) and (section == "operations" and " update " in line or "hotfix" in section):
            keep.append(line)
        elif line.startswith("NO ROUTE"):
            keep.append(line)
    return "\n".join(keep)


def workload_choice(run: Run) -> pd.DataFrame:
    """The decision map read at the seeds' own workloads: the cheapest configuration per route, or why none is."""
    return workloads.seeds_reading(run)


FIGURES: dict[str, tuple[str, Callable[[Run], pd.DataFrame | str]]] = {
    "workload-choice": ("The cheapest configuration per write at the seeds' reads per write, each workload measured "
                        "whole (writes, reads, compaction), per route, with the share of resamples in which it is "
                        "cheapest", workload_choice),
    "summary-excerpt": ("What `make bench` prints: the payments hotfix, three of the configurations", summary_excerpt),
    "hotfix-routes": ("The payments hotfix: copy-on-write ÷ merge-on-read update time per locate route", hotfix_routes),
    "file-size-ratios": ("The same scattered update on files that grow 4x per step: copy-on-write ÷ merge-on-read update "
                         f"time per locate route ({locate_mod.RATIO_NOTE}; above 1 merge-on-read is faster)", file_size_ratios),
    "hotfix-memory": ("The payments hotfix: peak memory of the update per configuration and route", hotfix_memory),
    "memory-needed": ("The smallest driver memory with which the update completed", memory_needed),
    "cadence-checked": ("How often to compact, checked: the cost per write measured at the recommended cadence and its "
                        "neighbours, beside the degradation curve's", cadence_checked),
    "writers-grid": ("Several writers racing on one table beside its table service, per configuration, set-up, overlap "
                     "and writer count", writers_grid),
    "writers-violations": ("Every invariant a several-writers race broke, with its evidence", writers_violations),
    "writers-controls": ("Grid points raced under more than one set-up, side by side: what one changed factor changes",
                         writers_controls),
    "writers-claims": ("The seeds' four concurrency claims, decided on the causes of the failed attempts", writers_claims),
    "seed-read-toll": ("What a dashboard read pays after the payments hotfix at the seeds' size: the toll per read "
                       "(after minus before, warm repeats, Spark) beside the seeds' +80 ms for merge-on-read, and "
                       "copy-on-write's as the control (it merges nothing: what it moved by is the noise)",
                       seed_read_claims),
    "memory-many-files-per-task": ("Deletion vectors against position deletes on an update that touches many files per task "
                                   "(the shape of apache/iceberg #17209): the smallest driver memory that completed it",
                                   memory_needed),
}


ROUTE_WORDS = {"join": "`join` (a MERGE from a feed: every file read to find the rows)",
               "pruned": "`pruned` (literal keys: files skipped by their statistics)", "index": "`index` (Hudi's record index)"}


def _at_scale(columns: list[tuple[str, Run]]) -> list[tuple[str, list[locate_mod.Ratio]]]:
    return [(label, scenario_ratios(run, HOTFIX)) for label, run in columns]


def hotfix_rule(columns: list[tuple[str, Run]]) -> Prose:
    """The headline in sentences, per table measured and route: how many pairs merge-on-read updates faster in and by
    how much, where copy-on-write wins, and which are decided."""
    paragraphs = []
    for label, ratios in _at_scale(columns):
        lines = []
        for route in ROUTES:
            cells = sorted((r for r in ratios if r.route == route and r.divided), key=lambda r: -r.ratio)
            if not cells:
                continue
            mor, cow = [r for r in cells if r.ratio > 1], [r for r in cells if r.ratio <= 1]
            text = f"- {ROUTE_WORDS.get(route, route)}: merge-on-read's median update is shorter in {len(mor)} of {len(cells)} pairs"
            if mor:
                span = f"{mor[0].ratio:.2f}x" if len(mor) == 1 else f"{mor[-1].ratio:.2f}x to {mor[0].ratio:.2f}x"
                text += f" ({span}, the most {mor[0].cow} ÷ {mor[0].mor})"
            if cow:
                text += "; copy-on-write's in " + ", ".join(f"{r.cow} ÷ {r.mor} ({r.ratio:.2f}x)" for r in cow)
            kinds = {"decided": [r for r in cells if r.decided],
                     "too close to call": [r for r in cells if r.spread and r.spread.method == "95% bootstrap" and not r.decided],
                     f"a range (under {uncertainty.ROUNDS_FOR_VERDICT} rounds a side)": [r for r in cells if r.spread and r.spread.method != "95% bootstrap"]}
            said = [f"{kind}: {', '.join(f'{r.cow} ÷ {r.mor}' for r in those)}" if len(those) < len(cells)
                    else f"all {kind}" for kind, those in kinds.items() if those]
            lines.append(f"{text}. {'; '.join(said).capitalize()}.")
        paragraphs.append(f"At {label}:\n\n" + "\n".join(lines))
    return Prose("\n\n".join(paragraphs))


def hotfix_answer(columns: list[tuple[str, Run]]) -> Prose:
    """The rule in sentences (``hotfix_rule``), then the cells it reads (``hotfix_layouts``)."""
    return Prose(f"{hotfix_rule(columns)}\n\n{_markdown(hotfix_layouts(columns))}")


def _decided_first(columns: list[tuple[str, Run]]) -> tuple[int, int]:
    """How a one-table figure picks its machine: most decided cells at its first table (the seeds' size), then in all."""
    counted = [sum(r.decided for r in ratios) for _, ratios in _at_scale(columns)]
    return counted[0], sum(counted)


# a figure whose single table is a grid too big for Markdown: the summary its block shows instead, and what it is
BRIEFS: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "writers-grid": (writers_totals, "Summed per configuration, control and set-up:"),
    "writers-controls": (writers_totals, "Summed per configuration, control and set-up:"),
    "writers-violations": (violations_by_invariant, "Counted per invariant:"),
    "writers-claims": (claims_verdicts, "Each verdict's first clause (the measured evidence is in the CSV):"),
}


ROUND_TRIP_WITHIN = 0.25  # the seed round trip's aim: the whole table's update predicted within this of its measurement


def round_trip(columns: list[tuple[str, Run]]) -> pd.DataFrame:
    """A profiled table's update predicted from its replicas (``run --like PROFILE --fraction F``, the report's "Your
    table, from its replicas") beside the same table measured whole on one machine: how far the bridge lands, per
    configuration and route. The whole is the column whose layout is the replicas' at a fraction of 1. The replicas
    are one host's (the one that measured the most fractions): a line through two hosts' points bridges nothing."""
    runs = [run for _, run in columns]
    likes = [(run, run.env.like) for run in _replicas_of_one_host(runs) if run.env.like]
    replicas = [run for run, _ in likes]
    predicted = replica.predictions(replicas)
    rows = []
    for p in predicted.itertuples() if not predicted.empty else []:
        like = next(like for _, like in likes if (like.location or like.profile) == p.table)
        wholes = [run for run in runs if not run.env.like and _is_whole(like, run)]
        here = [run for run in wholes if run.origin.host == _host(replicas)]
        record = next((r for run in here + [w for w in wholes if w not in here]
                       for r in run.records(HOTFIX, "update", route=p.route) if r.config_id == p.configuration), None)
        spread = record.spread if record is not None else None
        rows.append({
            "configuration": p.configuration, "route": p.route, "replicas (update s, median [interval])": p.measured,
            "whole, predicted s": "one fraction: not bridged" if p.predicted_s is None
            else f"{p.predicted_s:.1f} [{p.low_s:.1f}, {p.high_s:.1f}]",
            "whole, measured s": "–" if spread is None or spread.median is None else uncertainty.median_text(
                spread.median, spread.ci95, spread.n, digits=1),
            "predicted ÷ measured": _landed(p.predicted_s, spread.median if spread is not None else None,
                                            record.origin.host != _host(replicas) if record is not None else False)})
    return pd.DataFrame(rows)


def _replicas_of_one_host(runs: list[Run]) -> list[Run]:
    """The replica runs of the host that measured the most fractions (of two such hosts, the later listed)."""
    by_host: dict[str, list[Run]] = {}
    for run in runs:
        if run.env.like and run.env.like.fraction is not None:
            by_host.setdefault(run.origin.host, []).append(run)
    if not by_host:
        return []
    return max(reversed(list(by_host.values())), key=lambda rs: len({_fraction(r) for r in rs}))


def _fraction(run: Run) -> float | None:
    return run.env.like.fraction if run.env.like else None


def _is_whole(like: Replica, run: Run) -> bool:
    """``run`` measured the replicated table whole: its layout is the replica's with every partition."""
    params = like.params or {}
    days = round(params.get("days", 0) / float(like.fraction)) if like.fraction else None
    scale = run.env.scale
    return scale is not None and (scale.days, scale.files_per_day, scale.rows_per_file) == \
        (days, params.get("files_per_day"), params.get("rows_per_file"))


def _host(runs: list[Run]) -> str:
    return runs[0].origin.host if runs else ""


def _landed(predicted: float | None, measured: float | None, other_host: bool) -> str:
    if predicted is None or measured is None:
        return "–"
    if other_host:
        return "not divided (the whole ran on another host)"
    off = predicted / measured - 1
    return f"{predicted / measured:.2f}x ({'within' if abs(off) <= ROUND_TRIP_WITHIN else 'beyond'} " \
           f"{ROUND_TRIP_WITHIN:.0%})"


@dataclass(frozen=True)
class Across:
    """A figure that sets one machine's groups side by side, a column each: ``over`` is what the columns vary (the
    table ``layout`` or the ``storage``); the groups share everything else (never two machines in one table)."""

    title: str
    source: str  # the figure whose backing runs it reads
    over: str
    make: Callable[[list[tuple[str, Run]]], pd.DataFrame | str]
    # a figure of one table (the README's): the machine's whose columns rank highest by this
    one: Callable[[list[tuple[str, Run]]], tuple[int, int]] | None = None


ACROSS: dict[str, Across] = {
    "hotfix-headline": Across("The payments hotfix, copy-on-write ÷ merge-on-read update time per locate route and table "
                              f"({locate_mod.RATIO_NOTE}; above 1 merge-on-read is faster)", "hotfix-routes", "layout",
                              hotfix_layouts),
    "hotfix-answer": Across("The payments hotfix, copy-on-write ÷ merge-on-read update time per locate route, on the "
                            "machine with the most decided cells at the seeds' size (in the table: "
                            f"{locate_mod.RATIO_NOTE}; above 1 merge-on-read is faster)", "hotfix-routes", "layout",
                            hotfix_answer, one=_decided_first),
    "hotfix-storage": Across("The payments hotfix on each storage: copy-on-write ÷ merge-on-read update time per locate "
                             f"route ({locate_mod.RATIO_NOTE}; above 1 merge-on-read is faster)", "hotfix-storage",
                             "storage", hotfix_layouts),
    "round-trip": Across("A table profiled from its metadata (`inspect`), measured on replicas of its layout at two "
                         "fractions of its partitions (`run --like --fraction`), its whole update predicted from them "
                         "and measured whole on the same machine", "round-trip", "layout", round_trip),
    "hotfix-storage-updates": Across("The payments hotfix on each storage: each configuration's update time per locate "
                                     "route, and the requests it made", "hotfix-storage", "storage", updates_by_storage),
}


# the names a manifest line may say a run backs: each figure's, and the runs an across-figure reads
BACKABLE = frozenset(FIGURES) | {figure.source for figure in ACROSS.values()}


def across_groups(over: str, pairs: list[tuple[Entry, Run]]) -> list[tuple[str, list[Entry], list[tuple[str, Run]]]]:
    """``pairs`` merged per machine, storage and layout, then gathered into the tables of an ``over`` figure: each a
    title part (what its columns share), its runs, and its columns (label, merged run), the seeds' size first, then
    the layouts from most days to fewest; an ``over="storage"`` table of one storage is left out."""
    merged: dict[tuple[str, str, str], list[tuple[Entry, Run]]] = {}
    for entry, run in sorted(pairs, key=lambda p: p[1].scale != SEED_SCALE):
        merged.setdefault(group_of(entry, run), []).append((entry, run))
    tables: dict[tuple[str, str], list[tuple[list[Entry], str, Run]]] = {}
    for (machine, storage, shape), group in merged.items():
        run = load.merge([r for _, r in group])
        shared, label = ((machine, storage), f"{run.scale}: {shape}") if over == "layout" else \
            ((machine, f"scale `{run.scale}` ({shape})"), storage)
        tables.setdefault(shared, []).append(([e for e, _ in group], label, run))
    out = []
    for (machine, where), columns in tables.items():
        if over == "storage" and len(columns) < 2:
            continue  # one storage alone compares nothing
        columns.sort(key=lambda c: (c[2].scale != SEED_SCALE, c[1] != LOCAL_DISK, -_days(c[2])))
        out.append((f"On {machine}, {where}", [e for entries, _, _ in columns for e in entries],
                    [(label, run) for _, label, run in columns]))
    return out


def _rows(run: Run) -> int:
    """The rows of a run's payments table, as its scale records them (0 where it records none)."""
    scale = run.env.scale
    return (scale.days or 0) * (scale.files_per_day or 0) * (scale.rows_per_file or 0) if scale else 0


def _days(run: Run) -> int:
    """The days a run's payments table spans: a scale's layouts read from the preset's many thin days to few full
    ones, so a column's neighbour changes one thing, how many files a day (and so a changed row's file) holds."""
    scale = run.env.scale
    return (scale.days or 0) if scale else 0


@dataclass(frozen=True)
class Part:
    """One table of a figure: the caption (what its rows share, the runs it comes from) and the table itself."""

    caption: str
    table: pd.DataFrame | str
    label: str  # what tells this table from the figure's others in its CSV (machine, storage, scale, layout)


def parts(name: str, folder: Path = REFERENCE_DIR) -> list[Part]:
    """Figure ``name``'s tables, one per machine (and storage and layout, or as its ``Across`` gathers them), each
    computed once while the reference set is unchanged (its block and its CSV read the same tables).

    Raises:
        KeyError: no such figure.
    """
    if name not in ACROSS and name not in FIGURES:
        raise KeyError(name)
    return list(_parts(name, folder, stamp(folder)))


@functools.lru_cache(maxsize=64)
def _parts(name: str, folder: Path, _: tuple) -> tuple[Part, ...]:
    return tuple(_computed(name, folder))


def _computed(name: str, folder: Path) -> list[Part]:
    if name in ACROSS:
        figure = ACROSS[name]
        groups = across_groups(figure.over, backing(figure.source, folder))
        if figure.one and groups:
            groups = [max(groups, key=lambda group: figure.one(group[2]))]  # type: ignore[misc]
        return [Part(f"{figure.title}. {where}; {_source(entries, where=False)}.", figure.make(columns), where)
                for where, entries, columns in groups]
    title, make = FIGURES[name]
    out = []
    for entries, run in _by_machine(name, folder):
        where = f"{entries[0].machine_label}, {entries[0].storage}, scale {run.scale} ({layout(run)})"
        out.append(Part(f"{title}, scale `{run.scale}` ({layout(run)}). From {_source(entries)}.", make(run), where))
    return out


def _title(name: str) -> str:
    return ACROSS[name].title if name in ACROSS else FIGURES[name][0]


def _caption(text: str) -> str:
    """A caption in italics, wrapped as the docs' prose is (Markdown joins the lines into one paragraph)."""
    return "\n".join(textwrap.wrap(f"*{text}*", 118, break_on_hyphens=False, break_long_words=False))


class Prose(str):
    """A figure's generated sentences: they stand in the page as prose, not as a code block."""


def _body(table: pd.DataFrame | str) -> str:
    if isinstance(table, Prose):
        return str(table)
    if isinstance(table, str):
        return f"```\n{table}\n```" if table else "*(the runs hold no such record)*"
    return _markdown(table) if not table.empty else "*(the runs hold no such record)*"


def fits(markdown: str) -> bool:
    """Within what a figure block in Markdown may hold (``MAX_ROWS`` table rows, ``MAX_BYTES``, ``MAX_LINE``)."""
    lines = markdown.splitlines()
    rows = sum(line.startswith("| ") for line in lines) - sum(line.startswith("|---") for line in lines)  # less headers
    return rows <= MAX_ROWS and len(markdown.encode()) <= MAX_BYTES and max(map(len, lines), default=0) <= MAX_LINE


# figures whose block shows their first table alone (the largest scale's): the front page's room; the rest in their CSV
FIRST_TABLE_ONLY = frozenset({"workload-choice"})


def render(name: str, folder: Path = REFERENCE_DIR) -> str:
    """The Markdown of figure ``name``: its tables, each with the runs it comes from, as many as ``fits`` allows
    (the seeds' size first); a table too big for the page is shown as its figure's ``BRIEFS`` summary where it has
    one, and every table is whole in ``docs/figures/NAME.csv``.

    Raises:
        KeyError: no such figure.
    """
    every = parts(name, folder)
    found = every[:1] if name in FIRST_TABLE_ONLY else every
    left_out = len(every) - len(found)
    if not found:
        return _caption(f"No reference run backs this figure yet: {_title(name)}.") + "\n"
    shown: list[str] = []
    briefed = False
    for part in found:
        block = f"{_caption(part.caption)}\n\n{_body(part.table)}\n"
        if not fits("\n".join([*shown, block])) and name in BRIEFS and isinstance(part.table, pd.DataFrame):
            brief, what = BRIEFS[name]
            block, briefed = f"{_caption(f'{part.caption} {what}')}\n\n{_markdown(brief(part.table))}\n", True
        if fits("\n".join([*shown, block])):
            shown.append(block)
        else:
            left_out += 1
    if left_out:
        shown.append(_caption(f"{left_out} more table{'s' if left_out != 1 else ''} (other machines, storage or "
                              f"scales), every table whole: `{GRIDS_DIR}/{name}.csv` and `make findings`.") + "\n")
    elif briefed:
        shown.append(_caption(f"Every row: `{GRIDS_DIR}/{name}.csv`, and the findings page (`make findings`).") + "\n")
    return "\n".join(shown)


def grid(name: str, folder: Path = REFERENCE_DIR) -> pd.DataFrame | None:
    """Every table of figure ``name`` whole, one under another with the ``table`` each came from (for its CSV);
    None for a figure that is text or that no run backs."""
    frames = [p.table.assign(table=p.label)[["table", *p.table.columns]] for p in parts(name, folder)
              if isinstance(p.table, pd.DataFrame) and not p.table.empty]
    return pd.concat(frames, ignore_index=True) if frames else None


def grid_csv(name: str, folder: Path = REFERENCE_DIR) -> str | None:
    frame = grid(name, folder)
    return frame.to_csv(index=False, lineterminator="\n") if frame is not None else None


def rewrite(text: str, folder: Path = REFERENCE_DIR) -> str:
    """``text`` with every figure block and inline value regenerated."""
    return values.rewrite(MARKER.sub(lambda m: m.group(1) + render(m.group("name"), folder) + m.group(4), text), folder)


def drift(paths: list[Path], folder: Path = REFERENCE_DIR) -> list[str]:
    """The files whose figure blocks or inline values differ from what the reference set gives (one line each)."""
    out = []
    for path in paths:
        out += values.drift(path, folder)
        text = path.read_text()
        for m in MARKER.finditer(text):
            if m.group("name") not in FIGURES and m.group("name") not in ACROSS:
                out.append(f"{path}: unknown figure {m.group('name')!r}")
            elif m.group("body") != render(m.group("name"), folder):
                out.append(f"{path}: figure {m.group('name')} differs from the reference runs (run `make docs`)")
    return out


def named(paths: list[Path]) -> list[str]:
    """The figures ``paths`` hold blocks of, each once, in order."""
    return list(dict.fromkeys(m.group("name") for path in paths for m in MARKER.finditer(path.read_text())
                              if m.group("name") in FIGURES or m.group("name") in ACROSS))


def grid_drift(paths: list[Path], grids: Path, folder: Path = REFERENCE_DIR) -> list[str]:
    """The CSVs under ``grids`` that differ from the figures ``paths`` name, or are missing, or name no figure."""
    wanted = {name: grid_csv(name, folder) for name in named(paths)}
    out = [f"{grids / f'{name}.csv'}: differs from the reference runs (run `make docs`)"
           for name, text in wanted.items() if text is not None
           and (not (grids / f"{name}.csv").is_file() or (grids / f"{name}.csv").read_text() != text)]
    known = {f"{name}.csv" for name, text in wanted.items() if text is not None}
    return out + [f"{path}: no figure in the docs makes it (run `make docs`)" for path in sorted(grids.glob("*.csv"))
                  if path.name not in known]


def write_grids(paths: list[Path], grids: Path, folder: Path = REFERENCE_DIR) -> list[Path]:
    """Write each figure's CSV that ``paths`` name into ``grids`` (removing those no figure makes); the ones written."""
    grids.mkdir(parents=True, exist_ok=True)
    written = []
    wanted = {name: grid_csv(name, folder) for name in named(paths)}
    for name, text in wanted.items():
        target = grids / f"{name}.csv"
        if text is not None and (not target.is_file() or target.read_text() != text):
            target.write_text(text)
            written.append(target)
    for stale in grids.glob("*.csv"):
        if wanted.get(stale.stem) is None:
            stale.unlink()
    return written
