"""The summary section answers first: the recommendation per workload with its confidence, the verdicts, which
configurations ran (or why not); the environment and provenance are a section of their own."""


from __future__ import annotations

import html
import statistics

import pandas as pd

from bench.core.ledger import describe
from bench.report import workloads
from bench.report.confidence import DECISIVE
from bench.report.costmodel import Costs
from bench.report.html_parts import note as _note
from bench.report.html_parts import table as _table
from bench.results import load
from bench.results.contract import DEGRADATION, DINNER_PEAK, HOTFIX, SETTLEMENTS
from bench.results.schema import (
    AVAILABLE,
    DegradationSequence,
    DinnerPeakSequence,
    FormatUsed,
    Jvm,
    Machine,
    ScaleUsed,
    SettlementsSequence,
)

PYSPARK = "pyspark"  # the package whose version is Spark's where the JVM did not say


def _format_facts(formats: dict[str, FormatUsed]) -> list[tuple[str, str]]:
    """One row per family: version (artifacts), where its jars came from, and each jar's sha256, so a number from
    a jar built from source can always be told from one made with the Maven artifact."""
    rows = []
    for family, f in formats.items():
        if f.status != AVAILABLE:
            rows.append((family, f"skipped: {f.reason or ''}"))
            continue
        hashes = "; ".join(f"{name} sha256 {digest}" for name, digest in f.sha256.items())
        rows.append((family, f"{', '.join(f.artifacts)} from {f.source or '?'}" + (f" — {hashes}" if hashes else "")))
    return rows


ANSWER_COLUMNS = ["workload", "recommended", "cheapest in", "priced by", "measurement"]


def _whole_cycles(run: load.Run) -> str:
    """Where no hotfix prices the model: the workloads measured whole, read at the seeds' reads per write (section
    2 draws their map), or why nothing could be priced."""
    read = workloads.seeds_reading(run)
    if read.empty:
        return _note("no workload could be priced: no hotfix update with reads after it, and no dinner peak or "
                     "settlements cycle with two configurations of one route")
    return _table(read) + _note("Each workload measured whole (writes, the reads after them, "
                                                      "compaction), read at the seeds' reads per write; section 2, "
                                                      "'The choice for a workload', draws the map along all of them.")


def section_summary(runs: list[load.Run], run: load.Run, verdicts: pd.DataFrame, recommendations: pd.DataFrame) -> str:
    """The answer on the first screen: each workload's recommendation (with the share of resamples behind it and
    what it was priced by), then one line per question, then which configurations ran."""
    outcomes = load.outcomes(run)
    configs = []
    for config_id, info in run.env.configs.items():
        mine = outcomes[outcomes.config_id == config_id] if not outcomes.empty else outcomes
        if mine.empty:
            status, reason = "not run", ""
        elif (mine.outcome == "failed").any():
            status, reason = "FAILED", "; ".join(mine[mine.outcome == "failed"].reason.astype(str))
        elif (mine.outcome == "skipped").all():
            status, reason = "skipped", mine.reason.iloc[0]
        else:
            status, reason = "measured", ""
        configs.append({"configuration": config_id, "description": info.description, "status": status, "reason": reason})
    status = pd.DataFrame(configs)
    answer = recommendations[[c for c in ANSWER_COLUMNS if c in recommendations]] if not recommendations.empty else recommendations
    if not answer.empty:  # the model is priced on the hotfix's and the profiles' own statements: a MERGE from keys
        answer = answer.assign(assumes="updates find their rows by a join (section 'Finding the rows' has the other routes)")
    body = ["<h3>Recommendation per workload</h3>", _table(answer) if not answer.empty else _whole_cycles(run),
            _note(f"A configuration is recommended where it is cheapest in at least {DECISIVE:.0%} of the bootstrap resamples; "
                  "'cheapest in' gives the shares, 'priced by' the measurements it rests on. Section 'Break-even and "
                  "recommendation' has the model and its inputs."),
            "<h3>Verdicts</h3>", _table(verdicts) if not verdicts.empty else _note("nothing measured"),
            "<h3>Configurations</h3>", _table(status) if not status.empty else _note("no configuration recorded")]
    storages = load.runs_by_storage(runs)
    if len(storages) > 1:
        body.insert(0, '<p class="warn">These runs were measured on different storage: ' + html.escape("; ".join(
            f"{kind} in {', '.join(run_ids)}" for kind, run_ids in storages.items()))
                    + ". Their timings do not compare; bytes and files do.</p>")
    differ = load.settings_that_differ(runs)
    if differ:
        body.insert(0, '<p class="warn">These runs were made with different Spark settings: ' + html.escape("; ".join(
            f"{key}: " + ", ".join(f"{value} in {', '.join(run_ids)}" for value, run_ids in values.items())
            for key, values in differ.items())) + ". Their timings compare with care; bytes and files do.</p>")
    if len({r.scale for r in runs}) > 1:
        body.insert(0, '<p class="warn">These runs were made at different scales: '
                    + html.escape(", ".join(f"{r.run_id} = {r.scale}" for r in runs)) + ". Compare them with care.</p>")
    return "".join(body)


