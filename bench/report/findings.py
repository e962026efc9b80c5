"""The findings page: the project's own answers, drawn from its reference runs (no JVM). The page is written first
(about 20 s on 2 cores); the full report per machine and scale that it links comes after (about a minute more).

``cowmor findings`` renders ``reports/findings/index.html``: first the answer per family and route, copy-on-write ÷
merge-on-read on the payments hotfix with its interval and verdict, per machine and scale; then the same ratio along the
file size; then the same hotfix on each storage (local disk, an object store, one with S3-like latency); then the
seeds' claims beside what was measured on their own table; then the memory each configuration used
and needs; then how often to compact, checked at the recommended cadence and its neighbours; then several writers
(committed and failed against writers, the four claims); then the manifest (every run's id, command, commit, machine,
storage, what it backs) and a full report per machine and scale, and one per machine and scale over all its layouts.
Runs of different machines or storage are never merged into one ratio or fit.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bench.report import cadence, charts
from bench.report.build import CSS, build_report
from bench.report.figures import (
    ACROSS,
    FIGURES,
    SEED_SCALE,
    across_groups,
    file_size_ratio_points,
    grid_csv,
    group_of,
    hotfix_layouts,
    hotfix_memory,
    memory_needed,
    model_against_unseen,
    ratio_points,
    routes_table,
    scenario_ratios,
    seed_claim_points,
    seed_claims,
    seed_read_claims,
    size_table,
    updates_by_storage,
)
from bench.report.html_parts import img, note, table
from bench.report.locate import RATIO_NOTE
from bench.report.sections import choice, writers
from bench.results import load
from bench.results.contract import (
    COMPACTION_CADENCE,
    DEGRADATION,
    DINNER_PEAK,
    FILE_SIZE,
    HOTFIX,
    LOCAL_DISK,
    MEMORY_NEEDED,
    SETTLEMENTS,
    SEVERAL_WRITERS,
    UPDATE_SWEEP,
)
from bench.results.reference import REFERENCE_DIR, backing, runs


def _slug(text: str) -> str:
    """A file name for a group: readable, short, and never the same for two groups (two machines' tables of one
    layout differ only past the cut, so a cut name carries a digest of the whole)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug if len(slug) <= 60 else f"{slug[:51].rstrip('-')}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


@dataclass(frozen=True)
class Group:
    """Runs of one machine, storage, scale and layout, merged: what one section's table or chart of them reads."""

    where: str  # the heading: scale, layout, machine, storage
    name: str  # its file-name slug
    members: list  # (manifest entry, run)
    run: load.Run
    out: Path

    def runs(self, *scenarios: str) -> str:
        return f"<p>Runs {_ids(self.members, *scenarios)}.</p>"


def _choice(g: Group) -> str:
    drawn = choice.section(g.run, g.out, f"map-{g.name}")
    return g.runs(DINNER_PEAK, SETTLEMENTS, UPDATE_SWEEP) + drawn if drawn else ""


def _answer(g: Group) -> str:
    ratios = scenario_ratios(g.run, HOTFIX)
    if not ratios:
        return ""
    return g.runs(HOTFIX) + img(charts.ratio_bars(pd.DataFrame(ratio_points(ratios)), "Payments hotfix, copy-on-write ÷ "
                                                  f"merge-on-read ({g.run.scale})"),
                                "copy-on-write ÷ merge-on-read per route", g.out, f"ratios-{g.name}") + table(routes_table(ratios))


def _sizes(g: Group) -> str:
    steps = file_size_ratio_points(g.run)
    if steps.empty:
        return ""
    return g.runs(FILE_SIZE) + "".join(
        img(charts.ratio_against_size(part, f"Copy-on-write ÷ merge-on-read against the file size ({touched} touched)"),
            "copy-on-write ÷ merge-on-read against the file size", g.out, f"sizes-{g.name}-{_slug(touched)}")
        for touched, part in steps.groupby("layout")) + table(size_table(steps))


