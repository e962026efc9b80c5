"""Build the HTML report: recorded runs -> one self-contained page (charts embedded) + a CSV of the data."""

from __future__ import annotations

import datetime as dt
import html
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from bench.exceptions import BadOption
from bench.ledger import describe
from bench.report import charts, claims as claims_mod, load
from bench import uncertainty
from bench.engines import PRIMARY
from bench.report import concurrency, confidence, engine_view, growth
from bench.report.costmodel import (SEED_PROFILES, Costs, Profile, cheaper_above, costs_of, cow_mor_pairs,
                                     parse_profile, recommend)
from bench.report.html_parts import img as _img, note as _note, table as _table
from bench.report.summary import human_bytes

CSS = (Path(__file__).with_name("report.css")).read_text()


def _samples(run: load.Run, operation: str) -> pd.DataFrame:
    rows = []
    for b in run.benchmarks:
        x = b.get("extra_info") or {}
        if x.get("operation") == operation and x.get("scenario") == "payments_hotfix":
            rows += [{"config_id": x["config_id"], "seconds": s} for s in (b["stats"].get("data") or [b["stats"]["median"]])]
    return pd.DataFrame(rows)


def _format_facts(formats: dict) -> list[tuple[str, str]]:
    """One row per family: version (artifacts), where its jars came from, and each jar's sha256, so a number from
    a jar built from source can always be told from one made with the Maven artifact."""
    rows = []
    for family, f in formats.items():
        if f.get("status") != "available":
            rows.append((family, f"skipped: {f.get('reason', '')}"))
            continue
        hashes = "; ".join(f"{name} sha256 {digest}" for name, digest in (f.get("sha256") or {}).items())
        rows.append((family, f"{', '.join(f.get('artifacts') or [])} from {f.get('source', '?')}"
                             + (f" — {hashes}" if hashes else "")))
    return rows


def section_summary(runs: list[load.Run], run: load.Run, verdicts: pd.DataFrame) -> str:
    env = run.environment
    packages = env.get("packages") or {}
    jvm = env.get("jvm") or {}
    facts = pd.DataFrame([
        ("run", run.run_id), ("created", env.get("created")), ("scale", f"{run.scale} ({(env.get('scale') or {}).get('rows', '?'):,} rows, {(env.get('scale') or {}).get('files', '?')} files)" if isinstance((env.get('scale') or {}).get('rows'), int) else run.scale),
        ("seed", env.get("seed")), ("Spark", jvm.get("spark") or packages.get("pyspark")), ("Java", jvm.get("java") or env.get("java")),
        ("Python", env.get("python")), *_format_facts(env.get("formats") or {}),
        ("machine", f"{(env.get('machine') or {}).get('cpus')} cores, {((env.get('machine') or {}).get('memory_bytes') or 0) / 2**30:.0f} GiB, {(env.get('machine') or {}).get('platform')}"),
        ("Spark master", (env.get("spark") or {}).get("master")),
        ("where the run's time went", describe(run.cowmor["time_breakdown"]) if run.cowmor.get("time_breakdown") else "not recorded"),
    ], columns=["", "value"])
    outcomes = load.outcomes(run)
    configs = []
    for config_id, info in (env.get("configs") or {}).items():
        mine = outcomes[outcomes.config_id == config_id] if not outcomes.empty else outcomes
        if mine.empty:
            status, reason = "not run", ""
        elif (mine.outcome == "failed").any():
            status, reason = "FAILED", "; ".join(mine[mine.outcome == "failed"].reason.astype(str))
        elif (mine.outcome == "skipped").all():
            status, reason = "skipped", mine.reason.iloc[0]
        else:
            status, reason = "measured", ""
        configs.append({"configuration": config_id, "description": info.get("description"), "status": status, "reason": reason})
    status = pd.DataFrame(configs)
    body = [_table(facts), "<h3>Configurations</h3>", _table(status) if not status.empty else _note("no configuration recorded")]
    body += ["<h3>Verdicts</h3>", _table(verdicts) if not verdicts.empty else _note("nothing measured")]
    if len({r.scale for r in runs}) > 1:
        body.insert(0, '<p class="warn">These runs were made at different scales: '
                    + html.escape(", ".join(f"{r.run_id} = {r.scale}" for r in runs)) + ". Compare them with care.</p>")
    return "".join(body)


