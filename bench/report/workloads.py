"""The choice for a workload: each seed workload measured whole, priced per write across reads per write.

A workload's cost is its whole cycle: the writes, the reads they cause, the compaction that ends the cycle. The
dinner peak (upsert batches, dashboard reads after each, then compaction) and the monthly settlements (a few
adjustments, very many reads) each measure those parts on every configuration and route. From them, the cost per
write at ``r`` reads per write is ``W + r·R + C / n`` (W: a write's mean time, R: a read's, C: the compaction, n: the
writes of the cycle). The decision map is the cheapest configuration along ``r``, per workload and route; a point
where no configuration is cheapest in ``DECISIVE`` of the resamples (writes and reads drawn with replacement from
their own steps) is *too close to call*; a cycle of fewer than ``ROUNDS_FOR_VERDICT`` writes or reads on any side
gives no verdict at all (*too few steps*). Only configurations measured in one run on one host and commit are set
against each other (``Origin``). Spark's times: the engine the writes run on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bench.core.uncertainty import DECISIVE, RESAMPLES, ROUNDS_FOR_VERDICT
from bench.results.contract import DINNER_PEAK, SETTLEMENTS, UPDATE_SWEEP, Origin, Run
from bench.results.schema import DinnerPeakSequence, SettlementsSequence, SweepUpdate

TOO_CLOSE = "too close to call"
TOO_FEW = "too few steps for a verdict"
READS_PER_WRITE = tuple(float(r) for r in np.logspace(-2, 4, 31))  # 0.01 to 10,000: the dinner peak's 1/16 inside
# the seeds' own workloads, placed on the map: reads per write as the seeds state them, and the layout they claim wins
SEED_WORKLOADS = {"dinner peak (16 updates per read)": 1 / 16, "monthly settlements (4,500 reads per write)": 4500.0}
SEED_CLAIMS = {"dinner peak (16 updates per read)": ("merge-on-read is the clear winner", True),
               "monthly settlements (4,500 reads per write)": ("copy-on-write: dashboards pay no merge overhead", False)}
WORKLOAD_NAMES = {DINNER_PEAK: "dinner peak", SETTLEMENTS: "monthly settlements"}


@dataclass(frozen=True)
class WorkloadSamples:
    """One configuration's cycle of one workload by one route: every write's and read's time, the compaction."""

    scenario: str
    config_id: str
    route: str
    writes_s: list[float]
    reads_s: list[float]
    compaction_s: float  # 0 where the cycle has none (copy-on-write, or the settlements)
    bytes_written: int
    origin: Origin
    label: str | None = None  # a sweep point's own name: the update's shape (``shape_samples``)
    cycle: bool = True  # the reads were the workload's own after its writes (not a sweep point's dashboards)
    order: float = 0.0  # where the strip stands among its scenario's (a sweep point's share of files touched)

    @property
    def workload(self) -> str:
        return self.label or WORKLOAD_NAMES.get(self.scenario, self.scenario)

    @property
    def reads_per_write(self) -> float:
        return len(self.reads_s) / len(self.writes_s)

    @property
    def total_s(self) -> float:
        return sum(self.writes_s) + sum(self.reads_s) + self.compaction_s

    def per_write(self, r: float) -> float:
        return float(np.mean(self.writes_s) + r * np.mean(self.reads_s) + self.compaction_s / len(self.writes_s))


def samples(run: Run) -> list[WorkloadSamples]:
    """Every dinner peak and settlements cycle the run recorded (any route)."""
    out = []
    for r in run.records(DINNER_PEAK, "sequence", route=None):
        peak = r.view(DinnerPeakSequence)
        writes = [b.upsert_s for b in peak.series if b.upsert_s is not None]
        reads = [b.read_s for b in peak.series if b.read_s is not None]
        compaction = peak.compaction.seconds if peak.compaction and peak.compaction.seconds else 0.0
        if writes and reads:
            out.append(WorkloadSamples(r.scenario, r.config_id, r.route, writes, reads, float(compaction),
                                       sum(int(b.bytes_added or 0) for b in peak.series), r.origin))
    for r in run.records(SETTLEMENTS, "sequence", route=None):
        month = r.view(SettlementsSequence)
        writes = [w.seconds for w in month.writes if w.seconds is not None]
        reads = [t for times in month.reads.per_query_s.values() for t in times]
        if writes and reads:
            out.append(WorkloadSamples(r.scenario, r.config_id, r.route, writes, reads, 0.0,
                                       int(month.write_bytes_total or 0), r.origin))
    return out


