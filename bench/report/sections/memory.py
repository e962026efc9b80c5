"""Memory: each update's peak memory per configuration and route, against file size, and the memory each needs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from bench.core import uncertainty
from bench.core.units import human_bytes
from bench.report import charts
from bench.report.html_parts import img
from bench.report.html_parts import note as _note
from bench.report.html_parts import table as _table
from bench.results import load
from bench.results.contract import FILE_SIZE, HOTFIX, MEMORY_NEEDED, Record, Run
from bench.results.schema import MemoryAttempt, MemorySearch

COLUMNS = {"executor_heap_peak_bytes": "executors' heap", "execution_memory_peak_bytes": "execution memory",
           "driver_heap_peak_bytes": "driver heap (pools)", "jvm_rss_peak_bytes": "driver JVM resident",
           "python_rss_peak_bytes": "Python resident"}
GB = 2**30


def section_memory(run: Run, out: Path) -> str:
    frame = load.memory(run)
    needed = run.records(MEMORY_NEEDED, route=None)
    if frame.empty and not needed:
        return _note("No operation here records its peak memory in its record: the payments hotfix, the file-size "
                     "steps and the memory search do (the dinner peak keeps each batch's in its series).")
    parts = ["<p>Peak memory over each operation, the largest of its rounds: the executors' heap and the execution "
             "memory Spark's memory manager handed out over the stages the operation ran (Spark's own executor "
             "metrics; in local mode the driver is the executor), the driver's heap pools (an upper bound: each "
             "pool's own peak, summed), the driver JVM's resident memory and this harness's own Python process "
             "(DuckDB and hudi-rs read inside it). A garbage-collected heap fills before it is collected: a peak "
             "says how full it got, the search below how much the update needs.</p>"]
    updates = frame[(frame.scenario == HOTFIX) & (frame.operation == "update")]
    if not updates.empty:
        parts.append("<h3>The payments hotfix update</h3>" + _table(figures_table(updates, ["config_id", "route"])))
        bars = updates.assign(gb=updates.jvm_rss_peak_bytes / GB)
        parts.append(img(charts.grouped_bars(bars, "config_id", "gb", "route", "Driver JVM's peak resident memory "
                                             "during the hotfix update", "GB"), "peak memory per configuration and route",
                         out, "memory_hotfix"))
    steps = frame[(frame.scenario == FILE_SIZE) & frame.file_bytes_mean.notna() & frame.executor_heap_peak_bytes.notna()]
    for route in dict.fromkeys(steps.route):
        points = steps[steps.route == route].assign(mb=lambda f: f.file_bytes_mean / 2**20,
                                                    gb=lambda f: f.executor_heap_peak_bytes / GB)
        parts.append(img(charts.series(points, "mb", "gb", f"Executors' peak heap against file size ({route})",
                                       "MB per file (log)", "GB", logx=True),
                         f"peak heap against file size, route {route}", out, f"memory_file_size_{route}"))
    if needed:
        parts.append("<h3>The memory each configuration needs</h3><p>The smallest driver memory with which the update "
                     "completed, from a bisection over driver memories (each attempt its own application on the base "
                     "table restored; needing memory taken to be monotone). The update's time is the attempt's at "
                     "that memory; a failure is named with the JVM's own words.</p>" + _table(needed_table(needed)))
    return "".join(parts)


def figures_table(frame: pd.DataFrame, keys: list[str], columns: dict[str, str] = COLUMNS) -> pd.DataFrame:
    """One row per configuration and route (and file size where ``keys`` has it): the update's time with its
    interval beside the memory ``columns`` (the page's tables and the docs' figure both)."""
    rows = []
    for _, r in frame.sort_values(keys).iterrows():
        row = {"configuration": r.config_id, "route": r.route}
        if "param" in keys:
            row["file size"] = r.param
        row["update s, median (interval)"] = "–" if pd.isna(r.median_s) else uncertainty.median_text(
            r.median_s, (r.ci_low_s, r.ci_high_s) if pd.notna(r.ci_low_s) else None, int(r.rounds) if pd.notna(r.rounds) else None)
        rows.append(row | {label: human_bytes(r[field]) for field, label in columns.items()})
    return pd.DataFrame(rows)


def needed_table(records: list[Record]) -> pd.DataFrame:
    """One row per configuration, route and table of the memory search: what it needs, the largest memory that
    failed and why, the update's time at the memory it needs, and how full the heap got with the least and the most
    memory that completed (the page's table and the docs' figure both)."""
    rows = []
    for r, s in sorted(((r, r.view(MemorySearch)) for r in records), key=lambda rs: (rs[1].table, rs[0].config_id, rs[0].route)):
        needs = f"{s.needed_mb:,} MB" + (" (the least tried)" if s.needed_mb == s.least_tried_mb else "") \
            if s.needed_mb else f"more than {s.most_tried_mb or 0:,} MB"
        at_needed, failure = s.at_needed, s.largest_failure
        rows.append({"table": f"{s.table} ({s.files_total:,} × {human_bytes(s.file_bytes_mean)})",
                     "configuration": r.config_id, "route": r.route, "needs": needs,
                     "largest that failed": f"{s.largest_failed_mb:,} MB" if s.largest_failed_mb else "–",
                     "update s at that memory": f"{at_needed.seconds:.2f} (one attempt)" if at_needed and at_needed.seconds else "–",
                     "attempts (for memory / other failures)": f"{len(s.attempts)} ({s.failed_for_memory} / {s.failed_otherwise})",
                     **_at_least_and_most(s.attempts),
                     "why the largest failed": (failure.reason or "") if failure else "–"})
    return pd.DataFrame(rows)


def _at_least_and_most(attempts: list[MemoryAttempt]) -> dict[str, str]:
    """The executors' heap and the driver JVM's resident memory in the completed attempts with the least and the most
    driver memory: how full the heap got when it had little, and when it had room."""
    done = sorted((a for a in attempts if a.completed), key=lambda a: a.driver_memory_mb)
    out = {}
    for label, a in (("least", done[0] if done else None), ("most", done[-1] if done else None)):
        m = a.memory if a else None
        out[f"heap / JVM resident at the {label}"] = (f"{human_bytes(m.executor_heap_peak_bytes)} / {human_bytes(m.jvm_rss_peak_bytes)}"
                                                      f" ({a.driver_memory_mb:,} MB)") if a and m else "–"
    return out


def needed_for(table: Any, run: Run) -> list[str]:
    """The memory each configuration needed on the measured table nearest the user's (by file size), on the user's
    route, with how far the user's table lies beyond it; a warning where a need passes the measuring machine's memory.

    No model of memory against size is fitted: two tables per configuration do not make one. Beyond the measured
    tables the line says so and names the search to run on a replica."""
    machine = int((run.env.machine.memory_bytes if run.env.machine else None) or 0)
    lines = []
    by_config: dict[str, list[Record]] = {}
    for r in run.records(MEMORY_NEEDED, route=table.route):
        by_config.setdefault(r.config_id, []).append(r)
    for config_id, records in sorted(by_config.items()):
        searches = [r.view(MemorySearch) for r in records]
        nearest = min(searches, key=lambda s: abs(math.log(max(table.file_mb, 1e-6) * 2**20 / max(s.file_bytes_mean or 1, 1))))
        file_mb, files = (nearest.file_bytes_mean or 0) / 2**20, nearest.files_total or 0
        reach = max(table.file_mb / file_mb if file_mb else math.inf, table.files / files if files else math.inf)
        need = f"{nearest.needed_mb:,} MB" if nearest.needed_mb else f"more than {nearest.most_tried_mb or 0:,} MB"
        where = f"measured on {files:,} files of {file_mb:.3g} MB"
        beyond = (f"; your table is {reach:,.1f}x beyond it: not predicted, measure a replica "
                  f"(scenarios/test_memory_needed.py with --param days=… files_per_day=… rows_per_file=…)") if reach > 1.5 else ""
        lines.append(f"memory {config_id} ({table.route}): needs {need}, {where}{beyond}")
        if machine and nearest.needed_mb and nearest.needed_mb * 2**20 > machine:
            lines.append(f"warning: {config_id} needed more memory than the measuring machine has ({machine / 2**30:.0f} GB)")
        if machine and nearest.more_than_ladder:
            lines.append(f"warning: {config_id} did not complete with the most memory tried; it needs more")
    return lines or [f"memory: no run searched the memory an update needs on the {table.route} route "
                     "(scenarios/test_memory_needed.py)"]