def section_write(run: load.Run, ops: pd.DataFrame, out: Path) -> str:
    upd = ops[ops.operation == "update"]
    if upd.empty:
        return _note("no update measured in this run")
    parts = [_img(charts.latency_by_config(_samples(run, "update"), "Hotfix update latency"), "update latency", out, "update_latency")]
    by_part = written_parts(upd)
    parts.append(_img(charts.stacked_bytes(by_part, "Bytes written by the update, by part"),
                      "bytes written", out, "bytes_written"))
    files = upd[["config_id", "median_s", "fs_bytes_added", "fs_data_files_added", "fs_delete_files_added",
                 "meta_data_files_removed", "meta_delete_files_added", "meta_bytes_added", "meta_bytes_removed",
                 "fs_bytes_removed", "write_amplification", "rows_changed_reported", "rows_changed_verified"]].copy()
    files["fs_bytes_added"] = files.fs_bytes_added.map(human_bytes)
    files["meta_bytes_added"] = files.meta_bytes_added.map(human_bytes)
    files["meta_bytes_removed"] = files.meta_bytes_removed.map(human_bytes)
    files["fs_bytes_removed"] = files.fs_bytes_removed.map(human_bytes)
    files["write_amplification"] = files.write_amplification.map(lambda v: f"{v:,.0f}x" if pd.notna(v) else "–")
    files["median_s"] = [_with_interval(r) for r in upd.itertuples()]
    files.columns = ["configuration", "median s [95% CI] · CV", "written (fs)", "+data files", "+delete files/DVs/logs",
                     "-data files (meta)", "+delete files (meta)", "written (meta)", "removed (meta)", "removed (fs)",
                     "write amplification", "rows changed (format)", "rows changed (verified)"]
    parts.append(_table(files))
    anatomy = by_part.set_index("config_id").map(human_bytes).reset_index().rename(columns={"config_id": "configuration"})
    parts.append("<h3>What the written files hold</h3>" + _table(anatomy) + _note(
        "Read from the footers of the data files the update wrote. Hudi writes five _hoodie_* meta columns and a "
        "serialized bloom filter (hoodie.index.bloom.num_entries=60000, fpp 1e-9: ~430 KB whatever the file's row "
        "count) into every base file, and commits to its metadata table (.hoodie/metadata) on every write; Iceberg "
        "and Delta add neither. At small rows per file these, not the rows, dominate a copy-on-write rewrite."))
    parts.append(_note("Filesystem columns diff the table directory before and after; metadata columns come from the "
                       "format's own commit record. They disagree on purpose: replaced files stay on disk until "
                       "snapshot expiry / VACUUM / cleaning, so 'removed (fs)' is 0 where metadata removes files. "
                       "Write amplification = bytes written ÷ (rows changed × average bytes per row of the base data)."))
    return "".join(parts)


def _with_interval(op) -> str:
    """``median [low, high] · CV``, flagged where the rounds vary by more than uncertainty.CV_FLAG."""
    text = f"{op.median_s:.2f}"
    if pd.notna(getattr(op, "ci_low_s", None)):
        text += f" [{op.ci_low_s:.2f}, {op.ci_high_s:.2f}] · {op.cv:.0%}"
        if op.cv > uncertainty.CV_FLAG:
            text += " (noisy)"
    return text + f" (n={int(op.rounds)})" if pd.notna(op.rounds) else text


