"""The engine dimension of the report: who can read what, read latency per engine, and whether the
recommendation depends on the engine that reads the table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bench.report import charts, confidence
from bench.report.costmodel import Profile
from bench.report.html_parts import img, note, table
from bench.results import load
from bench.results.contract import HOTFIX
from bench.results.schema import SKIPPED

K_DEFAULT = 10  # writes per compaction for the break-even table, as in the main break-even section


def support_matrix(run: load.Run, reads: pd.DataFrame) -> pd.DataFrame:
    """Configuration x engine: ``reads`` or why not (an engine's own error, or why the engine did not run)."""
    engines = load.engines(run)
    configs = sorted(set(reads.config_id.dropna())) if not reads.empty else []
    rows = []
    for config_id in configs:
        row = {"configuration": config_id}
        for name, record in engines.items():
            if record.status == SKIPPED:
                row[name] = f"not run: {record.reason}"
                continue
            mine = reads[(reads.config_id == config_id) & (reads.engine == name)]
            if mine.empty:
                row[name] = "–"
                continue
            per_mode = []
            for mode, group in mine.groupby("mode"):
                why = group.unsupported.dropna()
                per_mode.append(f"{mode}: " + (f"unsupported by {record.version or name}: {why.iloc[0]}"
                                               if not why.empty else "reads"))
            row[name] = "; ".join(per_mode)
        rows.append(row)
    return pd.DataFrame(rows)


def latency_per_engine(reads: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and engine: the mean of the query medians before and after the hotfix, and after
    compaction, with the per-query overhead the update left behind."""
    ok = reads[reads.unsupported.isna() & (reads.scenario == HOTFIX)]
    if ok.empty:
        return pd.DataFrame()
    table_ = ok.pivot_table(index=["config_id", "engine"], columns="phase", values="median_s", aggfunc="mean").reset_index()
    if {"before", "after"} <= set(table_.columns):
        table_["overhead"] = table_["after"] - table_["before"]
    return table_


def verdicts_per_engine(run: load.Run, reads: pd.DataFrame, profiles: list[Profile]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Break-even per CoW/MoR pair (with its 95% interval) and the verdict per workload, once per engine (W and C
    are Spark's: the engine only reads), each from the same resampling as the main recommendation."""
    pairs, recs = [], []
    for engine, group in reads[reads.unsupported.isna()].groupby("engine", sort=False):
        samples = confidence.samples_of(run, group)
        pair_ids = run.matrix.cow_mor_pairs(samples)
        verdicts, breaks, _ = confidence.simulate(samples, profiles, pair_ids, K_DEFAULT)
        for b in breaks:
            pairs.append({"pair": f"{b.pair[0]} vs {b.pair[1]}", "engine": engine,
                          "break-even reads per write": f"{b.point:,.1f}" if b.point else "none",
                          "95% interval": b.interval_text()})
        recs += [{"workload": v.workload, "engine": engine, "recommended": v.text()} for v in verdicts if v.shares]
    return pd.DataFrame(pairs), pd.DataFrame(recs)


def differences(recs: pd.DataFrame) -> list[str]:
    """A plain sentence for each workload whose recommendation changes with the engine."""
    out: list[str] = []
    if recs.empty:
        return out
    for workload, group in recs.groupby("workload", sort=False):
        if group.recommended.nunique() > 1:
            said = ", ".join(f"{r.recommended} when {r.engine} reads" for r in group.itertuples())
            out.append(f"For '{workload}' the engine changes the verdict: {said}.")
    return out


def section_engines(run: load.Run, ops: pd.DataFrame, reads: pd.DataFrame, profiles: list[Profile], out: Path) -> str:
    engines = load.engines(run)
    versions = ", ".join(f"{name}: {r.version or r.status}" for name, r in engines.items())
    parts = ["<h3>Who reads what</h3>", table(support_matrix(run, reads)),
             note(f"Engines: {versions}. Every answer of every engine was checked against pandas; an engine that "
                  "cannot read a configuration is listed with its own error, never counted as a result.")]
    latency = latency_per_engine(reads)
    if not latency.empty and "after" in latency:
        chart = charts.grouped_bars(latency, "config_id", "after", "engine",
                                    "Dashboard read after the hotfix, per engine (mean of query medians)", "seconds")
        shown = latency.copy()
        for col in ("before", "after", "after_compaction"):
            if col in shown:
                shown[col] = shown[col].map(lambda v: f"{v:.3f}" if pd.notna(v) else "–")
        if "overhead" in shown:
            shown["overhead"] = shown["overhead"].map(lambda v: f"{v * 1000:+.0f} ms" if pd.notna(v) else "–")
        parts += ["<h3>Read latency per engine</h3>", img(chart, "read latency per engine", out, "read_latency_engines"),
                  table(shown)]
    if len(set(reads.engine)) > 1 and not ops.empty:
        pairs, recs = verdicts_per_engine(run, reads, profiles)
        said = differences(recs)
        parts += ["<h3>Break-even and recommendation per engine</h3>"]
        if not pairs.empty:
            parts.append(table(pairs))
        if not recs.empty:
            wide = recs.pivot_table(index="workload", columns="engine", values="recommended", aggfunc="first").reset_index()
            parts.append(table(wide))
        parts.append(note(" ".join(said) if said else
                          "The engine does not change any recommendation at this scale: every engine's read costs rank "
                          "the configurations the same way for every workload profile."))
    return "".join(parts)
