"""Published claims next to what a run measured, each with a verdict and its source."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bench.core import uncertainty
from bench.report import confidence
from bench.report.costmodel import Costs
from bench.report.workloads import TOO_CLOSE, TOO_FEW, WorkloadSamples, decision_map
from bench.results.contract import DINNER_PEAK, HOTFIX, Matrix

SEED = "cowmor seed workloads (Razorpay payments hotfix / settlements, Swiggy dinner peak)"
LHBENCH = "Jain et al., 'Analyzing and Comparing Lakehouse Storage Systems', CIDR 2023 (LHBench)"
LSTBENCH = "Camacho-Rodríguez et al., 'LST-Bench', SIGMOD 2024"

HOLDS, FAILS, UNMEASURABLE = "holds", "does not hold", "not measurable at this scale"
INCONCLUSIVE = "inconclusive at this scale"


@dataclass(frozen=True)
class Claim:
    claim: str
    source: str
    measured: str
    verdict: str


def _pairs(costs: dict[str, Costs], matrix: Matrix) -> list[tuple[Costs, Costs]]:
    return [(costs[a], costs[b]) for a, b in matrix.cow_mor_pairs(costs)]


def _dv_claim(updates: pd.DataFrame) -> Claim:
    """Deletion vectors (Iceberg v3 Puffin, Delta) against Iceberg v2 position-delete files, same update."""
    text = "Deletion vectors are smaller than position delete files"
    dvs = [c for c in ("iceberg-dv", "delta-dv") if c in updates.index]
    if "iceberg-mor" not in updates.index or not dvs:
        return Claim(text, SEED, "needs iceberg-mor and at least one of iceberg-dv / delta-dv measured", UNMEASURABLE)

    def size(config_id: str) -> str:
        u = updates.loc[config_id]
        return f"{config_id} {u.fs_delete_bytes_added:,.0f} B in {int(u.fs_delete_files_added)} file(s)"
    pos = updates.loc["iceberg-mor", "fs_delete_bytes_added"]
    # a Delta DV small enough to sit inline in the log has no file; its bytes are then in the log, not counted here
    holds = all(updates.loc[c, "fs_delete_bytes_added"] < pos for c in dvs)
    return Claim(text, SEED, "; ".join(size(c) for c in [*dvs, "iceberg-mor"]) + " (position deletes)",
                 HOLDS if holds else FAILS)


def _read_optimized_claim(staleness: dict[str, float] | None) -> Claim:
    text = "Hudi MoR read-optimized reads are stale: they miss the changes not yet compacted"
    source = "cowmor seed workloads (Swiggy dinner peak: read-optimized dashboards, hourly compaction)"
    if not staleness:
        return Claim(text, source, "dinner peak on hudi-mor not in these runs", UNMEASURABLE)
    s = staleness
    measured = (f"before compaction {s['not_visible']} of {s['updated']} updated rows not visible to the "
                f"read-optimized lookup ({s['ro_s']:.2f}s each) — exactly the {s['in_logs']} rows Hudi wrote to log files "
                f"(updates that shared a small file group with new inserts were merged into a new base file instead); "
                f"after compaction {s['not_visible_after']} not visible")
    holds = s["not_visible"] == s["in_logs"] > 0 and s["not_visible_after"] == 0
    return Claim(text, source, measured, HOLDS if holds else FAILS)


def _decide(share: float) -> str:
    """A share of resamples in which the claim held -> its verdict (decided only beyond uncertainty.DECISIVE)."""
    return HOLDS if share >= uncertainty.DECISIVE else FAILS if share <= 1 - uncertainty.DECISIVE else INCONCLUSIVE


def _cycle_pairs(cycles: list[WorkloadSamples], matrix: Matrix) -> list[tuple[WorkloadSamples, WorkloadSamples]]:
    """Each copy-on-write / merge-on-read pair of one workload, route and run among the cycles measured whole."""
    by_key = {(s.scenario, s.route, s.origin.key, s.config_id): s for s in cycles}
    groups = sorted({key[:3] for key in by_key})
    return [(by_key[(*group, cow)], by_key[(*group, mor)]) for group in groups
            for cow, mor in matrix.cow_mor_pairs({c for *g, c in by_key if tuple(g) == group})]


def _cow_at_ten_from_cycles(text: str, cycles: list[WorkloadSamples], matrix: Matrix) -> Claim:
    """The claim on the workloads measured whole: per pair, the cheaper per write at 10 reads per write."""
    pairs = _cycle_pairs(cycles, matrix)
    if not pairs:
        return Claim(text, SEED, "no CoW/MoR pair measured", UNMEASURABLE)
    parts, verdicts = [], []
    for cow, mor in pairs:
        [row] = decision_map([cow, mor], ratios=(10.0,)).to_dict("records")
        verdict = INCONCLUSIVE if row["cheapest"] in (TOO_CLOSE, TOO_FEW) else HOLDS if row["cheapest"] == cow.config_id else FAILS
        parts.append(f"{cow.workload} ({cow.route}): {cow.config_id} {cow.per_write(10):.2f}s vs {mor.config_id} "
                     f"{mor.per_write(10):.2f}s per write at 10 reads per write, {row['likeliest']} cheaper in "
                     f"{row['share']:.0%} of resamples")
        verdicts.append(verdict)
    verdict = HOLDS if all(v == HOLDS for v in verdicts) else FAILS if FAILS in verdicts else INCONCLUSIVE
    return Claim(text, SEED, "; ".join(parts), verdict)


def _cow_at_ten_claim(costs: dict[str, Costs], draws: list[dict[str, Costs]], matrix: Matrix,
                      cycles: list[WorkloadSamples] | None = None) -> Claim:
    text = "Choose copy-on-write when reads outnumber writes ~10:1"
    pairs = [(cow, mor) for cow, mor in _pairs(costs, matrix) if draws and cow.config_id in draws[0] and mor.config_id in draws[0]]
    if not pairs:
        return _cow_at_ten_from_cycles(text, cycles or [], matrix)
    parts, verdicts = [], []
    for cow, mor in pairs:
        a = [d[cow.config_id].total(10, 10) for d in draws]
        b = [d[mor.config_id].total(10, 10) for d in draws]
        share = sum(x <= y for x, y in zip(a, b)) / len(draws)
        (alo, ahi), (blo, bhi) = confidence.interval(a), confidence.interval(b)
        parts.append(f"{cow.config_id} {cow.total(10, 10):.2f}s [{alo:.2f}, {ahi:.2f}] vs {mor.config_id} "
                     f"{mor.total(10, 10):.2f}s [{blo:.2f}, {bhi:.2f}] at 10 reads/write: CoW cheaper in {share:.0%} of resamples")
        verdicts.append(_decide(share))
    # a general claim: one pair where MoR is clearly cheaper at 10:1 is enough to say it does not hold
    verdict = HOLDS if all(v == HOLDS for v in verdicts) else FAILS if FAILS in verdicts else INCONCLUSIVE
    return Claim(text, SEED, "; ".join(parts), verdict)


HUDI_CLAIMED = (1.3, 3.2)  # LHBench's TPC-DS refresh: MoR merges ~1.3x faster than CoW, queries after ~3.2x slower


def _hudi_from_cycles(text: str, cycles: list[WorkloadSamples]) -> Claim:
    """The claim on the dinner peak measured whole (upserts, the dashboards after each): per route, Hudi MoR's upsert
    and read against CoW's, each a ratio with what its steps support, decided on the claimed magnitudes."""
    pairs = _cycle_pairs([s for s in cycles if s.scenario == DINNER_PEAK], Matrix.from_ids(["hudi-cow", "hudi-mor"]))
    if not pairs:
        return Claim(text, LHBENCH, "hudi-cow/hudi-mor not measured in this run (see skipped configurations)", UNMEASURABLE)
    rng, parts, verdicts = np.random.default_rng(0), [], []
    claimed_merge, claimed_query = HUDI_CLAIMED
    for cow, mor in pairs:
        merge = uncertainty.ratio_spread(cow.writes_s, mor.writes_s, rng)
        query = uncertainty.ratio_spread(mor.reads_s, cow.reads_s, rng)
        inside = all(x.low is not None and x.high is not None and x.low <= want <= x.high
                     for x, want in ((merge, claimed_merge), (query, claimed_query)))
        sure = merge.method == "95% bootstrap" and query.method == "95% bootstrap"
        parts.append(f"dinner peak ({cow.route}): CoW ÷ MoR upsert time {merge.ratio:.2f}x ({merge.interval_text()}), "
                     f"MoR ÷ CoW read time {query.ratio:.2f}x ({query.interval_text()})")
        verdicts.append(HOLDS if inside and sure else FAILS if sure else INCONCLUSIVE)
    verdict = HOLDS if all(v == HOLDS for v in verdicts) else FAILS if FAILS in verdicts else INCONCLUSIVE
    return Claim(text, LHBENCH, "; ".join(parts) + f"; claimed {claimed_merge:g}x and {claimed_query:g}x", verdict)