def written_parts(upd: pd.DataFrame) -> pd.DataFrame:
    """The update's bytes split into what the rows need and what each format adds around them."""
    def col(name: str) -> pd.Series:
        return pd.to_numeric(upd[name], errors="coerce").fillna(0) if name in upd else pd.Series(0, index=upd.index)
    table, own, index = col("data_table_columns_bytes"), col("data_format_columns_bytes"), col("data_footer_index_bytes")
    has_anatomy = (table + own + index) > 0
    data = col("fs_data_bytes_added")
    mdt = col("fs_metadata_table_bytes_added")
    return pd.DataFrame({
        "config_id": upd.config_id,
        "table's columns": table.where(has_anatomy, data),
        "format's own columns (_hoodie_*)": own,
        "index in file footers (bloom filter)": index,
        "other Parquet overhead": (data - table - own - index).where(has_anatomy, 0).clip(lower=0),
        "deletes / DVs / logs": col("fs_delete_bytes_added"),
        "metadata table (Hudi)": mdt,
        "other metadata": (col("fs_metadata_bytes_added") - mdt).clip(lower=0),
    })


def section_read(reads: pd.DataFrame, out: Path) -> str:
    if reads.empty:
        return _note("no reads measured in this run")
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


def section_over_time(run: load.Run, out: Path) -> tuple[str, dict[str, float]]:
    """Read latency against un-compacted batches (dinner peak, degradation), rates, recovery, staleness."""
    rows, rates, extras = [], {}, []
    for b in run.benchmarks:
        x = b.get("extra_info") or {}
        if x.get("scenario") not in ("dinner_peak", "degradation"):
            continue
        start = [{"batch": 0, "read_s": x["read_before_s"]}] if "read_before_s" in x else []
        for step in start + (x.get("series") or []):
            rows.append({"config_id": x["config_id"], "scenario": x["scenario"], "batch": step["batch"], "read_s": step["read_s"]})
        rates[f"{x['scenario']}:{x['config_id']}"] = x.get("degradation_rate", 0.0)
        rec, comp = x.get("recovery") or {}, x.get("compaction") or {}
        ro = [s["read_optimized"] for s in x.get("series") or [] if "read_optimized" in s]
        extras.append({"scenario": x["scenario"], "configuration": x["config_id"],
                       "degradation rate": f"{x.get('degradation_rate', 0):+.1%}",
                       "upsert p50 / p95 / max s": (f"{x['upsert_p50_s']:.2f} / {x['upsert_p95_s']:.2f} / {x['upsert_max_s']:.2f}"
                                                    if "upsert_p50_s" in x else "–"),
                       "compaction s": f"{rec.get('compaction_s', comp.get('seconds', float('nan'))):.2f}"
                       if (rec.get("compaction_s") or comp.get("seconds")) else (rec.get("skipped") or comp.get("skipped") or "–")[:60],
                       "recovery (read after compaction / before)": f"{rec['recovery_vs_start']:.2f}x" if "recovery_vs_start" in rec else "–",
                       "read-optimized rows not yet visible": f"{sum(r['rows_not_yet_visible'] for r in ro)} of {sum(r['rows_in_batch'] for r in ro)}" if ro else "–"})
    if not rows:
        return _note("No sequence scenario (dinner peak / degradation) in these runs: run "
                     "scenarios/test_degradation.py or test_dinner_peak.py to draw the curve."), {}
    frame = pd.DataFrame(rows)
    parts = []
    for scenario, group in frame.groupby("scenario"):
        parts.append(_img(charts.series(group, "batch", "read_s", f"{scenario.replace('_', ' ')}: read latency vs un-compacted batches",
                                        "batches applied without compaction (0 = before)", "seconds"), scenario, out, f"series_{scenario}"))
    parts.append(_table(pd.DataFrame(extras)))
    parts.append(_note("Degradation rate (LST-Bench): the mean relative change of the read latency between consecutive "
                       "measurements. Recovery: read latency after compaction divided by the latency before any batch."))
    return "".join(parts), {k.split(":", 1)[1]: v for k, v in rates.items() if k.startswith("degradation:")} or \
        {k.split(":", 1)[1]: v for k, v in rates.items()}


