"""The figures the project states, drawn from its reference runs: each a Markdown table named in the manifest's
``backs``, written into README.md and docs/ between markers by ``cowmor docs`` (which ``--check`` compares instead).

A marker pair ``<!-- figure:NAME -->`` … ``<!-- /figure:NAME -->`` holds the generated table; everything between is
rewritten. Each table names its runs by run id and machine; runs of different machines get tables of their own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from bench.core.units import human_bytes
from bench.report import cadence
from bench.report import locate as locate_mod
from bench.report.sections.memory import COLUMNS, figures_table, needed_table
from bench.results import load
from bench.results.contract import HOTFIX, MEMORY_NEEDED, Run
from bench.results.reference import REFERENCE_DIR, Entry, backing
from bench.results.schema import HotfixUpdate

MARKER = re.compile(r"(<!-- figure:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /figure:(?P=name) -->)", re.DOTALL)
ROUTES = ("join", "pruned", "index")
SEED_SCALE = "seed"


def _markdown(frame: pd.DataFrame) -> str:
    head = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *rows])


def _source(entries: list[Entry]) -> str:
    return "; ".join(f"run `{e.run_id}` (`{e.command}`), {e.machine_label}, {e.storage}" for e in entries)


def layout(run: Run) -> str:
    """The payments table a run measured (``90 days x 4 files x 5,000 rows, 120 changed``): runs of one scale on
    other layouts (``--param``) are other answers, never merged with it."""
    scale = run.env.scale
    if scale is None or scale.days is None or scale.files_per_day is None or scale.rows_per_file is None:
        return "layout not recorded"
    return (f"{scale.days} days x {scale.files_per_day} files x {scale.rows_per_file:,} rows, "
            f"{scale.hotfix_rows or 0:,} changed")


def _by_machine(figure: str, folder: Path) -> list[tuple[list[Entry], Run]]:
    """The runs backing ``figure``, merged per machine and table layout (never across either), the seeds' size first."""
    groups: dict[tuple[str, str], list[tuple[Entry, Run]]] = {}
    for entry, run in backing(figure, folder):
        groups.setdefault((entry.machine_label, layout(run)), []).append((entry, run))
    merged = [([e for e, _ in group], load.merge([r for _, r in group])) for group in groups.values()]
    return sorted(merged, key=lambda g: g[1].scale != SEED_SCALE)  # the seeds' own size first: the question's table


def hotfix_routes(run: Run) -> pd.DataFrame:
    """Copy-on-write ÷ merge-on-read (and ÷ deletion vectors) per family and route, with the 95% interval."""
    items = [x for x in locate_mod.located(run) if x.scenario == HOTFIX]
    ratios = locate_mod.ratios(items, run.matrix)
    rows = [{"pair": f"{r.cow} ÷ {r.mor}", "route": r.route,
             "update time ratio [95% CI]": f"{r.ratio:.2f}x" + (f" [{r.low:.2f}–{r.high:.2f}]" if r.low is not None else ""),
             "verdict": r.verdict}
            for r in sorted(ratios, key=lambda r: (r.cow, r.mor, ROUTES.index(r.route) if r.route in ROUTES else 9))]
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
SEED_CLAIMS = {False: ("rewrites ~6 GB in ~8 minutes", 8 * 60.0), True: ("writes ~4 MB in ~12 seconds", 12.0)}


def seed_claim_points(run: Run) -> pd.DataFrame:
    """Each hotfix update measured at the seeds' own size beside the seeds' claim for its kind, as numbers: the
    median and its 95% interval, the claim's seconds, what it wrote (every kind of file), the data files it replaced."""
    rows = []
    for r in sorted(run.records(HOTFIX, "update", route=None) if run.scale == SEED_SCALE else [],
                    key=lambda r: (r.config_id, r.route)):
        update, spread = r.view(HotfixUpdate), r.spread
        merges = run.matrix.merges_on_read(r.config_id)
        claim, claimed_s = SEED_CLAIMS[merges]
        low, high = spread.ci95 or (None, None)
        rows.append({"label": f"{r.config_id}\n({r.route})", "config_id": r.config_id, "route": r.route, "merges": merges,
                     "claim": claim, "claimed": claimed_s, "median": spread.median, "low": low, "high": high,
                     "written": update.filesystem.bytes_added, "files_written": update.filesystem.files_added,
                     "replaced": update.metadata.data_files_removed,
                     "rows": f"{update.rows_changed_verified:,} of {update.rows_targeted:,}"})
    return pd.DataFrame(rows)