def _claims(g: Group) -> str:
    points = seed_claim_points(g.run)
    if points.empty:
        return ""
    tolls = seed_read_claims(g.run)
    return g.runs(HOTFIX) + img(charts.against_claims(points, "The hotfix at the seeds' size: measured against the seeds' "
                                                      "claim"), "measured update seconds against the seeds' claims", g.out,
                                f"claims-{g.name}") + table(seed_claims(g.run)) + (
        "" if tolls.empty else "<h4>What a read pays after the update</h4>" + table(tolls) + note(
            "The dashboards' mean latency (Spark, warm repeats; the first, cold read kept apart) read once before the "
            "update and once after it; the toll's range sets each side's repeats against the other's extremes. "
            "Copy-on-write merges nothing at read time: what its toll moved by is the noise this measurement carries, "
            "and a claim smaller than that is too close to call."))


def _memory(g: Group) -> str:
    used, needed = hotfix_memory(g.run), memory_needed(g.run)
    if used.empty and needed.empty:
        return ""
    return g.runs(HOTFIX, MEMORY_NEEDED) + (table(used) if not used.empty else "") \
        + (f"<h4>The memory each needs</h4>{table(needed)}" if not needed.empty else "")


def _compaction(g: Group) -> str:
    checked = cadence.checks(g.run)
    return g.runs(COMPACTION_CADENCE, DEGRADATION) + table(cadence.checked_table(checked)) if checked else ""


def _several(g: Group) -> str:
    races = writers.races(g.run)
    if races.empty:
        return ""
    return g.runs(SEVERAL_WRITERS) + _writers(races, g.out, g.name) + table(pd.DataFrame(writers.claims(g.run)))


@dataclass(frozen=True)
class Finding:
    """One section of the page: its heading, what it shows and why, and how it draws one group (``None``: the section
    gathers its own parts across groups, as the object store does)."""

    id: str
    heading: str
    intro: str
    empty: str
    draw: Callable[[Group], str] | None


FINDINGS = [
    Finding("choice", "The choice for a workload",
            "Each seed workload measured whole: the dinner peak (upsert batches, dashboard reads after each, then "
            "compaction) and the monthly settlements (a few adjustments, very many reads), on every configuration and "
            "route; then each update sweep point (one update of that share of the table's files, the dashboards after "
            "it). The cost per write at r reads per write is a write's mean time + r x a read's + the compaction ÷ the "
            "writes of the cycle; the map colours the cheapest configuration where it is cheapest in 90% of the "
            "resamples of the cycle's steps, grey where it is too close to call, light grey where the cycle has fewer "
            "than 5 writes or reads. Dashed: the seeds' own workloads (16 updates per read; 4,500 reads per write).",
            "No reference run measured a workload's whole cycle yet.", _choice),
    Finding("answers", "1. Copy-on-write or merge-on-read? The payments hotfix, per locate route",
            f"The update's time, copy-on-write ÷ merge-on-read (or ÷ deletion vectors): {RATIO_NOTE}; above 1 "
            "merge-on-read is faster. The route is how the update found its rows: join a MERGE from a keys table (no "
            "format prunes it), pruned literal keys, index Hudi's record index. A verdict whose interval holds 1 is "
            "too close to call.", "No reference run backs this answer yet.", _answer),
    Finding("file-size", "2. Along the file size",
            "The same scattered update (a few rows, one in each of some of the files) on files that grow 4x per step: "
            "copy-on-write rewrites every file a changed row sits in, so its cost follows the file's bytes, while "
            "merge-on-read and deletion vectors write in proportion to the rows. The ratio per route with what its "
            "rounds support.", "No reference run measured the file-size steps yet.", _sizes),
    Finding("storage", "3. On an object store",
            "The same hotfix on one machine's local disk and on an S3 server (SeaweedFS, started by the run), with and "
            "without a delay per request like S3's: every file a configuration writes or reads is requests there. Does "
            "merge-on-read's saving survive once requests cost time? The ratio per route on each storage, then each "
            "configuration's update time and requests.", "No reference run measured the object store yet.", None),
    Finding("claims", "4. The seeds' claims at the seeds' own size",
            "The seeds reason about a table of 4,800 files of about 1.25 MB and 1,200 scattered rows: copy-on-write "
            "rewrites about 6 GB in 8 minutes, merge-on-read writes about 4 MB in 12 seconds. Each update measured on "
            "that table (the seed preset) beside the claim for its kind, decided on its magnitude; every update "
            "changed exactly the rows it targeted (checked against the generated data). Then merge-on-read's reads, +80 ms "
            "each by the seeds: the dashboards read before and after the update (what several writers do is section "
            "7, at scale small).", "No reference run measured the seeds' table yet.", _claims),
    Finding("memory", "5. Memory", "", "No reference run measured memory yet.", _memory),
    Finding("compaction", "6. How often to compact",
            "The writes per compaction that the degradation curve recommends for a workload's reads per write, checked "
            "by running the cycle at that cadence and its neighbours (scenarios/test_compaction_cadence.py): each "
            "one's measured cost per write beside the curve's, and the verdict.",
            "No reference run checked a compaction cadence yet.", _compaction),
    Finding("writers", "7. Several writers",
            "Writers racing on one table with its table service beside them (docs/several-writers.md): what committed "
            "and what failed against the number of writers, and the seeds' four claims decided on the causes of the "
            "failures.", "No reference run raced several writers yet.", _several),
]


