"""How often to compact: the writes per compaction that minimise the cost per write, from measured read cost against
un-compacted commits and the compaction's cost (the degradation scenario), per merge-on-read configuration.

Per write cycle of ``k`` writes and one compaction, with ``r`` reads per write spread evenly over the cycle:
``cost(k) = mean(W_0 … W_{k-1}) + r · mean(R_0 … R_{k-1}) + C / k``, where ``W_j`` is the update made after ``j``
un-compacted writes (a format whose writes slow as its logs grow pays for that too), ``R_j`` the read's median after
``j`` un-compacted writes (``R_0`` the read of a compacted table) and ``C`` the compaction measured after the run's
``K`` writes (so an upper bound for a smaller ``k``, which leans the answer towards compacting less often). ``k`` is
searched over 1 … ``K``: beyond the measured writes there is no read cost to price, and the answer says so. The
share of resamples (each state's read repeats drawn again) in which ``k*`` is cheapest is its confidence. The
cadence scenario (scenarios/test_compaction_cadence.py) checks the answer: it runs the cycle at ``k*`` and its
neighbours and measures each one's cost per write.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bench.core.uncertainty import DECISIVE, RESAMPLES
from bench.report import charts
from bench.report.html_parts import img, note, table
from bench.results.contract import COMPACTION_CADENCE, DEGRADATION, Record, Run
from bench.results.schema import CadenceCycles, DegradationSequence


def every(k: int) -> str:
    return "every write" if k == 1 else f"every {k} writes"


@dataclass(frozen=True)
class Cadence:
    config_id: str
    reads_per_write: float
    best_k: int
    share: float  # resamples in which best_k is cheapest
    costs: list[float]  # cost per write for k = 1 … K (medians of the reads)
    measured_writes: int  # K: the cadence cannot be priced beyond it
    at_edge: bool  # best_k == K: compacting even less often may be cheaper still, unmeasured

    @property
    def verdict(self) -> str:
        edge = f" or less often (only {self.measured_writes} writes were measured)" if self.at_edge else ""
        sure = "" if self.share >= DECISIVE else f", too close to call ({self.share:.0%} of resamples)"
        return f"compact {every(self.best_k)}{edge}{sure}"


def costs(writes: float | list[float], reads: list[float], compaction_s: float, reads_per_write: float) -> list[float]:
    """Cost per write for k = 1 … len(reads) (pure); ``writes`` each state's update (or one for every state)."""
    each = [float(writes)] * len(reads) if isinstance(writes, (int, float)) else list(writes)
    written, read = np.cumsum(each), np.cumsum(reads)
    return [float(written[k - 1] / k + reads_per_write * read[k - 1] / k + compaction_s / k) for k in range(1, len(reads) + 1)]


def _states(x: DegradationSequence) -> tuple[list[float], list[list[float]]] | None:
    """Each state's median read and its repeats: compacted (the read after compaction, else the one before the
    writes), then after each write."""
    if x.recovery.compaction_s is None or not x.series:
        return None
    start = x.recovery.read_after_compaction_s or x.read_before_s
    medians = [float(start)] + [float(s.read_s or 0.0) for s in x.series]
    repeats = [[float(start)]] + [list((s.read.seconds if s.read else None) or [s.read_s or 0.0]) for s in x.series]
    return medians, repeats


def cadence(r: Record, reads_per_write: float, seed: int = 0) -> Cadence | None:
    x = r.view(DegradationSequence)
    states = _states(x)
    if states is None:
        return None
    medians, repeats = states
    series = x.series
    writes = [float(s.update_s or 0.0) for s in series]  # the j-th after j - 1 un-compacted writes
    compaction_s = float(x.recovery.compaction_s or 0.0)
    curve = costs(writes, medians[:-1], compaction_s, reads_per_write)  # k writes read states 0 … k-1
    best = int(np.argmin(curve)) + 1
    rng = np.random.default_rng(seed)
    wins = 0
    for _ in range(RESAMPLES):
        drawn = [float(np.median(rng.choice(x, size=len(x)))) for x in repeats[:-1]]
        wins += int(np.argmin(costs(writes, drawn, compaction_s, reads_per_write))) + 1 == best
    return Cadence(r.config_id, reads_per_write, best, wins / RESAMPLES, curve, len(series), best == len(series))


def cadences(run: Run, reads_per_write: float) -> list[Cadence]:
    """Every merge-on-read configuration's cadence for one workload (those whose degradation run compacted)."""
    out = []
    for r in run.records(DEGRADATION):
        if run.matrix.merges_on_read(r.config_id):
            found = cadence(r, reads_per_write)
            if found is not None:
                out.append(found)
    return out


