"""How the cost grows with file size: the measured steps, the fitted cost model with its held-out check, the seeds'
table predicted, and the user's own tables (``--table``)."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from bench.core import uncertainty
from bench.core.uncertainty import DECISIVE
from bench.core.units import human_bytes
from bench.report import charts
from bench.report.fitted import UNITS, ConfigModel, mean_read, models, routes_of
from bench.report.html_parts import img, note, table
from bench.report.model import MB, SEED_FIGURES, SEED_TABLE, UserTable, table_drivers
from bench.results import load
from bench.results.contract import FILE_SIZE
from bench.results.schema import FileSizeUpdate


def _interval(median: float, low: float | None = None, high: float | None = None, digits: int = 2) -> str:
    if low is None or high is None:
        return f"{median:,.{digits}f} (one round: no interval)"
    return f"{median:,.{digits}f} [{low:,.{digits}f}, {high:,.{digits}f}]"


def steps_table(run: load.Run) -> pd.DataFrame:
    rows = []
    for r in run.records(FILE_SIZE):
        step, figure = r.view(FileSizeUpdate), r.spread
        median = figure.median if figure.median is not None else float(np.median(r.seconds))
        after = mean_read(step.reads_after)
        rows.append({"file MB": float(f"{step.file_bytes_mean / MB:.3g}"),  # one column per step across layouts
                     "configuration": r.config_id, "layout": layout_of(step),
                     "update s, median (interval)": uncertainty.median_text(median, figure.ci95, figure.n or len(r.seconds)),
                     "median_s": median, "written": human_bytes(step.filesystem.bytes_added),
                     "compaction s": f"{step.compaction.seconds:.2f}" if step.compaction and step.compaction.seconds is not None else "–",
                     "read after s": f"{np.median(after):.3f}" if after else "–"})
    return pd.DataFrame(rows)


def layout_of(step: FileSizeUpdate) -> str:
    """Which files a step's update touches: ``2 of 4 files`` (runs with another layout are reported beside it)."""
    return f"{step.files_touched} of {step.files_total} files"


def ratios(run: load.Run, steps: pd.DataFrame) -> pd.DataFrame:
    """Copy-on-write ÷ merge-on-read update time per family pair at each step (and layout)."""
    rows = []
    for (layout, size), group in steps.groupby(["layout", "file MB"]):
        medians = dict(zip(group.configuration, group.median_s))
        for cow, mor in run.matrix.cow_mor_pairs(medians):
            rows.append({"file MB": f"{size:.3g}", "pair": f"{cow} ÷ {mor}", "layout": layout,
                         "time ratio": f"{medians[cow] / medians[mor]:.2f}x"})
    return pd.DataFrame(rows)


def _checks(fitted: dict[str, ConfigModel]) -> pd.DataFrame:
    rows = []
    for m in fitted.values():
        for quantity, check in m.checks.items():
            model = {"update": m.write, "read after the update": m.read, "compaction": m.compaction}[quantity]
            if model is None:
                continue
            rows.append({"configuration": m.config_id, "route": m.route, "quantity": quantity, "model (all points)": model.describe(UNITS),
                         "held-out point": f"{check.label} ({check.reach:.1f}x beyond the rest)" if check else "–",
                         "predicted without it [95%]": _interval(check.predicted, check.low, check.high) if check else "too few points",
                         "measured [min, max]": _interval(check.measured, check.measured_low, check.measured_high) if check else "–",
                         "check": ("ok" if check.inside else "MISSED: the interval does not meet the measurement") if check else "–"})
    return pd.DataFrame(rows)


def _kind(run: load.Run, config_id: str) -> str:
    return "merge-on-read" if run.matrix.merges_on_read(config_id) else "copy-on-write"


# why: docs/scenarios.md, "What the routes measure, and why they disagree"
PARTITIONS = ("The model prices the partitions an update touches only where the runs hold the hotfix on two more "
              "layouts (`--param days=8 --param files_per_day=45` and `days=30 files_per_day=12`): the file-size steps "
              "keep one file per partition. Without them it prices files alone, and every format's update also pays per "
              "partition touched, so its predictions run high for tables with many touched files in each partition.")