def read_optimized_staleness(run: load.Run) -> dict[str, float] | None:
    """Hudi MoR in the dinner peak: updated rows the read-optimized view missed before and after compaction."""
    for b in run.benchmarks:
        x = b.get("extra_info") or {}
        steps = [s for s in x.get("series") or [] if "read_optimized" in s]
        after = (x.get("compaction") or {}).get("read_optimized_after")
        if x.get("scenario") == "dinner_peak" and steps and after:
            return {"updated": sum(s.get("rows_updated", 0) for s in steps),
                    "in_logs": sum(c.get("log_records_written", 0) for s in steps for c in s["metadata"].get("raw") or []),
                    "not_visible": sum(s["read_optimized"]["rows_not_yet_visible"] for s in steps),
                    "not_visible_after": after["rows_not_yet_visible"],
                    "ro_s": sum(s["read_optimized"]["seconds"] for s in steps) / len(steps)}
    return None


def section_sweep(run: load.Run, ops: pd.DataFrame, out: Path) -> str:
    """Update cost against the size of the update, and where merge-on-read starts to win."""
    sweep = ops[ops.scenario == "update_sweep"]
    if sweep.empty:
        return ""
    meta = {(b["extra_info"]["config_id"], b["extra_info"]["param"]): b["extra_info"] for b in run.benchmarks
            if (b.get("extra_info") or {}).get("scenario") == "update_sweep"}
    sweep = sweep.assign(rows_fraction=[meta[(c, p)]["rows_fraction"] for c, p in zip(sweep.config_id, sweep.param)],
                         files_touched=[meta[(c, p)]["files_touched"] for c, p in zip(sweep.config_id, sweep.param)])
    fractions = sweep[sweep.param.str.endswith("pct")]
    parts = [_img(charts.series(fractions.rename(columns={"median_s": "seconds"}), "rows_fraction", "seconds",
                                "Update latency vs share of rows updated (scattered)", "share of rows updated", "seconds", logx=True),
                  "sweep", out, "update_sweep")]
    rows = []
    for family in ("iceberg", "hudi", "delta"):
        cow = fractions[fractions.config_id == f"{family}-cow"].set_index("param")
        for other in (f"{family}-mor", f"{family}-dv"):
            oth = fractions[fractions.config_id == other].set_index("param")
            if cow.empty or oth.empty:
                continue
            wins = [p for p in ("0.01pct", "0.1pct", "1pct", "10pct") if p in cow.index and p in oth.index
                    and oth.loc[p, "median_s"] < cow.loc[p, "median_s"]]
            rows.append({"pair": f"{family}-cow vs {other}", f"{other} faster at": ", ".join(wins) or "none",
                         "CoW faster at": ", ".join(p for p in ("0.01pct", "0.1pct", "1pct", "10pct") if p in cow.index and p not in wins) or "none"})
    pivot = sweep.pivot_table(index="param", columns="config_id", values="median_s").round(3).reset_index()
    files = sweep.pivot_table(index="param", columns="config_id", values="fs_bytes_added").map(human_bytes).reset_index()
    parts += [_table(pd.DataFrame(rows)) if rows else "", "<h4>median update seconds</h4>", _table(pivot),
              "<h4>bytes written</h4>", _table(files),
              _note("clustered = hotfix_rows consecutive rows (one or two files); scattered = the same count spread over the table.")]
    return "<h3>Where merge-on-read starts to win (update sweep)</h3>" + "".join(parts)


def section_settlements(run: load.Run) -> str:
    rows = []
    for b in run.benchmarks:
        x = b.get("extra_info") or {}
        if x.get("scenario") == "monthly_settlements":
            rows.append({"configuration": x["config_id"], "adjustment batches": len(x["writes"]),
                         "write total s": f"{x['write_total_s']:.2f}", "bytes written": human_bytes(x["write_bytes_total"]),
                         "reads": x["reads"]["reads"], "read total s": f"{x['read_total_s']:.2f}",
                         "same reads before any adjustment s": f"{x['read_total_pristine_s']:.2f}",
                         "mean per-read overhead": f"{x['mean_read_overhead_s'] * 1000:+.0f} ms"})
    if not rows:
        return ""
    return "<h3>Monthly settlements: few writes, many reads</h3>" + _table(pd.DataFrame(rows)) + _note(
        "Per-read overhead: mean latency of each dashboard query on the adjusted table minus the same query on the "
        "same table before the month's adjustments (restored from its base, never updated).")


