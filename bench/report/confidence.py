"""Uncertainty through the cost model: resample the rounds behind W, R and C together, recompute everything.

Each resample draws, per configuration, the update rounds (W), each dashboard query's read timings (R: the
mean over queries of their medians) and the compaction rounds (C) with replacement, and recomputes T(r), every
break-even and every profile's cheapest configuration. A verdict is a winner only where one configuration is
cheapest in at least ``DECISIVE`` of the resamples; otherwise it is "too close to call at this scale".
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bench.core import uncertainty
from bench.core.uncertainty import DECISIVE, RESAMPLES
from bench.report.costmodel import Costs, Profile, break_even
from bench.results import load
from bench.results.contract import HOTFIX


@dataclass(frozen=True)
class CostSamples:
    """The measurements behind one configuration's W, R and C."""

    config_id: str
    write_s: list[float]
    read_s: dict[str, list[float]]  # query -> timings after the update
    compaction_s: list[float] = field(default_factory=list)

    def point(self) -> Costs:
        return Costs(self.config_id, statistics.median(self.write_s),
                     statistics.fmean(statistics.median(v) for v in self.read_s.values()),
                     statistics.median(self.compaction_s) if self.compaction_s else 0.0)


@dataclass
class Verdict:
    workload: str
    shares: dict[str, float]  # configuration -> share of resamples in which it is cheapest

    @property
    def ranked(self) -> list[tuple[str, float]]:
        return sorted(self.shares.items(), key=lambda kv: -kv[1])

    @property
    def decided(self) -> bool:
        return self.ranked[0][1] >= DECISIVE

    def text(self) -> str:
        best, share = self.ranked[0]
        if self.decided:
            return best
        runner = self.ranked[1][0] if len(self.ranked) > 1 else "another configuration"
        return f"too close to call at this scale: {best} or {runner}"


@dataclass
class PairBreakEven:
    pair: tuple[str, str]
    point: float | None  # from the medians
    ci95: tuple[float, float] | None  # over the resamples that cross
    crossing_share: float  # share of resamples in which the two cross at a positive ratio

    def interval_text(self) -> str:
        """The 95% interval; where the medians do not cross, it only describes the minority of resamples that do."""
        if not self.ci95:
            return "–"
        span = f"{self.ci95[0]:,.1f} – {self.ci95[1]:,.1f}"
        return span if self.point else f"({self.crossing_share:.0%} of resamples cross, at {span})"


def resampled(samples: dict[str, CostSamples], resamples: int = RESAMPLES, seed: int = 0) -> list[dict[str, Costs]]:
    """``resamples`` draws of every configuration's W, R and C from its own rounds (same seed, same draws)."""
    rng = np.random.default_rng(seed)
    drawn = {}
    for c, s in samples.items():
        reads = np.mean([uncertainty.resampled_medians(v, rng, resamples) for v in s.read_s.values()], axis=0)
        compactions = uncertainty.resampled_medians(s.compaction_s, rng, resamples) if s.compaction_s else np.zeros(resamples)
        drawn[c] = (uncertainty.resampled_medians(s.write_s, rng, resamples), reads, compactions)
    return [{c: Costs(c, float(w[i]), float(r[i]), float(k[i])) for c, (w, r, k) in drawn.items()} for i in range(resamples)]


def interval(values: list[float]) -> tuple[float, float]:
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


def simulate(samples: dict[str, CostSamples], profiles: list[Profile], pairs: list[tuple[str, str]],
             writes_per_compaction: float = 10.0, resamples: int = RESAMPLES, seed: int = 0,
             ratios: list[float] | None = None) -> tuple[list[Verdict], list[PairBreakEven], dict[str, np.ndarray]]:
    """Verdict per profile, break-even per pair, and each configuration's T(r) over ``ratios`` per resample
    (an array resamples x ratios, for the chart's bands). Nothing to resample (no configuration with an update and
    reads after it, e.g. a run of compaction alone): no verdict, no break-even."""
    if not samples:
        return [], [], {}
    pairs = [(a, b) for a, b in pairs if a in samples and b in samples]
    wins = {p.name: dict.fromkeys(samples, 0) for p in profiles}
    crossings: dict[tuple[str, str], list[float]] = {pair: [] for pair in pairs}
    ratios = ratios or []
    curves = {c: np.zeros((resamples, len(ratios))) for c in samples}
    for i, costs in enumerate(resampled(samples, resamples, seed)):
        for p in profiles:
            best = min(costs.values(), key=lambda c: c.total(p.reads_per_write, p.writes_per_compaction))
            wins[p.name][best.config_id] += 1
        for a, b in pairs:
            r = break_even(costs[a], costs[b], writes_per_compaction)
            if r is not None:
                crossings[(a, b)].append(r)
        for c, cost in costs.items():
            curves[c][i] = [cost.total(r, writes_per_compaction) for r in ratios]
    verdicts = [Verdict(p.name, {c: n / resamples for c, n in wins[p.name].items()}) for p in profiles]
    points = {c: s.point() for c, s in samples.items()}
    breaks = []
    for a, b in pairs:
        found = crossings[(a, b)]
        ci = interval(found) if found else None
        breaks.append(PairBreakEven((a, b), break_even(points[a], points[b], writes_per_compaction), ci,
                                    len(found) / resamples))
    return verdicts, breaks, curves


def samples_of(run: load.Run, reads: pd.DataFrame, scenario: str = HOTFIX) -> dict[str, CostSamples]:
    """Per configuration with an update and reads after it: the update's and compaction's rounds and each
    query's read timings after the update (``reads`` already holds one engine's rows)."""
    rounds: dict[tuple[str, str], list[float]] = {}
    for r in run.records(scenario):
        if r.operation in ("update", "compaction"):
            rounds[(r.config_id, r.operation)] = r.seconds
    out = {}
    for (config_id, operation), write in rounds.items():
        if operation != "update":
            continue
        after = reads[(reads.config_id == config_id) & (reads.operation == "update") & (reads.phase == "after")]
        per_query = {r.query: list(r.seconds) if isinstance(r.seconds, list) and r.seconds else [r.median_s]
                     for r in after.itertuples()}
        if per_query:
            out[config_id] = CostSamples(config_id, write, per_query, rounds.get((config_id, "compaction"), []))
    return out
