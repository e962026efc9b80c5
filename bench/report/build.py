"""Build the HTML report: recorded runs -> one self-contained page (charts embedded) + a CSV of the data."""


from __future__ import annotations

import datetime as dt
import html
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bench.exceptions import BadRecord
from bench.report import cadence, confidence, workloads
from bench.report import claims as claims_mod
from bench.report import locate as locate_mod
from bench.report.costmodel import SEED_PROFILES, Costs, Profile, costs_of, parse_profile
from bench.report.html_parts import note as _note
from bench.report.html_parts import table as _table
from bench.report.model import UserTable
from bench.report.sections import choice, concurrency, growth, replica, writers
from bench.report.sections import engines as engine_view
from bench.report.sections import locate as locate_view
from bench.report.sections.break_even import recommendations, section_break_even
from bench.report.sections.file_size import section_file_size
from bench.report.sections.memory import section_memory
from bench.report.sections.money import parse_prices, section_money
from bench.report.sections.over_time import degradation_rates, read_optimized_staleness, section_over_time
from bench.report.sections.read import section_read, section_settlements
from bench.report.sections.runs import section_compare, section_trend
from bench.report.sections.storage import section_storage
from bench.report.sections.summary import section_environment, section_summary, verdicts
from bench.report.sections.write import section_sweep, section_write
from bench.results import load
from bench.results.contract import HOTFIX, REFERENCE_ENGINE, check_run_id

CSS = (Path(__file__).with_name("report.css")).read_text()