def section_break_even(costs: dict[str, Costs], samples: dict[str, confidence.CostSamples], profiles: list[Profile],
                       out: Path) -> tuple[str, pd.DataFrame]:
    if len(costs) < 1:
        return _note("no configuration with both an update and reads measured"), pd.DataFrame()
    k_default = 10
    ratios = [10 ** (i / 10) for i in range(-20, 61)]
    curves = pd.DataFrame([{"config_id": c.config_id, "reads_per_write": r, "seconds": c.total(r, k_default)}
                           for c in costs.values() for r in ratios])
    pair_ids = cow_mor_pairs(samples)
    verdicts, breaks, sims = confidence.simulate(samples, profiles, pair_ids, k_default, ratios=ratios)
    bands = pd.DataFrame([{"config_id": c, "reads_per_write": r, "low": lo, "high": hi} for c, arr in sims.items()
                          for r, lo, hi in zip(ratios, np.percentile(arr, 2.5, axis=0), np.percentile(arr, 97.5, axis=0))])
    pairs, crossings = [], []
    for b in breaks:
        cow, other = costs[b.pair[0]], costs[b.pair[1]]
        always = min((cow, other), key=lambda c: c.total(1, k_default)).config_id
        pairs.append({"pair": f"{b.pair[0]} vs {b.pair[1]}",
                      "break-even reads per write": f"{b.point:,.1f}" if b.point else "none",
                      "95% interval": b.interval_text(), "resamples that cross": f"{b.crossing_share:.0%}",
                      "cheaper above it": cheaper_above(cow, other) if b.point else f"{always} at every ratio"})
        if b.point:
            crossings.append((b.point, cow.total(b.point, k_default), f"{b.pair[0]} = {b.pair[1]} at {b.point:,.0f}"))
    chart = charts.break_even_lines(curves, crossings, [(p.name, p.reads_per_write) for p in profiles], bands)
    recs = []
    for p, v in zip(profiles, verdicts):
        ranked = recommend(list(costs.values()), p)
        best = ranked[0]
        recs.append({"workload": p.name, "reads per write": f"{p.reads_per_write:,.4g}",
                     "writes per compaction": f"{p.writes_per_compaction:,.0f}", "recommended": v.text(),
                     "cheapest in": ", ".join(f"{c} {share:.0%}" for c, share in v.ranked if share > 0),
                     "cost per write cycle (medians)": f"{best[0]} {best[1]:,.2f} s", "source": p.source})
    inputs = pd.DataFrame([{"configuration": c.config_id, "W update s": f"{c.write_s:.3f}", "R read s": f"{c.read_s:.3f}",
                            "C compaction s": f"{c.compaction_s:.3f}",
                            "read after compaction s": f"{c.read_after_compaction_s:.3f}" if c.read_after_compaction_s else "–",
                            "rounds W / reads R / rounds C": f"{len(samples[c.config_id].write_s)} / "
                            f"{sum(len(v) for v in samples[c.config_id].read_s.values())} / {len(samples[c.config_id].compaction_s)}"
                            if c.config_id in samples else "–"}
                           for c in costs.values()])
    formula = ("T(r) = W + r·R + C/k per write cycle; r = reads per write, k = writes per compaction (10 in the chart; "
               "each profile sets its own). W = median hotfix update, R = mean over the dashboard queries of their median "
               "latency after the update (the un-compacted state: an upper bound for merge-on-read between compactions), "
               "C = median compaction (0 for copy-on-write). Break-even r* = (W_a + C_a/k − W_b − C_b/k) / (R_b − R_a).")
    html_parts = [_img(chart, "break-even", out, "break_even"), "<h3>Break-even per pair</h3>", _table(pd.DataFrame(pairs)) if pairs else _note("no CoW/MoR pair measured"),
                  "<h3>Recommendation per workload</h3>", _table(pd.DataFrame(recs)), "<h3>Model inputs</h3>", _table(inputs),
                  f'<p class="formula">{html.escape(formula)}</p>',
                  _note(f"Uncertainty: the rounds behind W, R and C are resampled together ({confidence.RESAMPLES} bootstrap "
                        "resamples) and T(r), every break-even and every recommendation recomputed; bands in the chart are "
                        "95% intervals. A configuration is recommended only where it is cheapest in at least "
                        f"{confidence.DECISIVE:.0%} of the resamples; otherwise the verdict is 'too close to call at this scale'."),
                  _note("Costs come from the payments hotfix (a scattered update). A profile whose updates look "
                        "different (e.g. the dinner peak's tiny batches) is approximated by it; read the ranking, not the seconds.")]
    return "".join(html_parts), pd.DataFrame(recs)


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
    from bench.history import rows as history_rows

    frame = pd.concat([history_rows(r) for r in runs], ignore_index=True)
    frame = frame[frame.metric == "median_s"]
    if frame.empty:
        return _note("no timings in these runs")
    order = {r.run_id: i for i, r in enumerate(runs)}
    frame = frame.assign(run=frame.run_id.map(order))
    versions = [(i, r.run_id, {k: (r.environment.get("packages") or {}).get(k) for k in ("pyspark", "pyiceberg")}
                 | {f: v.get("source") for f, v in (r.environment.get("formats") or {}).items()}) for i, r in enumerate(runs)]
    changes = [(i, ", ".join(f"{k}: {prev[k]} → {cur[k]}" for k in cur if prev.get(k) != cur[k]))
               for (_, _, prev), (i, _, cur) in zip(versions, versions[1:]) if prev != cur]
    main = frame[frame.scenario == "payments_hotfix"] if (frame.scenario == "payments_hotfix").any() else frame
    main = main.assign(series=main.config_id + " " + main.operation.fillna(""))
    chart = charts.trend(main, changes)
    table = main.pivot_table(index="benchmark", columns="run_id", values="value").round(3).reset_index()
    parts = [_img(chart, "trend", out, "trend"), _table(table)]
    parts.append(_note("Version changes between runs: " + ("; ".join(f"before run {i}: {c}" for i, c in changes) if changes else "none")))
    return "".join(parts)