def _hudi_claim(costs: dict[str, Costs], draws: list[dict[str, Costs]], cycles: list[WorkloadSamples] | None = None) -> Claim:
    text = "Hudi MoR merges ~1.3x faster than CoW; post-merge queries ~3.2x slower"
    if not {"hudi-cow", "hudi-mor"} <= set(costs) or not draws or not {"hudi-cow", "hudi-mor"} <= set(draws[0]):
        return _hudi_from_cycles(text, cycles or [])
    cow, mor = costs["hudi-cow"], costs["hudi-mor"]
    merge = [d["hudi-cow"].write_s / d["hudi-mor"].write_s for d in draws]
    query = [d["hudi-mor"].read_s / d["hudi-cow"].read_s for d in draws]
    share = sum(m > 1 and q > 1 for m, q in zip(merge, query)) / len(draws)
    (mlo, mhi), (qlo, qhi) = confidence.interval(merge), confidence.interval(query)
    # a claim of magnitude, decided on it: each claimed factor inside its measured interval; the direction beside it
    claimed_merge, claimed_query = HUDI_CLAIMED
    inside = mlo <= claimed_merge <= mhi and qlo <= claimed_query <= qhi
    return Claim(text, LHBENCH, f"MoR merge {cow.write_s / mor.write_s:.2f}x faster [{mlo:.2f}, {mhi:.2f}], queries "
                                f"{mor.read_s / cow.read_s:.2f}x slower [{qlo:.2f}, {qhi:.2f}] (95% intervals of the resampled "
                                f"rounds); the claimed {claimed_merge:g}x and {claimed_query:g}x "
                                f"{'both inside them' if inside else 'not both inside them'}; the direction alone held in "
                                f"{share:.0%} of resamples", HOLDS if inside else FAILS)