def build_report(paths: list[Path], out: Path | None = None, profiles: list[str] | None = None,
                 tables: list[UserTable] | None = None, prices: str | None = None) -> Path:
    """Read the runs and write ``<out>/index.html``, ``<out>/charts/*.png`` and ``<out>/results.csv``, whole or not
    at all: the report is rendered into a temporary sibling folder and moved into place, so a write cut short or
    a failed re-report never leaves a half page nor an old page beside new charts.

    Raises:
        BadRecord: unreadable input, runs with no results at all, or an output path that is not a folder.
    """
    runs = [load.load_run(p) for p in paths]
    extra = [parse_profile(p) for p in profiles or []]
    price_sheet = parse_prices(prices)
    run = load.merge(runs)
    if not run.benchmarks and not run.outcomes:
        raise BadRecord(f"{run.path}: the run has no results (no benchmark and no recorded outcome)")
    out = Path(out) if out else Path("reports") / check_run_id(run.run_id)
    if out.exists() and not out.is_dir():
        raise BadRecord(f"{out}: the report's output is not a folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        _render(runs, run, extra, staging, tables or [], price_sheet)
        os.chmod(staging, 0o755)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
            os.replace(out, old / "report")
            os.replace(staging, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out / "index.html"


@dataclass(frozen=True)
class Aggregate:
    """Everything the page shows, computed once from the runs: the sections only render it."""

    runs: list[load.Run]
    run: load.Run
    ops: pd.DataFrame
    all_reads: pd.DataFrame
    reads: pd.DataFrame  # Spark's (the reference engine's) reads of supported configurations
    costs: dict[str, Costs]
    samples: dict[str, confidence.CostSamples]
    recs: pd.DataFrame
    claims: pd.DataFrame
    located: list[locate_mod.Located]
    verdicts: pd.DataFrame
    csv: pd.DataFrame
    profiles: list[Profile]
    tables: list[UserTable]
    prices: dict[str, float]
    out: Path

    @property
    def workloads(self) -> list[tuple[str, float]]:
        """Reads per write of every workload the page prices: the seeds' profiles, the user's, the user's tables."""
        return ([(p.name, p.reads_per_write) for p in self.profiles]
                + [(t.name, t.reads_per_day / max(t.updates_per_day, 1e-9)) for t in self.tables])


def aggregate(runs: list[load.Run], run: load.Run, extra: list, out: Path, tables: list[UserTable],
              prices: dict[str, float]) -> Aggregate:
    ops, all_reads = load.operations(run), load.reads(run)
    reads = all_reads[(all_reads.engine == REFERENCE_ENGINE) & all_reads.unsupported.isna()]
    costs = costs_of(ops, reads) if not ops.empty else {}
    rates = degradation_rates(run)
    samples = confidence.samples_of(run, reads)
    profiles = [*SEED_PROFILES, *extra]
    recs = recommendations(samples, profiles, run.matrix, run) if costs else pd.DataFrame()
    claims = pd.DataFrame([vars(c) for c in claims_mod.check(ops, costs, rates, read_optimized_staleness(run), samples, run.matrix,
                                                             workloads.samples(run))]
                          + concurrency.claims(run) + writers.claims(run))
    verdict_rows = pd.DataFrame(verdicts(run, ops, costs)) if not ops.empty else pd.DataFrame()
    parts = [frame for frame in (ops.assign(kind="operation"), all_reads.assign(kind="read")) if not frame.empty]
    csv = pd.concat(parts, ignore_index=True) if not ops.empty else ops
    return Aggregate(runs, run, ops, all_reads, reads, costs, samples, recs, claims, locate_mod.located(run),
                     verdict_rows, csv, profiles, tables, prices, out)


def _write(a: Aggregate) -> str:
    if a.ops.empty:
        return _note("nothing measured")
    return (section_write(a.run, a.ops[a.ops.scenario == HOTFIX], a.out) + section_file_size(a.run, a.out, a.tables)
            + section_sweep(a.run, a.ops, a.out) + growth.section_growth(a.run, a.out))


def _raw(a: Aggregate) -> str:
    return (f'<p><a href="results.csv" download>results.csv</a> — every measured operation and read, flattened '
            f'({len(a.csv)} rows). Source: {html.escape(", ".join(str(r.path) for r in a.runs))}</p>')


@dataclass(frozen=True)
class Section:
    """One section of the page: its anchor, its title and what renders it (empty: the section is left out)."""

    id: str
    title: str
    render: Callable[[Aggregate], str]


SECTIONS = (
    Section("summary", "Summary", lambda a: section_summary(a.runs, a.run, a.verdicts, a.recs)),
    Section("choice", "The choice for a workload", lambda a: choice.section(a.run, a.out, tables=a.tables)),
    Section("write", "Write cost", _write),
    Section("locate", "Finding the rows",  # updates that recorded how they found their rows (older runs have none)
            lambda a: locate_view.section(a.located, locate_mod.ratios(a.located, a.run.matrix)) if a.located else ""),
    Section("storage", "Storage: local disk and object store", lambda a: section_storage(a.runs, a.out) or ""),
    Section("memory", "Memory", lambda a: section_memory(a.run, a.out)),
    Section("read", "Read cost", lambda a: section_read(a.reads[a.reads.operation.isin(["update", "compaction"])], a.out)
            + section_settlements(a.run)),
    Section("engines", "Engines", lambda a: engine_view.section_engines(a.run, a.ops, a.all_reads, a.profiles, a.out)),
    Section("time", "Over time", lambda a: section_over_time(a.run, a.out) + cadence.section(a.run, a.workloads, a.out)
            + concurrency.section(a.run) + writers.section(a.run, a.out)),
    Section("breakeven", "Break-even and recommendation", lambda a: section_break_even(a.costs, a.samples, a.profiles, a.out, a.run.matrix, a.recs) + section_money(
        a.ops, a.reads, a.profiles, a.prices, int((a.run.env.machine.cpus if a.run.env.machine else None) or 1))),
    Section("replica", "Your table, from its replicas", lambda a: replica.section(a.runs)),
    Section("claims", "Claims check", lambda a: _table(a.claims)),
    Section("environment", "Environment and provenance", lambda a: section_environment(a.run)),
    Section("raw", "Raw data", _raw),
    Section("compare", "Comparing runs", lambda a: section_compare(a.runs) or ""),
    Section("trend", "Trend over runs", lambda a: section_trend(a.runs, a.out) if len(a.runs) >= 3 else ""),
)


def _render(runs: list[load.Run], run: load.Run, extra: list, out: Path, tables: list[UserTable],
            prices: dict[str, float]) -> None:
    if len({r.scale for r in runs}) > 1:
        warnings.warn(f"comparing runs at different scales: {', '.join(r.scale for r in runs)}", stacklevel=2)
    a = aggregate(runs, run, extra, out, tables, prices)
    a.csv.to_csv(out / "results.csv", index=False)
    rendered = [(s.id, s.title, s.render(a)) for s in SECTIONS]
    sections = [(sid, f"{number}. {title}", content)
                for number, (sid, title, content) in enumerate([x for x in rendered if x[2]], 1)]
    nav = "".join(f'<a href="#{sid}">{html.escape(title)}</a>' for sid, title, _ in sections)
    body = "".join(f'<section id="{sid}"><h2>{html.escape(title)}</h2>{content}</section>' for sid, title, content in sections)
    partial = (f'<p class="warn">Partial run ({html.escape(run.why_partial)}): this report shows what it kept '
               "(its outcomes and whatever was recorded).</p>") if run.partial else ""
    page = (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>cowmor — {html.escape(run.run_id)}</title>"
            f"<meta name=viewport content='width=device-width, initial-scale=1'><style>{CSS}</style></head><body>"
            f"<header><h1>cowmor: copy-on-write vs merge-on-read vs deletion vectors</h1>"
            f"<p>{html.escape(run.run_id)} · scale {html.escape(run.scale)} · generated {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC</p>"
            f"{partial}<nav>{nav}</nav></header><main>{body}</main></body></html>")
    (out / "index.html").write_text(page)
