"""The over-time section: read latency against un-compacted batches, degradation, recovery, staleness."""


from __future__ import annotations

from pathlib import Path

import pandas as pd

from bench.report import charts
from bench.report.html_parts import img as _img
from bench.report.html_parts import note as _note
from bench.report.html_parts import table as _table
from bench.results import load
from bench.results.contract import DEGRADATION, DINNER_PEAK, Record
from bench.results.schema import DegradationSequence, DinnerPeakSequence


def _sequences(run: load.Run) -> list[tuple[Record, DinnerPeakSequence | DegradationSequence]]:
    return [(r, r.view(DinnerPeakSequence)) for r in run.records(DINNER_PEAK)] + \
        [(r, r.view(DegradationSequence)) for r in run.records(DEGRADATION)]


def degradation_rates(run: load.Run) -> dict[str, float]:
    """Configuration -> how much a read slows per un-compacted batch (the claims check reads it): the degradation
    scenario's where it ran, else the dinner peak's."""
    rates = {(r.scenario, r.config_id): x.degradation_rate or 0.0 for r, x in _sequences(run)}
    return {c: v for (sc, c), v in rates.items() if sc == DEGRADATION} or {c: v for (_, c), v in rates.items()}


def section_over_time(run: load.Run, out: Path) -> str:
    """Read latency against un-compacted batches (dinner peak, degradation), rates, recovery, staleness."""
    rows, extras = [], []
    for r, x in _sequences(run):
        steps: list[tuple[int | None, float | None]] = [(s.batch, s.read_s) for s in x.series]
        if isinstance(x, DegradationSequence):
            steps.insert(0, (0, x.read_before_s))
        rows += [{"config_id": r.config_id, "scenario": r.scenario, "batch": batch, "read_s": read_s} for batch, read_s in steps]
        compaction_s, skipped = (x.recovery.compaction_s, x.recovery.skipped) if isinstance(x, DegradationSequence) else \
            ((x.compaction.seconds, x.compaction.skipped) if x.compaction else (None, None))
        ro = [s.read_optimized for s in x.series if s.read_optimized is not None]
        peak = x if isinstance(x, DinnerPeakSequence) else None
        recovery = x.recovery.recovery_vs_start if isinstance(x, DegradationSequence) else None
        extras.append({"scenario": r.scenario, "configuration": r.config_id,
                       "degradation rate": f"{x.degradation_rate or 0:+.1%}",
                       "upsert p50 / p95 / max s": (f"{peak.upsert_p50_s:.2f} / {peak.upsert_p95_s:.2f} / {peak.upsert_max_s:.2f}"
                                                    if peak else "–"),
                       "compaction s": f"{compaction_s:.2f}" if compaction_s else (skipped or "–")[:60],
                       "recovery (read after compaction / before)": f"{recovery:.2f}x" if recovery is not None else "–",
                       "read-optimized rows not yet visible":
                           f"{sum(v.rows_not_yet_visible or 0 for v in ro)} of {sum(v.rows_in_batch or 0 for v in ro)}" if ro else "–"})
    if not rows:
        return _note("No sequence scenario (dinner peak / degradation) in these runs: run "
                     "scenarios/test_degradation.py or test_dinner_peak.py to draw the curve.")
    frame = pd.DataFrame(rows)
    parts = []
    for scenario, group in frame.groupby("scenario"):
        parts.append(_img(charts.series(group, "batch", "read_s", f"{scenario.replace('_', ' ')}: read latency vs un-compacted batches",
                                        "batches applied without compaction (0 = before)", "seconds"), scenario, out, f"series_{scenario}"))
    parts.append(_table(pd.DataFrame(extras)))
    parts.append(_note("Degradation rate (LST-Bench): the mean relative change of the read latency between consecutive "
                       "measurements. Recovery: read latency after compaction divided by the latency before any batch."))
    return "".join(parts)


def read_optimized_staleness(run: load.Run) -> dict[str, float] | None:
    """Hudi MoR in the dinner peak: updated rows the read-optimized view missed before and after compaction."""
    for r in run.records(DINNER_PEAK):
        x = r.view(DinnerPeakSequence)
        steps = [s for s in x.series if s.read_optimized is not None]
        after = x.compaction.read_optimized_after if x.compaction else None
        if steps and after:
            return {"updated": sum(s.rows_updated or 0 for s in steps),
                    "in_logs": sum(s.metadata.log_records_written for s in steps if s.metadata),
                    "not_visible": sum(s.read_optimized.rows_not_yet_visible or 0 for s in steps if s.read_optimized),
                    "not_visible_after": after.rows_not_yet_visible or 0,
                    "ro_s": sum(s.read_optimized.seconds or 0.0 for s in steps if s.read_optimized) / len(steps)}
    return None
