"""Each workload profile on its own scenario's measurements, in the seeds' units, and whether the seed's choice holds.

The dinner peak is priced by the dinner peak's batch upserts, the reads after each batch and its compaction,
with its reads per write taken from the seed's "16 row updates per read query" and the scenario's batch size;
the monthly settlements by the settlements' adjustment batches and their read mix (compaction from the hotfix,
which the settlements do not run). A profile whose scenario the run did not measure is priced by the payments
hotfix, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from bench.report.confidence import CostSamples
from bench.report.costmodel import Profile
from bench.results import load
from bench.results.contract import DINNER_PEAK, SETTLEMENTS
from bench.results.schema import DinnerPeakSequence, SettlementsSequence


@dataclass(frozen=True)
class PricedProfile:
    profile: Profile
    samples: dict[str, CostSamples]
    basis: str  # which measurements priced it


def _dinner_peak(run: load.Run, hotfix: dict[str, CostSamples]) -> tuple[dict[str, CostSamples], float]:
    out, rows = {}, []
    for r in run.records(DINNER_PEAK):
        x = r.view(DinnerPeakSequence)
        if not x.series:
            continue
        reads: dict[str, list[float]] = {}
        for step in x.series:
            for query, q in step.reads.items():
                if q.median is not None:
                    reads.setdefault(query, []).append(q.median)
        compaction = [x.compaction.seconds] if x.compaction and x.compaction.seconds is not None else \
            (hotfix[r.config_id].compaction_s if r.config_id in hotfix else [])
        if reads:
            out[r.config_id] = CostSamples(r.config_id, [s.upsert_s or 0.0 for s in x.series], reads, compaction)
            rows += [s.rows_updated if s.rows_updated is not None else (s.rows or 0) for s in x.series]
    return out, float(np.mean(rows)) if rows else 0.0


def _settlements(run: load.Run, hotfix: dict[str, CostSamples]) -> dict[str, CostSamples]:
    out = {}
    for r in run.records(SETTLEMENTS):
        x = r.view(SettlementsSequence)
        per_query = x.reads.per_query_s
        if not per_query or not x.writes:
            continue
        compaction = hotfix[r.config_id].compaction_s if r.config_id in hotfix else []
        out[r.config_id] = CostSamples(r.config_id, [w.seconds or 0.0 for w in x.writes], per_query, compaction)
    return out


def priced(run: load.Run, hotfix: dict[str, CostSamples], profiles: list[Profile]) -> list[PricedProfile]:
    out = []
    for p in profiles:
        if p.scenario == DINNER_PEAK:
            samples, rows_per_batch = _dinner_peak(run, hotfix)
            if samples and rows_per_batch and p.rows_per_read:
                ratio = rows_per_batch / p.rows_per_read
                out.append(PricedProfile(replace(p, reads_per_write=ratio), samples,
                                         f"dinner peak: batch upserts ({rows_per_batch:.0f} updated rows a batch → "
                                         f"{ratio:.3g} reads per batch at {p.rows_per_read:g} row updates per read), "
                                         "reads after each batch, its compaction"))
                continue
        if p.scenario == SETTLEMENTS:
            samples = _settlements(run, hotfix)
            if samples:
                out.append(PricedProfile(p, samples, "monthly settlements: adjustment batches and their read mix "
                                                     "(compaction from the hotfix)"))
                continue
        basis = "payments hotfix" if not p.scenario else \
            f"payments hotfix (run scenarios/test_{p.scenario}.py to price it on its own scenario)"
        out.append(PricedProfile(p, hotfix, basis))
    return out


def agreement(choice: str | None, winner: str | None, decided: bool, merges_on_read) -> str:
    """Whether the measured verdict agrees with the seed's choice (copy-on-write or merge-on-read)."""
    if not choice:
        return "–"
    if not winner or not decided:
        return "undecided at this scale"
    kind = "merge-on-read" if merges_on_read(winner) else "copy-on-write"
    return "agrees" if kind == choice else f"disagrees ({winner} {kind})"