def partitions_note(fitted: list[ConfigModel]) -> str:
    """Which update models price the partitions an update touches, and the caveat for those that cannot."""
    pricing = sorted(f"{m.config_id} ({m.route})" for m in fitted if m.write and "partitions_touched" in m.write.drivers)
    blind = sorted(f"{m.config_id} ({m.route})" for m in fitted if m.write and "partitions_touched" not in m.write.drivers)
    if pricing and not blind:
        return "Every update model prices the partitions an update touches beside its files (the hotfix on several layouts)."
    return (f"Pricing partitions touched beside files: {', '.join(pricing)}. Not: {', '.join(blind)}. " if pricing else
            "") + PARTITIONS


def seeds(run: load.Run, fitted: dict[str, ConfigModel]) -> pd.DataFrame:
    """The seeds' update (4,800 files of ~1.25 MB, 1,200 scattered rows) and the same 6 GB in 128 MB files."""
    table_mb = SEED_TABLE["files"] * SEED_TABLE["file_mb"]
    rows = []
    for m in fitted.values():
        if m.write is None:
            continue
        variants = {"seeds' table (4,800 x 1.25 MB in 90 days)":
                        table_drivers(SEED_TABLE["files"], SEED_TABLE["file_mb"], SEED_TABLE["rows_per_update"], m.route,
                                      SEED_TABLE["partitions"]),
                    f"same {table_mb / 1024:.1f} GB in 128 MB files ({table_mb / 128:.0f} files)":
                        table_drivers(table_mb / 128, 128, SEED_TABLE["rows_per_update"], m.route, SEED_TABLE["partitions"])}
        seconds, label = SEED_FIGURES[_kind(run, m.config_id)]
        row = {"configuration": m.config_id, "route": m.route}
        for name, drivers in variants.items():
            p, lo, hi = m.write.predict_new(drivers)
            row[f"{name}: update s [95%]"] = _interval(p, lo, hi, 1)
            row[f"{name}: reach"] = f"{m.write.reach(drivers):,.0f}x"
        row["seeds' figure"] = f"{label} ({seconds:.0f} s)"
        rows.append(row)
    return pd.DataFrame(rows)


def user_table(t: UserTable, fitted: dict[str, ConfigModel]) -> tuple[pd.DataFrame, str, float]:
    """W, R, C and the cost per day of every configuration on the user's table, the verdict, and the reach."""
    x = t.drivers
    costs, rows, reach = {}, [], 1.0
    compactions = t.updates_per_day / t.writes_per_compaction
    for m in fitted.values():
        if m.write is None or m.read is None:
            continue
        w, r = m.write.draws @ m.write._x(x), m.read.draws @ m.read._x(x)
        comp = m.compaction.draws @ m.compaction._x(x) if m.compaction is not None else np.zeros_like(w)
        costs[m.config_id] = t.updates_per_day * w + t.reads_per_day * r + compactions * comp
        reach = max(reach, m.write.reach(x), m.read.reach(x))
        rows.append({"configuration": m.config_id, "W update s": _interval(*m.write.predict(x)),
                     "R read s": _interval(*m.read.predict(x), 3),
                     "C compaction s": _interval(*m.compaction.predict(x)) if m.compaction else "0 (copies on write)",
                     "cost per day (s) [95%]": _interval(float(np.median(costs[m.config_id])),
                                                         float(np.percentile(costs[m.config_id], 2.5)),
                                                         float(np.percentile(costs[m.config_id], 97.5)), 0)})
    if not costs:
        return pd.DataFrame(rows), "nothing to predict from (no configuration with update and read fits)", reach
    names = list(costs)
    stacked = np.vstack([costs[n] for n in names])
    shares = np.bincount(stacked.argmin(axis=0), minlength=len(names)) / stacked.shape[1]
    order = np.argsort(-shares)
    best = names[order[0]]
    verdict = best if shares[order[0]] >= DECISIVE else \
        f"too close to call at this scale: {best} or {names[order[1]] if len(order) > 1 else 'another'}"
    verdict += f" (cheapest in {shares[order[0]]:.0%} of resamples)"
    return pd.DataFrame(rows), verdict, reach


