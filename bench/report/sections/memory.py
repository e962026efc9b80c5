"""Memory: each update's peak memory per configuration and route, against file size, and the memory each needs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bench.report import charts
from bench.report.html_parts import img
from bench.report.html_parts import note as _note
from bench.report.html_parts import table as _table
from bench.report.summary import human_bytes
from bench.results import load
from bench.results.contract import Record, Run

HOTFIX, FILE_SIZE, NEEDED = "payments_hotfix", "file_size", "memory_needed"
COLUMNS = {"executor_heap_peak_bytes": "executors' heap", "execution_memory_peak_bytes": "execution memory",
           "driver_heap_peak_bytes": "driver heap (pools)", "jvm_rss_peak_bytes": "driver JVM resident",
           "python_rss_peak_bytes": "Python resident"}
GB = 2**30


def section_memory(run: Run, out: Path) -> str:
    frame = load.memory(run)
    needed = run.records(NEEDED, route=None)
    if frame.empty and not needed:
        return _note("No operation recorded its peak memory (runs recorded before memory was measured).")
    parts = ["<p>Peak memory over each operation, the largest of its rounds: the executors' heap and the execution "
             "memory Spark's memory manager handed out over the stages the operation ran (Spark's own executor "
             "metrics; in local mode the driver is the executor), the driver's heap pools (an upper bound: each "
             "pool's own peak, summed), the driver JVM's resident memory and this harness's own Python process "
             "(DuckDB and hudi-rs read inside it). A garbage-collected heap fills before it is collected: a peak "
             "says how full it got, the search below how much the update needs.</p>"]
    updates = frame[(frame.scenario == HOTFIX) & (frame.operation == "update")]
    if not updates.empty:
        parts.append("<h3>The payments hotfix update</h3>" + _table(_figures(updates, ["config_id", "route"])))
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
                     "that memory; a failure is named with the JVM's own words.</p>" + _table(_needed(needed)))
    return "".join(parts)


def _figures(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    rows = []
    for _, r in frame.sort_values(keys).iterrows():
        row = {"configuration": r.config_id, "route": r.route}
        if "param" in keys:
            row["file size"] = r.param
        row["update median s"] = f"{r.median_s:.2f}" if pd.notna(r.median_s) else "–"
        rows.append(row | {label: human_bytes(r[field]) for field, label in COLUMNS.items()})
    return pd.DataFrame(rows)


def _needed(records: list[Record]) -> pd.DataFrame:
    rows = []
    for r in sorted(records, key=lambda r: (r.get("table", ""), r.config_id, r.route)):
        attempts = r.get("attempts") or []
        at_needed: dict = next((a for a in attempts if a.get("completed") and a.get("driver_memory_mb") == r.get("needed_mb")), {})
        failed = [a for a in attempts if not a.get("completed")]
        top = (r.get("ladder_mb") or [None])[-1]
        rows.append({"table": r.get("table"), "configuration": r.config_id, "route": r.route,
                     "files": f"{r.get('files_total', 0):,} × {human_bytes(r.get('file_bytes_mean'))}",
                     "needs": (f"{r['needed_mb']:,} MB" + (" (the least tried)" if r["needed_mb"] == (r.get("ladder_mb") or [0])[0]
                                                          else "")) if r.get("needed_mb") else f"more than {top:,} MB",
                     "largest that failed": f"{r['largest_failed_mb']:,} MB" if r.get("largest_failed_mb") else "–",
                     "update s at that memory": f"{at_needed['seconds']:.2f}" if at_needed.get("seconds") else "–",
                     "attempts (for memory / other failures)": f"{len(attempts)} ({r.get('failed_for_memory', 0)} / "
                                                                f"{r.get('failed_otherwise', 0)})",
                     "why the largest failed": max(failed, key=lambda a: a.get("driver_memory_mb", 0)).get("reason", "")
                     if failed else "–"})
    return pd.DataFrame(rows)