def _verdicts(run: load.Run, ops: pd.DataFrame, costs: dict[str, Costs], recs: pd.DataFrame) -> list[dict]:
    """One line per question a reader asks, answered from whatever scenarios the runs hold."""
    out = []
    upd = ops[(ops.operation == "update") & (ops.scenario == "payments_hotfix")]
    if not upd.empty:
        out += [{"scenario": "payments hotfix", "question": "fastest update", "answer": upd.loc[upd.median_s.idxmin(), "config_id"]},
                {"scenario": "payments hotfix", "question": "fewest bytes written", "answer": upd.loc[upd.fs_bytes_added.idxmin(), "config_id"]}]
    if costs:
        out.append({"scenario": "payments hotfix", "question": "fastest dashboard after the update",
                    "answer": min(costs.values(), key=lambda c: c.read_s).config_id})
    infos = [b.get("extra_info") or {} for b in run.benchmarks]
    peak = [x for x in infos if x.get("scenario") == "dinner_peak"]
    if peak:
        out.append({"scenario": "dinner peak", "question": "lowest p95 upsert latency",
                    "answer": min(peak, key=lambda x: x["upsert_p95_s"])["config_id"]})
    settle = [x for x in infos if x.get("scenario") == "monthly_settlements"]
    if settle:
        out.append({"scenario": "monthly settlements", "question": "lowest total cost (writes + reads)",
                    "answer": min(settle, key=lambda x: x["write_total_s"] + x["read_total_s"])["config_id"]})
    degr = [x for x in infos if x.get("scenario") == "degradation"]
    if degr:
        out.append({"scenario": "degradation", "question": "slowest read degradation",
                    "answer": min(degr, key=lambda x: x["degradation_rate"])["config_id"]})
    out += [{"scenario": "recommendation", "question": r["workload"], "answer": r["recommended"]} for _, r in recs.iterrows()]
    return out