def section_file_size(run: load.Run, out: Path, tables: list[UserTable] | None = None) -> str:
    steps = steps_table(run)
    if steps.empty:
        return _without_steps(run)
    by_route = {route: models(run, route) for route in routes_of(run)}
    fitted = by_route.get("join") or next(iter(by_route.values()), {})
    return (_steps(run, steps, out) + _model_checked(by_route) + _blind(fitted) + _seeds_table(run, by_route)
            + "".join(_your_table(t, by_route, fitted) for t in tables or []))


def _without_steps(run: load.Run) -> str:
    routes_taken = sorted({r.route for r in run.records(FILE_SIZE, route=None)})
    if routes_taken:  # the steps, the model and its reads and compactions are laid out against the baseline route
        return note(f"The file-size steps in this run took only the {', '.join(routes_taken)} route: this section and its "
                    "cost model are built on the join route's steps (the baseline, which measures the reads after "
                    "the update and the compaction). Run scenarios/test_file_size.py with `--routes join,"
                    f"{','.join(routes_taken)}`, or report this run together with one that has the join's.")
    return note("No file-size steps in this run: run scenarios/test_file_size.py (part of the default run) to see "
                "how copy-on-write's cost follows the size of its files.")


def _steps(run: load.Run, steps: pd.DataFrame, out: Path) -> str:
    """The steps as measured: the chart of the first layout, a table per figure, copy-on-write ÷ merge-on-read."""
    layouts = list(dict.fromkeys(steps["layout"]))  # the first recorded layout is the chart's
    index = ["configuration", "layout"] if len(layouts) > 1 else "configuration"
    chart = charts.series(steps[steps["layout"] == layouts[0]].rename(columns={"file MB": "file_mb", "configuration": "config_id"}),
                          "file_mb", "median_s", f"Update time vs file size (same rows; {layouts[0]} touched)",
                          "MB per file (log)", "seconds", logx=True)
    first = run.records(FILE_SIZE)[0]
    others = f" Also measured with {', '.join(layouts[1:])} touched (the tables' second column)." if len(layouts) > 1 else ""
    parts = ["<h3>How the cost grows: file size</h3>",
             note(f"The same update — {first['rows_targeted']} rows, one in each of {first['files_touched']} of "
                  f"{first['files_total']} files — on files that grow 4x per step. Copy-on-write rewrites every file a "
                  "changed row sits in; merge-on-read and deletion vectors write in proportion to the rows. The formats' "
                  f"target file size is set to at least twice the step's file size, so no file is split.{others}"),
             img(chart, "update time vs file size", out, FILE_SIZE)]
    for column in ("update s, median (interval)", "written", "compaction s", "read after s"):
        wide = steps.pivot_table(index=index, columns="file MB", values=column, aggfunc="first")
        wide.columns = [f"{c:.3g} MB" for c in wide.columns]
        parts += [f"<h4>{html.escape(column)} per MB per file</h4>", table(wide.reset_index())]
    ratio = ratios(run, steps)
    if not ratio.empty:
        wide = ratio.pivot_table(index=["pair", "layout"] if len(layouts) > 1 else "pair", columns="file MB",
                                 values="time ratio", aggfunc="first")
        wide = wide[sorted(wide.columns, key=float)].rename_axis(columns=None).reset_index()
        parts += ["<h4>copy-on-write ÷ merge-on-read update time</h4>", table(wide)]
    return "".join(parts)


def _model_checked(by_route: dict[str, dict[str, ConfigModel]]) -> str:
    checks = pd.concat([_checks(f) for f in by_route.values()], ignore_index=True) if by_route else pd.DataFrame()
    if checks.empty:
        return ""
    return ("<h3>The cost model, checked on a point it did not see</h3>" + table(checks)
            + note("Per configuration, y = a + Σ b·x with every coefficient ≥ 0, fitted on the medians of every measured "
                   "update (file-size steps, the hotfix, table growth and the sweep where present); 95% intervals from "
                   f"refitting on {uncertainty.RESAMPLES:,} bootstrap resamples of each point's rounds. The check refits "
                   "without the point with the largest files and predicts it; 'MISSED' means the prediction's interval "
                   "does not meet the measured rounds. Its interval is one new measurement's: the coefficients' refits "
                   "times the relative errors of the fit and of every point's rounds. The update's drivers: the files it "
                   "touches, the partitions they lie in (where the hotfix on two more layouts tells them apart), the MB "
                   "in those files and, per locate route, the bytes its search goes through (the whole table for a join, "
                   "the touched files for literal keys or an index); the reads after it and compaction come from the "
                   "baseline route (join). At the file-size steps the table holds twice the bytes of the touched files, "
                   "so only the hotfix's points (a third of the files touched) or a second layout (`--param "
                   "file_size_files=8 --param file_size_touched=1`) separate the table's bytes from the touched files'."))


