"""The break-even and recommendation section: T(r) = W + r·R + C/k with resampled intervals."""


from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from bench.core import uncertainty
from bench.report import charts, confidence
from bench.report import profiles as profiles_mod
from bench.report.costmodel import Costs, Profile, cheaper_above, recommend
from bench.report.html_parts import img as _img
from bench.report.html_parts import note as _note
from bench.report.html_parts import table as _table
from bench.results import load
from bench.results.contract import Matrix


def recommendations(samples: dict[str, confidence.CostSamples], profiles: list[Profile], matrix: Matrix,
                    run: load.Run | None = None) -> pd.DataFrame:
    """Each workload profile priced on the run: the recommended configuration with its share of resamples, what
    priced it, and whether the seed's own choice agrees (the first screen and this section both show it)."""
    recs = []
    for pp in profiles_mod.priced(run, samples, profiles) if run is not None else \
            [profiles_mod.PricedProfile(p, samples, "payments hotfix") for p in profiles]:
        p = pp.profile
        [v], _, _ = confidence.simulate(pp.samples, [p], [], p.writes_per_compaction)
        ranked = recommend([s.point() for s in pp.samples.values()], p)
        best = ranked[0]
        recs.append({"workload": p.name, "reads per write": f"{p.reads_per_write:,.4g}",
                     "writes per compaction": f"{p.writes_per_compaction:,.0f}", "recommended": v.text(),
                     "cheapest in": ", ".join(f"{c} {share:.0%}" for c, share in v.ranked if share > 0),
                     "seed chose": p.seed_choice or "–",
                     "measurement": profiles_mod.agreement(p.seed_choice, v.ranked[0][0] if v.shares else None, v.decided
                                                           if v.shares else False, matrix.merges_on_read),
                     "cost per write cycle (medians)": f"{best[0]} {best[1]:,.2f} s", "priced by": pp.basis,
                     "source": p.source})
    return pd.DataFrame(recs)


def section_break_even(costs: dict[str, Costs], samples: dict[str, confidence.CostSamples], profiles: list[Profile],
                       out: Path, matrix: Matrix, recs: pd.DataFrame) -> str:
    if len(costs) < 1:
        return _note("nothing to model: the break-even prices the payments hotfix's update with the reads after it, and "
                     "this run has none; section 2 prices each workload measured whole")
    k_default = 10
    ratios = [10 ** (i / 10) for i in range(-20, 61)]
    curves = pd.DataFrame([{"config_id": c.config_id, "reads_per_write": r, "seconds": c.total(r, k_default)}
                           for c in costs.values() for r in ratios])
    pair_ids = matrix.cow_mor_pairs(samples)
    _, breaks, sims = confidence.simulate(samples, profiles, pair_ids, k_default, ratios=ratios)
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
                  "<h3>Recommendation per workload</h3>", _table(recs), "<h3>Model inputs</h3>", _table(inputs),
                  f'<p class="formula">{html.escape(formula)}</p>',
                  _note(f"Uncertainty: the rounds behind W, R and C are resampled together ({uncertainty.RESAMPLES} bootstrap "
                        "resamples) and T(r), every break-even and every recommendation recomputed; bands in the chart are "
                        "95% intervals. A configuration is recommended only where it is cheapest in at least "
                        f"{uncertainty.DECISIVE:.0%} of the resamples; otherwise the verdict is 'too close to call at this scale'."),
                  _note("Each profile is priced by its own scenario where the run measured it ('priced by'): the dinner peak "
                        "by its batch upserts, the reads after each batch and its compaction, with its reads per write from "
                        "the seed's 16 row updates per read query and the measured batch size; the settlements by their "
                        "adjustment batches and read mix. Otherwise, and for the break-even chart, the payments hotfix's W, R "
                        "and C stand in. 'Seed chose' is the seed's own answer for that workload; 'measurement' says whether "
                        "the measured recommendation agrees (undecided where it is too close to call).")]
    return "".join(html_parts)
