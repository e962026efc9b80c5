"""The over-time section: read latency against un-compacted batches, degradation, recovery, staleness."""


from __future__ import annotations

from pathlib import Path

import pandas as pd

from bench.report import charts
from bench.report.html_parts import img as _img
from bench.report.html_parts import note as _note
from bench.report.html_parts import table as _table
from bench.results import load
from bench.results.contract import DEGRADATION, DINNER_PEAK


def section_over_time(run: load.Run, out: Path) -> tuple[str, dict[str, float]]:
    """Read latency against un-compacted batches (dinner peak, degradation), rates, recovery, staleness."""
    rows, rates, extras = [], {}, []
    for x in [r.info for r in run.records(DINNER_PEAK) + run.records(DEGRADATION)]:
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
    for x in [r.info for r in run.records(DINNER_PEAK)]:
        steps = [s for s in x.get("series") or [] if "read_optimized" in s]
        after = (x.get("compaction") or {}).get("read_optimized_after")
        if x.get("scenario") == DINNER_PEAK and steps and after:
            return {"updated": sum(s.get("rows_updated", 0) for s in steps),
                    "in_logs": sum(c.get("log_records_written", 0) for s in steps for c in s["metadata"].get("raw") or []),
                    "not_visible": sum(s["read_optimized"]["rows_not_yet_visible"] for s in steps),
                    "not_visible_after": after["rows_not_yet_visible"],
                    "ro_s": sum(s["read_optimized"]["seconds"] for s in steps) / len(steps)}
    return None
