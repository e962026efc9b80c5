"""Comparing runs and the trend over them."""


from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from bench.report import charts
from bench.report.html_parts import img as _img
from bench.report.html_parts import note as _note
from bench.report.html_parts import table as _table
from bench.results import load
from bench.results.contract import HOTFIX

VERSIONED_PACKAGES = ("pyspark", "pyiceberg")  # beside each family's jars: a change between runs is a changed setting


def section_compare(runs: list[load.Run]) -> str:
    """Each later run against the first, benchmark by benchmark (ratio of medians, with each side's spread)."""
    if len(runs) < 2:
        return ""
    base, *others = runs
    a = load.operations(base).set_index("name")
    parts = []
    for other in others:
        joined = a.join(load.operations(other).set_index("name"), lsuffix="_a", rsuffix="_b", how="inner")
        rows = [{"benchmark": name, "median A s": f"{r.median_s_a:.3f}", "median B s": f"{r.median_s_b:.3f}",
                 "ratio B/A": f"{r.median_s_b / r.median_s_a:.2f}",
                 "spread A (IQR/median)": f"{(r.iqr_s_a or 0) / r.median_s_a:.0%}",
                 "spread B": f"{(r.iqr_s_b or 0) / r.median_s_b:.0%}",
                 "bytes written B/A": f"{r.fs_bytes_added_b / r.fs_bytes_added_a:.2f}"
                 if pd.notna(r.fs_bytes_added_a) and pd.notna(r.fs_bytes_added_b) and r.fs_bytes_added_a else "–"}
                for name, r in joined.iterrows()]
        label = "" if base.scale == other.scale else f' <span class="warn">different scales: {base.scale} vs {other.scale}</span>'
        title = f"<h3>A = {html.escape(base.run_id)} → B = {html.escape(other.run_id)}{label}</h3>"
        parts.append(title + (_table(pd.DataFrame(rows)) if rows else _note("no benchmark in common")))
    return "".join(parts)


def section_trend(runs: list[load.Run], out: Path) -> str:
    """Each benchmark's median over the runs, in the order given; version changes marked."""
    from bench.results.history import rows as history_rows

    frames = [f for f in (history_rows(r) for r in runs) if not f.empty]  # (concat warns on empty frames)
    if not frames:
        return _note("no timings in these runs")
    frame = pd.concat(frames, ignore_index=True)
    frame = frame[frame.metric == "median_s"]
    if frame.empty:
        return _note("no timings in these runs")
    order = {r.run_id: i for i, r in enumerate(runs)}
    frame = frame.assign(run=frame.run_id.map(order))
    versions = [(i, r.run_id, {k: r.env.packages.get(k) for k in VERSIONED_PACKAGES}
                 | {f: v.source for f, v in r.env.formats.items()}) for i, r in enumerate(runs)]
    changes = [(i, ", ".join(f"{k}: {prev.get(k, 'none')} → {cur[k]}" for k in cur if prev.get(k) != cur[k]))
               for (_, _, prev), (i, _, cur) in zip(versions, versions[1:]) if prev != cur]
    main = frame[frame.scenario == HOTFIX] if (frame.scenario == HOTFIX).any() else frame
    main = main.assign(series=main.config_id + " " + main.operation.fillna(""))
    chart = charts.trend(main, changes)
    table = main.pivot_table(index="benchmark", columns="run_id", values="value").round(3)
    table = table[sorted(table.columns, key=lambda run_id: order[run_id])].reset_index()  # the runs' order (time), not the ids' alphabet
    parts = [_img(chart, "trend", out, "trend"), _table(table)]
    parts.append(_note("Version changes between runs: " + ("; ".join(f"before run {i}: {c}" for i, c in changes) if changes else "none")))
    return "".join(parts)