def shape_samples(run: Run) -> list[WorkloadSamples]:
    """Every update sweep point that read its dashboards after the update, as a cycle of one shape: its rounds are the
    writes, its dashboards the reads, labelled by the share of the table's files the update touched."""
    out = []
    for r in run.records(UPDATE_SWEEP, "update", route=None):
        point = r.view(SweepUpdate)
        reads = [t for read in (point.reads_after or {}).values() for t in read.seconds]
        if not reads or not r.seconds or not point.files_total:
            continue
        share = point.files_touched / point.files_total
        out.append(WorkloadSamples(r.scenario, r.config_id, r.route, list(r.seconds), reads, 0.0,
                                   int(point.filesystem.bytes_added or 0), r.origin, cycle=False, order=share,
                                   label=f"{share:.1%} of files ({r.param}: {point.rows_targeted:,} rows)"))
    return out


def _groups(items: list[WorkloadSamples]) -> dict[tuple[str, float, str, str, tuple[str, str]], list[WorkloadSamples]]:
    """Per workload (a sweep point is one), route and (host, commit): what may be set against each other."""
    groups: dict[tuple[str, float, str, str, tuple[str, str]], list[WorkloadSamples]] = {}
    for s in items:
        groups.setdefault((s.scenario, s.order, s.workload, s.route, s.origin.key), []).append(s)
    return groups


def decision_map(items: list[WorkloadSamples], ratios: tuple[float, ...] = READS_PER_WRITE,
                 resamples: int = RESAMPLES, seed: int = 0) -> pd.DataFrame:
    """The cheapest configuration per workload, route and reads per write, with its share of resamples; ``cheapest``
    is ``TOO_CLOSE`` where that share is under ``DECISIVE`` (then ``contenders`` names the two likeliest)."""
    rows = []
    rng = np.random.default_rng(seed)
    for (scenario, _, workload, route, _), group in sorted(_groups(items).items(), key=lambda g: g[0][:4]):
        if len(group) < 2:
            continue
        drawn = {}
        for s in group:  # means of resampled steps: the cycle's cost is a sum, so its mean is the statistic
            w = np.asarray(s.writes_s)[rng.integers(0, len(s.writes_s), (resamples, len(s.writes_s)))].mean(axis=1)
            r = np.asarray(s.reads_s)[rng.integers(0, len(s.reads_s), (resamples, len(s.reads_s)))].mean(axis=1)
            drawn[s.config_id] = (w, r, s.compaction_s / len(s.writes_s))
        ids = list(drawn)
        steps = min(min(len(s.writes_s), len(s.reads_s)) for s in group)
        for ratio in ratios:
            costs = np.stack([w + ratio * r + c for w, r, c in drawn.values()])  # configs x resamples
            wins = np.bincount(costs.argmin(axis=0), minlength=len(ids)) / resamples
            order = np.argsort(-wins)
            best, share = ids[order[0]], float(wins[order[0]])
            point = {s.config_id: s.per_write(ratio) for s in group}
            rows.append({"workload": workload, "scenario": scenario, "route": route, "order": group[0].order,
                         "run": group[0].origin.run_id, "reads_per_write": ratio,
                         "cheapest": TOO_FEW if steps < ROUNDS_FOR_VERDICT else best if share >= DECISIVE else TOO_CLOSE,
                         "share": share, "steps": steps, "likeliest": best,
                         "contenders": f"{ids[order[0]]} or {ids[order[1]]}",
                         "measured_reads_per_write": float(np.mean([s.reads_per_write for s in group]))
                         if group[0].cycle else float("nan"),
                         **{f"s_per_write:{c}": v for c, v in point.items()}})
    return pd.DataFrame(rows)


def cycle_table(items: list[WorkloadSamples]) -> pd.DataFrame:
    """Each configuration's measured cycle: writes and reads with their ranges, compaction, total, bytes written."""
    rows = [{"workload": s.workload, "route": s.route, "configuration": s.config_id,
             "writes": len(s.writes_s), "write s (mean, range)": _spread(s.writes_s),
             "reads": len(s.reads_s), "read s (mean, range)": _spread(s.reads_s),
             "compaction s": f"{s.compaction_s:.2f}" if s.compaction_s else "–", "cycle s": f"{s.total_s:.1f}",
             "written": s.bytes_written, "run": s.origin.run_id}
            for s in sorted(items, key=lambda s: (s.scenario, s.route, s.total_s))]
    return pd.DataFrame(rows)


def reads_text(ratio: float) -> str:
    """Reads per write as a reader says them: ``0.0631``, ``1.58``, ``3,981``, ``10,000``."""
    return f"{ratio:,.0f}" if ratio >= 100 else f"{ratio:.3g}"