def _groups(pairs: list, out: Path) -> list[Group]:
    """The reference runs merged per machine, storage, scale and layout (never across any), the seeds' size first."""
    gathered: dict[tuple[str, str, str, str], list] = {}
    for entry, run in pairs:
        machine, storage, shape = group_of(entry, run)
        gathered.setdefault((machine, storage, run.scale, shape), []).append((entry, run))
    return [Group(f"scale <code>{html.escape(scale)}</code> ({html.escape(shape)}), {html.escape(machine)}, "
                  f"{html.escape(storage)}", _slug(f"{scale}-{shape}-{machine}{_off_disk(storage)}"), members,
                  load.merge([r for _, r in members]), out)
            for (machine, storage, scale, shape), members in sorted(gathered.items(), key=lambda g: g[0][2] != SEED_SCALE)]


def build_findings(folder: Path = REFERENCE_DIR, out: Path = Path("reports/findings"),
                   progress: Callable[[str], None] = lambda line: None) -> Path:
    """Write the findings page, then one report per (machine, storage, scale, layout) group; return the page.
    ``progress`` hears when the page is ready and each linked report as it is built: the answer need not wait for
    the reports."""
    out.mkdir(parents=True, exist_ok=True)
    pairs = runs(folder)
    groups = _groups(pairs, out)
    parts = {f.id: [f"<h3>{g.where}</h3>{drawn}" for g in groups if (drawn := f.draw(g))] if f.draw else []
             for f in FINDINGS}
    parts["storage"] = _on_each_storage(folder, out)
    reports = [([folder / e.run_id for e, _ in g.members], out / g.name) for g in groups]  # built after the page
    links = [f'<li><a href="{g.name}/index.html">{g.where}</a>: the full report of runs {_ids(g.members)}</li>'
             for g in groups]
    layouts: dict[tuple[tuple[str, str], str], list] = {}  # ((machine, storage), scale) -> its layouts' members
    for g in groups:
        machine, storage, _ = group_of(*g.members[0])
        layouts.setdefault(((machine, storage), g.run.scale), []).append(g.members)
    links += _every_layout(layouts, folder, out, reports)
    parts["claims"] += _model_at_the_seeds_size(layouts)
    sections = "".join(f"<section id={f.id}><h2>{html.escape(f.heading, quote=False)}</h2>" + (f"<p>{html.escape(f.intro, quote=False)}</p>" if f.intro else "")
                       + ("".join(parts[f.id]) or note(f.empty)) + "</section>" for f in FINDINGS)
    page = (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>cowmor — findings</title>"
            f"<meta name=viewport content='width=device-width, initial-scale=1'><style>{CSS}</style></head><body>"
            "<header><h1>cowmor: what the reference runs found</h1>"
            f"<p>{len(pairs)} reference runs · generated {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC from "
            "results/reference/ (no JVM needed)</p></header><main>" + sections
            + "<section id=runs><h2>8. The reference runs</h2>" + _manifest(pairs, folder)
            + "<ul>" + "".join(links) + "</ul>" + _grids(folder, out) + "</section></main></body></html>")
    (out / "index.html").write_text(page)
    progress(f"page: {out / 'index.html'}; now the {len(reports)} full reports it links")
    for number, (run_folders, into) in enumerate(reports, 1):
        build_report(run_folders, into)
        progress(f"report {number}/{len(reports)}: {into / 'index.html'}")
    return out / "index.html"


