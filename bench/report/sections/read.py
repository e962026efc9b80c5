"""The read-cost section: dashboard latency before and after changes and compaction; the settlements."""


from __future__ import annotations

from pathlib import Path

import pandas as pd

from bench.core.units import human_bytes
from bench.report import charts
from bench.report.html_parts import img as _img
from bench.report.html_parts import note as _note
from bench.report.html_parts import table as _table
from bench.results import load
from bench.results.contract import SETTLEMENTS
from bench.results.schema import SettlementsSequence


def section_read(reads: pd.DataFrame, out: Path) -> str:
    if reads.empty:
        return _note("no dashboard reads before and after a payments hotfix update in this run")
    per_phase = reads.groupby(["config_id", "phase"], as_index=False).median_s.mean()
    order = {"before": 0, "after": 1, "after_compaction": 2}
    per_phase = per_phase.sort_values(["config_id", "phase"], key=lambda s: s.map(order) if s.name == "phase" else s)
    chart = charts.grouped_bars(per_phase, "config_id", "median_s", "phase",
                                "Dashboard read latency (mean of query medians)", "seconds")
    pivot = reads.pivot_table(index=["config_id", "query"], columns="phase", values="median_s", aggfunc="mean").reset_index()
    if {"before", "after"} <= set(pivot.columns):
        pivot["overhead after update"] = (pivot["after"] - pivot["before"]).map(lambda v: f"{v * 1000:+.0f} ms")
    for col in ("before", "after", "after_compaction"):
        if col in pivot:
            pivot[col] = pivot[col].map(lambda v: f"{v:.3f}" if pd.notna(v) else "–")
    return _img(chart, "read latency", out, "read_latency") + _table(pivot) + _note(
        "Each query's latency is the median of its warm repeats (the first, cold read is kept apart), read once per table "
        "state: before the update, after it, after compaction. "
        "All answers were checked against pandas on the generated data.")


def section_settlements(run: load.Run) -> str:
    rows = []
    for r in run.records(SETTLEMENTS):
        x = r.view(SettlementsSequence)
        rows.append({"configuration": r.config_id, "adjustment batches": len(x.writes),
                     "write total s": f"{x.write_total_s:.2f}", "bytes written": human_bytes(x.write_bytes_total),
                     "reads": x.reads.reads, "read total s": f"{x.read_total_s:.2f}",
                     "same reads before any adjustment s": f"{x.read_total_pristine_s:.2f}",
                     "mean per-read overhead": f"{x.mean_read_overhead_s * 1000:+.0f} ms"})
    if not rows:
        return ""
    return "<h3>Monthly settlements: few writes, many reads</h3>" + _table(pd.DataFrame(rows)) + _note(
        "Per-read overhead: mean latency of each dashboard query on the adjusted table minus the same query on the "
        "same table before the month's adjustments (restored from its base, never updated).")