def seed_claims(run: Run) -> pd.DataFrame:
    """``seed_claim_points`` as the page's table: the time with its interval and as a multiple of the claim's."""
    return pd.DataFrame([{
        "configuration": p.config_id, "route": p.route, "the seeds' claim": p.claim,
        "measured update s [95% CI]": "–" if pd.isna(p.median) else f"{p.median:.1f}" + (
            f" [{p.low:.1f}, {p.high:.1f}]" if pd.notna(p.low) else " (one round: no interval)"),
        "÷ the claim's time": "–" if pd.isna(p.median) else f"{p.median / p.claimed:.2f}x",
        "written": human_bytes(p.written), "files written": p.files_written, "data files replaced": p.replaced,
        "rows changed (checked)": p.rows} for p in seed_claim_points(run).itertuples()])


def cadence_checked(run: Run) -> pd.DataFrame:
    return cadence.checked_table(cadence.checks(run))


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


FIGURES: dict[str, tuple[str, Callable[[Run], pd.DataFrame | str]]] = {
    "summary-excerpt": ("What `make bench` prints: the payments hotfix, three of the configurations", summary_excerpt),
    "hotfix-routes": ("The payments hotfix: copy-on-write ÷ merge-on-read update time per locate route", hotfix_routes),
    "hotfix-memory": ("The payments hotfix: peak memory of the update per configuration and route", hotfix_memory),
    "memory-needed": ("The smallest driver memory with which the update completed", memory_needed),
    "cadence-checked": ("How often to compact, checked: the cost per write measured at the recommended cadence and its "
                        "neighbours, beside the degradation curve's", cadence_checked),
    "memory-many-files-per-task": ("Deletion vectors against position deletes on an update that touches many files per task "
                                   "(the shape of apache/iceberg #17209): the smallest driver memory that completed it",
                                   memory_needed),
}


def render(name: str, folder: Path = REFERENCE_DIR) -> str:
    """The Markdown of figure ``name``: one table per machine, each with the runs it comes from.

    Raises:
        KeyError: no such figure.
    """
    title, make = FIGURES[name]
    groups = _by_machine(name, folder)
    if not groups:
        return f"*{title}: no reference run backs this figure yet.*\n"
    parts = []
    for entries, run in groups:
        made = make(run)
        if isinstance(made, str):
            table = f"```\n{made}\n```" if made else "*(the runs hold no such record)*"
        else:
            table = _markdown(made) if not made.empty else "*(the runs hold no such record)*"
        parts.append(f"*{title}, scale `{run.scale}` ({layout(run)}). From {_source(entries)}.*\n\n{table}\n")
    return "\n".join(parts)


def rewrite(text: str, folder: Path = REFERENCE_DIR) -> str:
    """``text`` with every figure block regenerated."""
    return MARKER.sub(lambda m: m.group(1) + render(m.group("name"), folder) + m.group(4), text)


def drift(paths: list[Path], folder: Path = REFERENCE_DIR) -> list[str]:
    """The files whose figure blocks differ from what the reference set gives (one line each)."""
    out = []
    for path in paths:
        text = path.read_text()
        for m in MARKER.finditer(text):
            if m.group("name") not in FIGURES:
                out.append(f"{path}: unknown figure {m.group('name')!r}")
            elif m.group("body") != render(m.group("name"), folder):
                out.append(f"{path}: figure {m.group('name')} differs from the reference runs (run `make docs`)")
    return out