def _grids(folder: Path, out: Path) -> str:
    """Every figure's whole grid as a CSV beside the page (the docs show what fits in a page), and their links."""
    written = []
    for name in [*FIGURES, *ACROSS]:
        text = grid_csv(name, folder)
        if text is not None:
            (out / f"{name}.csv").write_text(text)
            written.append(f'<a href="{name}.csv">{name}.csv</a>')
    return f"<p>Every figure's whole grid, one CSV each: {', '.join(written)}.</p>" if written else ""


def _on_each_storage(folder: Path, out: Path) -> list[str]:
    """Per machine and table, the hotfix on each storage it was measured on: a chart of the ratio per route, a bar per
    storage; the ratios' table; each configuration's update time and requests."""
    parts = []
    for where, entries, columns in across_groups("storage", backing("hotfix-storage", folder)):
        name = _slug(f"storage-{where}")
        frame = pd.DataFrame([row for label, run in columns for row in ratio_points(scenario_ratios(run, HOTFIX), storage=label)])
        drawn = "".join(img(charts.ratio_bars(part, f"Copy-on-write ÷ merge-on-read on each storage ({route})", hue="storage"),
                            f"copy-on-write ÷ merge-on-read on each storage, {route}", out, f"{name}-{route}")
                        for route, part in frame.groupby("route", sort=False)) if not frame.empty else ""
        parts.append(f"<h3>{html.escape(where)}</h3><p>Runs {_run_ids(entries)}.</p>" + drawn + table(hotfix_layouts(columns)) + table(updates_by_storage(columns)))
    return parts


def _off_disk(storage: str) -> str:
    """A file name's part for the storage: none on local disk (the names runs on disk always had)."""
    return "" if storage == LOCAL_DISK else f"-{storage}"


def _ids(members: list, *scenarios: str) -> str:
    """The runs of a group a section draws: those with records of its scenarios (every run where none is named)."""
    return _run_ids([e for e, run in members
                     if not scenarios or any(run.records(s, route=None) for s in scenarios)])


def _run_ids(entries: list) -> str:
    return ", ".join(f"<code>{html.escape(e.run_id)}</code>" for e in entries)


def _every_layout(layouts: dict[tuple[tuple[str, str], str], list], folder: Path, out: Path,
                  reports: list[tuple[list[Path], Path]]) -> list[str]:
    """One full report per machine and scale over all its layouts: the cost model can then tell an update's price per
    partition touched from its price per file (one layout's files all sit in its one number of partitions per day)."""
    links = []
    for ((machine, storage), scale), shapes in layouts.items():
        if len(shapes) < 2:
            continue
        members = [m for shape in shapes for m in shape]
        name = _slug(f"{scale}-every-layout-{machine}{_off_disk(storage)}")
        reports.append(([folder / e.run_id for e, _ in members], out / name))
        links.append(f'<li><a href="{name}/index.html">scale <code>{html.escape(scale)}</code>, its {len(shapes)} '
                     f"layouts together, {html.escape(machine)}, {html.escape(storage)}</a>: the full report of runs "
                     f"{_ids(members)}, whose cost "
                     "model prices the partitions an update touches beside its files</li>")
    return links