def section_environment(run: load.Run) -> str:
    """Where and with what the numbers were made: versions, the jars' sha256, machine, storage, where time went."""
    env, breakdown = run.env, run.time_breakdown
    jvm, scale, machine = env.jvm or Jvm(), env.scale or ScaleUsed(), env.machine or Machine()
    facts = pd.DataFrame([
        ("run", run.run_id), ("created", env.created),
        ("scale", f"{run.scale} ({scale.rows:,} rows, {scale.files if scale.files is not None else '?'} files)"
         if isinstance(scale.rows, int) else run.scale),
        ("seed", env.seed), ("Spark", jvm.spark or env.packages.get(PYSPARK)), ("Java", jvm.java or env.java),
        ("Python", env.python), *_format_facts(env.formats),
        ("machine", f"{machine.cpus} cores, {(machine.memory_bytes or 0) / 2**30:.0f} GiB, {machine.platform}"),
        ("Spark master", env.spark.master if env.spark else None), ("storage", load.storage_label(run.environment)),
        ("where the run's time went", describe(breakdown) if breakdown else "not recorded"),
    ], columns=["", "value"])
    return _table(facts)


def verdicts(run: load.Run, ops: pd.DataFrame, costs: dict[str, Costs]) -> list[dict]:
    """One line per question a reader asks, answered from whatever scenarios the runs hold."""
    out = []
    upd = ops[(ops.operation == "update") & (ops.scenario == HOTFIX)]
    if not upd.empty:
        out += [{"scenario": "payments hotfix", "question": "fastest update (rows found by a join: MERGE from a keys table)",
                 "answer": upd.loc[upd.median_s.idxmin(), "config_id"]},
                {"scenario": "payments hotfix", "question": "fewest bytes written", "answer": upd.loc[upd.fs_bytes_added.idxmin(), "config_id"]}]
    for route in sorted({r.route for r in run.records(HOTFIX, "update", route=None)} - {"join"}):
        routed = run.records(HOTFIX, "update", route=route)
        best = min(routed, key=lambda r: statistics.median(r.seconds))
        out.append({"scenario": "payments hotfix", "question": f"fastest update (rows found by the {route} route)",
                    "answer": f"{best.config_id} ({statistics.median(best.seconds):.2f} s; every route: 'Finding the rows')"})
    if costs:
        out.append({"scenario": "payments hotfix", "question": "fastest dashboard after the update",
                    "answer": min(costs.values(), key=lambda c: c.read_s).config_id})
    peak = [(r.config_id, r.view(DinnerPeakSequence).upsert_p95_s) for r in run.records(DINNER_PEAK)]
    if peak:
        out.append({"scenario": "dinner peak", "question": "lowest p95 upsert latency", "answer": min(peak, key=lambda x: x[1])[0]})
    settle = [(r.config_id, (s := r.view(SettlementsSequence)).write_total_s + s.read_total_s) for r in run.records(SETTLEMENTS)]
    if settle:
        out.append({"scenario": "monthly settlements", "question": "lowest total cost (writes + reads)",
                    "answer": min(settle, key=lambda x: x[1])[0]})
    degr = [(r.config_id, r.view(DegradationSequence).degradation_rate) for r in run.records(DEGRADATION)]
    if degr:
        out.append({"scenario": DEGRADATION, "question": "slowest read degradation", "answer": min(degr, key=lambda x: x[1])[0]})
    return out