def _spread(values: list[float]) -> str:
    return f"{np.mean(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def at_seed_ratios(frame: pd.DataFrame, merges_on_read: Callable[[str], bool] | None = None) -> pd.DataFrame:
    """The map read at each seed workload's own reads per write (the nearest point computed), per route, with the
    seeds' claim for it decided: *holds* where the cheapest takes the layout the claim names, *does not hold* where it
    takes the other, else why no verdict (``merges_on_read``: the run's matrix; default, ids not ending ``-cow``)."""
    if frame.empty:
        return frame
    merges = merges_on_read or (lambda c: not c.endswith("-cow"))
    rows = []
    for (workload, route, run), part in frame.groupby(["workload", "route", "run"], sort=True):
        for label, ratio in SEED_WORKLOADS.items():
            if not label.startswith(workload):
                continue
            near = part.iloc[int(np.argmin(np.abs(np.log(part.reads_per_write.to_numpy()) - np.log(ratio))))]
            undecided = near.cheapest in (TOO_CLOSE, TOO_FEW)
            verdict = f"{near.cheapest}: {near.contenders}" if undecided else near.cheapest
            claim, wants_mor = SEED_CLAIMS[label]
            decided = near.cheapest if undecided else "holds" if merges(near.cheapest) == wants_mor else "does not hold"
            rows.append({"workload": label, "route": route, "at reads per write": reads_text(near.reads_per_write),
                         "cheapest": verdict, "share of resamples": f"{near.share:.0%}",
                         "the seeds' claim": claim, "claim": decided, "run": run})
    return pd.DataFrame(rows)


def sentence(frame: pd.DataFrame) -> str:
    """The map in one generated sentence per workload and route: who is cheapest where, and where it flips."""
    out = []
    ordered = frame.sort_values(["order", "workload", "route"], kind="stable") if "order" in frame else frame.sort_values(["workload", "route"])
    for (workload, route), part in ordered.groupby(["workload", "route"], sort=False):  # a sweep's points by share
        spans, start, current = [], part.reads_per_write.iloc[0], part.cheapest.iloc[0]
        for ratio, cheapest in zip(part.reads_per_write.iloc[1:], part.cheapest.iloc[1:]):
            if cheapest != current:
                spans.append((start, ratio, current))
                start, current = ratio, cheapest
        spans.append((start, part.reads_per_write.iloc[-1], current))
        text = "; ".join(f"{c} from {reads_text(a)} to {reads_text(b)} reads per write" for a, b, c in spans)
        out.append(f"{workload}, {route}: {text}.")
    return " ".join(out)


def seeds_reading(run: Run) -> pd.DataFrame:
    """The run's cycles read at the seeds' own workloads (``at_seed_ratios``), without the run column: the page that
    shows it names its runs (the report's first screen, the README's figure)."""
    read = at_seed_ratios(decision_map(samples(run)), run.matrix.merges_on_read)
    return read.drop(columns=["run"]) if "run" in read else read


@dataclass(frozen=True)
class Placed:
    """A user's table on the map (``report --table``): its reads per write and the share of its files an update
    touches, both from its profile or its ``NAME:key=value`` line."""

    name: str
    reads_per_write: float
    share: float
    route: str


def place(frame: pd.DataFrame, tables: list[Placed]) -> pd.DataFrame:
    """Each table read off a shape map (``decision_map`` of ``shape_samples``) on its own route: the sweep point
    nearest its share of files touched, at the nearest reads per write priced; why not where the map cannot say
    (``strip`` and ``x`` say where a chart marks it)."""
    rows = []
    for t in tables:
        part = frame[frame.route == t.route] if not frame.empty else frame
        row: dict[str, object] = {"table": t.name, "route": t.route, "reads per write": reads_text(t.reads_per_write),
               "files an update touches": f"{t.share * 100:.3g}%"}
        if part.empty:
            rows.append({**row, "nearest measured point": f"– (no sweep point measured by the {t.route} route)",
                         "cheapest": "–", "share of resamples": "–"})
            continue
        strip = part.iloc[int(np.argmin(np.abs(np.log(part.order.clip(lower=1e-9)) - np.log(max(t.share, 1e-9)))))]
        strip = part[part.order == strip.order]
        near = strip.iloc[int(np.argmin(np.abs(np.log(strip.reads_per_write.to_numpy()) - np.log(t.reads_per_write))))]
        far = max(near.order, t.share) / max(min(near.order, t.share), 1e-9)
        rows.append({**row, "strip": near.workload, "x": t.reads_per_write,
                     "nearest measured point": f"{near.workload}, {reads_text(near.reads_per_write)} reads per "
                     f"write" + (f" ({far:.0f}x off its share: read with care)" if far > 3 else ""),
                     "cheapest": f"{near.cheapest}: {near.contenders}" if near.cheapest in (TOO_CLOSE, TOO_FEW)
                     else near.cheapest, "share of resamples": f"{near.share:.0%}"})
    return pd.DataFrame(rows)