def check(ops: pd.DataFrame, costs: dict[str, Costs], degradation: dict[str, float],
          staleness: dict[str, float] | None = None, samples: dict[str, confidence.CostSamples] | None = None,
          matrix: Matrix | None = None, cycles: list[WorkloadSamples] | None = None) -> list[Claim]:
    """Every claim with its verdict; timing claims are decided on resampled rounds (holds / does not hold only
    when at least ``uncertainty.DECISIVE`` of the resamples agree, else inconclusive at this scale)."""
    draws = confidence.resampled(samples) if samples else []
    matrix = matrix or Matrix.from_ids(costs)
    claims = [_cow_at_ten_claim(costs, draws, matrix, cycles)]

    updates = ops[(ops.operation == "update") & (ops.scenario == HOTFIX)].set_index("config_id") if not ops.empty else pd.DataFrame()
    ratios = []
    for a, b in matrix.cow_mor_pairs(set(updates.index)):
        wa = updates.loc[a, "fs_data_bytes_added"] + updates.loc[a, "fs_delete_bytes_added"]
        wb = updates.loc[b, "fs_data_bytes_added"] + updates.loc[b, "fs_delete_bytes_added"]
        ratios.append((a, b, wa / wb if wb else float("inf")))
    if ratios:
        text = "; ".join(f"{a} writes {r:,.1f}x the bytes of {b}" for a, b, r in ratios)
        claims.append(Claim("MoR write bytes are orders of magnitude below CoW for scattered updates", SEED, text,
                            HOLDS if all(r >= 100 for *_, r in ratios) else ("partly (one order of magnitude)" if all(r >= 10 for *_, r in ratios) else FAILS)))
    else:
        claims.append(Claim("MoR write bytes are orders of magnitude below CoW for scattered updates", SEED, "no pair measured", UNMEASURABLE))

    mor_rates = {k: v for k, v in degradation.items() if not k.endswith("-cow")}
    if mor_rates:
        text = "; ".join(f"{k}: {v:+.1%} per batch" for k, v in sorted(mor_rates.items()))
        claims.append(Claim("MoR read cost grows with un-compacted log entries", f"{SEED}; {LSTBENCH}", text,
                            HOLDS if all(v > 0 for v in mor_rates.values()) else FAILS))
    else:
        claims.append(Claim("MoR read cost grows with un-compacted log entries", f"{SEED}; {LSTBENCH}",
                            "degradation scenario not in these runs", UNMEASURABLE))

    claims.append(_dv_claim(updates))
    claims.append(_hudi_claim(costs, draws, cycles))
    claims.append(_read_optimized_claim(staleness))
    return claims