def _model_at_the_seeds_size(layouts: dict[tuple[tuple[str, str], str], list]) -> list[str]:
    """Per machine and storage, the cost model fitted on its runs at `small` (every layout) predicting its updates
    measured on the seeds' table: a model checked against measurements it did not see."""
    def updating(machine: tuple[str, str], scale: str, scenarios: tuple[str, ...]) -> list:
        return [m for shape in layouts.get((machine, scale), []) for m in shape
                if any(m[1].records(s, "update", route=None) for s in scenarios)]

    out = []
    for machine in dict.fromkeys(m for m, _ in layouts):
        small, seed = updating(machine, "small", (FILE_SIZE, HOTFIX)), updating(machine, SEED_SCALE, (HOTFIX,))
        if not small or not seed:
            continue
        checked = model_against_unseen(load.merge([r for _, r in small]), load.merge([r for _, r in seed]))
        if checked.empty:
            continue
        out.append(f"<h3>The cost model at the seeds' size, {html.escape(', '.join(machine))}</h3><p>Fitted on runs {_ids(small)} "
                   f"(scale <code>small</code>), predicting each update of runs {_ids(seed)} on the seeds' table, which "
                   "the fit never saw: the interval is for one new measurement.</p>" + table(checked))
    return out


def _writers(races: pd.DataFrame, out: Path, name: str) -> str:
    """The share of batches committed and the failed attempts per batch against the writers, a column per overlap, a
    line per configuration and control (and set-up, where the runs raced more than one), a point whose invariants
    broke marked (its batches committed, yet the table lost or doubled some)."""
    points = races.assign(setting=races.configuration + " " + races.control,
                          broken=(races.invariants != "hold").astype(int)).rename(
        columns={"failed": "batches failed", "conflicts": "failed"}).groupby(
        ["setting", "set-up", "overlap", "writers"], as_index=False)[["committed", "failed", "batches", "broken"]].sum()
    points = points.sort_values("overlap", key=lambda o: o.map(writers.overlap_rank), kind="stable")
    if points.writers.nunique() < 2:
        return ""
    controls = races.groupby("set-up")[writers.CONTROL].all()  # the set-ups a control, drawn after the others
    order = sorted(controls.index, key=lambda u: (bool(controls[u]), u))
    return img(charts.attempts_against_writers(points, "Several writers: what committed and what failed against writers",
                                               order),
               "committed batches and failed attempts against writers", out, f"writers-{name}")


def _measured(run: load.Run) -> str:
    """``2,493 s, 75% measured``: the run's wall and the share of it inside timed regions (its time_breakdown.json)."""
    spent = run.time_breakdown
    return f"{spent.wall_s:,.0f} s, {spent.measured_share:.0%} measured" if spent and spent.wall_s else "not recorded"


def _manifest(pairs: list, folder: Path) -> str:
    """Every reference run: what made it, where, what it backs, and how much of its wall was measurement."""
    rows = [{"run id": e.run_id, "command": e.command, "commit": (e.commit or "?")[:10], "machine": e.machine_label,
             "storage": e.storage, "scale": e.scale, "backs": ", ".join(e.backs),
             "wall, measured": _measured(run),
             "size": f"{sum(p.stat().st_size for p in (folder / e.run_id).iterdir()) / 2**20:.1f} MB"}
            for e, run in pairs]
    return table(pd.DataFrame(rows)) if rows else note("The reference set is empty.")