def _blind(fitted: dict[str, ConfigModel]) -> str:
    blind = sorted({d for m in fitted.values() for d in m.unidentified if d not in ("locate_bytes", "partitions_touched")})
    if not blind:
        return ""
    return (f'<p class="warn">The update model cannot tell {", ".join(UNITS[d][1] for d in blind)} from the '
            "constant term in these runs (it never varies): predictions for tables that differ in it assume it "
            "costs nothing extra. Report this run together with a payments-hotfix run (`report RUN_A RUN_B`) to "
            "separate them.</p>")


def _seeds_table(run: load.Run, by_route: dict[str, dict[str, ConfigModel]]) -> str:
    seed = pd.concat([seeds(run, f) for f in by_route.values()], ignore_index=True) if by_route else pd.DataFrame()
    if seed.empty:
        return ""
    return ("<h3>The seeds' table, predicted</h3>" + table(seed)
            + note("Reach: how far the prediction lies beyond the largest measured point (ratio of the driver to its "
                   "largest measured value); far beyond 1x the interval is the model's, not the world's: measured at the "
                   "seeds' own size on one machine, 10x beyond the `small` points, the updates came out between 0.5x and "
                   "1.5x of these predictions (docs/scenarios.md), so read them as a factor of two either way. The seeds' "
                   "figures were measured on their authors' clusters and object stores, these predictions on this "
                   "machine's local disk: compare the ratios between configurations, not the seconds. "
                   + partitions_note([m for f in by_route.values() for m in f.values()])))


def _your_table(t: UserTable, by_route: dict[str, dict[str, ConfigModel]], fitted: dict[str, ConfigModel]) -> str:
    frame, verdict, reach = user_table(t, by_route.get(t.route) or fitted)
    if t.route not in by_route:
        verdict += f" (no run measured the {t.route} route: the join route's model is used)"
    warn = (f'<p class="warn">{html.escape(t.name)} lies outside the measured range (up to {reach:,.0f}x the largest '
            "measured point): the prediction is an extrapolation.</p>") if reach > 1.5 else ""
    return (f"<h3>Your table: {html.escape(t.name)}</h3>"
            + note(f"{t.files:,.0f} files of {t.file_mb:g} MB in {_partitions(t)}, {t.rows_per_update:,.0f} rows per update, "
                   f"{t.updates_per_day:g} updates and {t.reads_per_day:,.0f} reads a day, compaction every "
                   f"{t.writes_per_compaction:g} writes, rows found by the {t.route} route. Recommended: {verdict}. "
                   + partitions_note(list((by_route.get(t.route) or fitted).values())))
            + warn + table(frame))


def table_text(t: UserTable, fitted: dict[str, ConfigModel]) -> str:
    """The same prediction as plain text, for the terminal."""
    frame, verdict, reach = user_table(t, fitted)
    lines = [f"{t.name} ({t.route} route): {t.files:,.0f} files x {t.file_mb:g} MB in {_partitions(t)}, "
             f"{t.rows_per_update:,.0f} rows per update, "
             f"{t.updates_per_day:g} updates + {t.reads_per_day:,.0f} reads a day, compaction every {t.writes_per_compaction:g} writes"]
    if not frame.empty:
        lines.append(frame.to_string(index=False))
    lines.append(f"recommended: {verdict}")
    lines.append(f"note: {partitions_note(list(fitted.values()))}")
    if reach > 1.5:
        lines.append(f"warning: outside the measured range ({reach:,.0f}x the largest measured point): an extrapolation")
    return "\n".join(lines)


def _partitions(t: UserTable) -> str:
    return (f"{t.partitions:,.0f} partitions" if t.partitions is not None
            else "as many partitions (partitions not given: one per file, the most an update can touch)")