def build_report(paths: list[Path], out: Path | None = None, profiles: list[str] | None = None) -> Path:
    """Read the runs, write ``<out>/index.html``, ``<out>/charts/*.png`` and ``<out>/results.csv``.

    Raises:
        BadOption: unreadable input, or runs with no results at all.
    """
    runs = [load.load_run(p) for p in paths]
    extra = [parse_profile(p) for p in profiles or []]
    run = load.merge(runs)
    if not run.benchmarks and not run.outcomes:
        raise BadOption(f"{run.path}: the run has no results (no benchmark and no recorded outcome)")
    if len({r.scale for r in runs}) > 1:
        warnings.warn(f"comparing runs at different scales: {', '.join(r.scale for r in runs)}", stacklevel=2)
    out = Path(out) if out else Path("reports") / run.run_id
    out.mkdir(parents=True, exist_ok=True)
    ops, all_reads = load.operations(run), load.reads(run)
    reads = all_reads[(all_reads.engine == PRIMARY) & all_reads.unsupported.isna()]  # Spark: the reference engine
    costs = costs_of(ops, reads) if not ops.empty else {}
    over_time, rates = section_over_time(run, out)
    samples = confidence.samples_of(run, reads)
    breakeven, recs = section_break_even(costs, samples, [*SEED_PROFILES, *extra], out) if costs else (_note("nothing to model"), pd.DataFrame())
    claims = pd.DataFrame([vars(c) for c in claims_mod.check(ops, costs, rates, read_optimized_staleness(run), samples)]
                          + concurrency.claims(run))
    verdicts = pd.DataFrame()
    if not ops.empty:
        verdicts = pd.DataFrame(_verdicts(run, ops, costs, recs))
    csv = pd.concat([ops.assign(kind="operation"), all_reads.assign(kind="read")], ignore_index=True) if not ops.empty else ops
    csv.to_csv(out / "results.csv", index=False)
    sections = [
        ("summary", "1. Summary", section_summary(runs, run, verdicts)),
        ("write", "2. Write cost", (section_write(run, ops[ops.scenario == "payments_hotfix"], out) + section_sweep(run, ops, out)
                              + growth.section_growth(run, out))
         if not ops.empty else _note("nothing measured")),
        ("read", "3. Read cost", section_read(reads[reads.operation.isin(["update", "compaction"])], out) + section_settlements(run)),
        ("engines", "4. Engines", engine_view.section_engines(run, ops, all_reads, [*SEED_PROFILES, *extra], out)),
        ("time", "5. Over time", over_time + concurrency.section(run)),
        ("breakeven", "6. Break-even and recommendation", breakeven),
        ("claims", "7. Claims check", _table(claims)),
        ("raw", "8. Raw data", f'<p><a href="results.csv" download>results.csv</a> — every measured operation and read, '
                               f'flattened ({len(csv)} rows). Source: {html.escape(", ".join(str(r.path) for r in runs))}</p>'),
    ]
    compare = section_compare(runs)
    if compare:
        sections.append(("compare", "9. Comparing runs", compare))
    if len(runs) >= 3:
        sections.append(("trend", "10. Trend over runs", section_trend(runs, out)))
    nav = "".join(f'<a href="#{sid}">{html.escape(title)}</a>' for sid, title, _ in sections)
    body = "".join(f'<section id="{sid}"><h2>{html.escape(title)}</h2>{content}</section>' for sid, title, content in sections)
    page = (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>cowmor — {html.escape(run.run_id)}</title>"
            f"<meta name=viewport content='width=device-width, initial-scale=1'><style>{CSS}</style></head><body>"
            f"<header><h1>cowmor: copy-on-write vs merge-on-read vs deletion vectors</h1>"
            f"<p>{html.escape(run.run_id)} · scale {html.escape(run.scale)} · generated {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC</p>"
            f"<nav>{nav}</nav></header><main>{body}</main></body></html>")
    (out / "index.html").write_text(page)
    return out / "index.html"