@dataclass(frozen=True)
class Checked:
    """The cadence check of one configuration: the cost per write measured at each k, beside the model's."""

    config_id: str
    reads_per_write: float
    measured: dict[int, tuple[float, float, float]]  # k -> (median, lowest, highest) over its cycles
    predicted: dict[int, float]  # k -> the degradation curve's cost, where its writes reach k
    recommended: int | None  # the degradation curve's best k, at the check's reads per write

    @property
    def cheapest(self) -> int:
        return min(self.measured, key=lambda k: self.measured[k][0])

    def within_cheapest(self, k: int) -> bool:
        """k's cycles reach down into the cheapest's range: the two are not told apart."""
        return self.measured[k][1] <= self.measured[self.cheapest][2]

    @property
    def verdict(self) -> str:
        best = self.cheapest
        if self.recommended is None:
            return f"cheapest measured: {every(best)} (no degradation run to recommend one)"
        if self.recommended not in self.measured:
            return f"cheapest measured: {every(best)}; {every(self.recommended)} was recommended, not measured"
        if best == self.recommended:
            close = [k for k in self.measured if k != best and self.within_cheapest(k)]
            return f"the recommendation holds: {every(best)} measured cheapest" + (
                f"; {', '.join(every(k) for k in close)} within its cycles' range (too close to call between them)"
                if close else "")
        if self.within_cheapest(self.recommended):
            return (f"too close to call at this scale: {every(best)} measured cheapest, "
                    f"{every(self.recommended)} (recommended) within its cycles' range")
        return f"the recommendation missed: {every(best)} measured cheapest, {every(self.recommended)} was recommended"


def checks(run: Run) -> list[Checked]:
    """Per configuration with cadence-check records: measured against predicted at each k (bench/report/cadence)."""
    by_config: dict[str, list[CadenceCycles]] = {}
    for r in run.records(COMPACTION_CADENCE):
        by_config.setdefault(r.config_id, []).append(r.view(CadenceCycles))
    out = []
    for config_id, points in sorted(by_config.items()):
        reads_per_write = float(points[0].reads_per_write)
        degradation = next((cadence(r, reads_per_write) for r in run.records(DEGRADATION) if r.config_id == config_id), None)
        measured = {p.writes_per_compaction: (float(p.cost_per_write_s), min(c.cost_per_write_s for c in p.cycles),
                                              max(c.cost_per_write_s for c in p.cycles)) for p in points if p.cycles}
        if not measured:
            continue
        predicted = {k: degradation.costs[k - 1] for k in measured if degradation and k <= len(degradation.costs)}
        out.append(Checked(config_id, reads_per_write, measured, predicted, degradation.best_k if degradation else None))
    return out


def checked_table(found: list[Checked]) -> pd.DataFrame:
    """One row per configuration and k: the measured cost per write, the curve's, and the verdict on the k measured
    cheapest (the report's table and the docs' figure both)."""
    rows = []
    for c in found:
        for k, (median, low, high) in sorted(c.measured.items()):
            rows.append({"configuration": c.config_id, "reads per write": f"{c.reads_per_write:g}",
                         "writes per compaction": k,
                         "measured s per write, median [cycles' range]": f"{median:.3f} [{low:.3f}, {high:.3f}]"
                         if low < high else f"{median:.3f} (one cycle: no range)",
                         "predicted (degradation curve)": f"{c.predicted[k]:.3f}" if k in c.predicted else "–",
                         "verdict": c.verdict if k == c.cheapest else ""})
    return pd.DataFrame(rows)


def _checked_section(found: list[Checked]) -> str:
    return ("<h4>Checked at the cadence and its neighbours</h4><p>The cycle run at each k (scenarios/"
            "test_compaction_cadence.py): k writes, the read in each state, the compaction; its cost per write beside "
            "the curve's at the same reads per write.</p>" + table(checked_table(found)))


def section(run: Run, workloads: list[tuple[str, float]], out) -> str:
    """The cadence per merge-on-read configuration and workload (``(name, reads per write)``), and the cost curve of
    the first workload."""
    rows, curves = [], []
    for name, reads_per_write in workloads:
        for c in cadences(run, reads_per_write):
            rows.append({"workload": name, "reads per write": f"{reads_per_write:,.4g}", "configuration": c.config_id,
                         "answer": c.verdict, "cost per write at it (s)": f"{c.costs[c.best_k - 1]:.3f}",
                         "at every write (s)": f"{c.costs[0]:.3f}"})
            if name == workloads[0][0]:
                curves += [{"config_id": c.config_id, "k": k, "cost": cost} for k, cost in enumerate(c.costs, 1)]
    found = checks(run)
    checked = _checked_section(found) if found else ""
    if not rows:
        return note("How often to compact: no degradation run with a compaction (scenarios/test_degradation.py).") + checked
    chart = img(charts.series(pd.DataFrame(curves), "k", "cost", f"Cost per write against writes per compaction "
                              f"({workloads[0][0]})", "writes per compaction", "seconds per write"),
                "cost per write against writes per compaction", out, "cadence") if curves else ""
    return (f"<h3>How often to compact</h3><p>{html.escape(__doc__.split(chr(10) + chr(10))[1])}</p>"
            + table(pd.DataFrame(rows)) + chart + checked)
