"""The break-even model: total cost of a workload as a function of its read:write ratio.

Per write cycle, a configuration costs

    T(r) = W + r * R + C / k

W = median update time, R = median time of one dashboard read after the update (the un-compacted state,
an upper bound for merge-on-read between compactions), C = median compaction time (0 for copy-on-write),
k = writes per compaction, r = reads per write. Two configurations cost the same at

    r* = (W_a + C_a/k - W_b - C_b/k) / (R_b - R_a)

and the one with the cheaper reads wins above r*.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from bench.exceptions import BadOption
from bench.results.contract import DINNER_PEAK, HOTFIX, SETTLEMENTS


@dataclass(frozen=True)
class Costs:
    config_id: str
    write_s: float
    read_s: float
    compaction_s: float = 0.0
    read_after_compaction_s: float | None = None

    def total(self, reads_per_write: float, writes_per_compaction: float) -> float:
        return self.write_s + reads_per_write * self.read_s + self.compaction_s / writes_per_compaction


@dataclass(frozen=True)
class Profile:
    """A workload: reads per write and writes per compaction; ``scenario`` measures its own W, R and C where the
    run has it (else the payments hotfix stands in), ``rows_per_read`` states it in the seeds' units (row updates
    per read: the reads per write then follow from the scenario's own batch size); ``seed_choice`` is what the
    seed chose for it."""

    name: str
    reads_per_write: float
    writes_per_compaction: float
    source: str
    scenario: str | None = None
    seed_choice: str | None = None
    rows_per_read: float | None = None


SEED_PROFILES = (
    Profile("Razorpay monthly settlements", 4500, 10, "seed: ~2,000 adjustments a month vs ~3 lakh dashboard reads a day",
            SETTLEMENTS, "copy-on-write"),
    Profile("Swiggy dinner peak", 1 / 16, 16, "seed: ~16 row updates per read query at the peak, in small batches",
            DINNER_PEAK, "merge-on-read", rows_per_read=16),
    Profile("Nightly warehouse", 50_000_000 / 200, 200, "seed: 200 updates, then 50M reads the next day (its own stated "
            "mix, on the payments hotfix's costs)", None, "copy-on-write"),
)


def parse_profile(text: str) -> Profile:
    """``NAME:reads_per_write=N[,writes_per_compaction=K]`` (or just ``reads_per_write=N``).

    Raises:
        BadOption: malformed, unknown key, or a non-positive number.
    """
    name, _, spec = text.rpartition(":")
    values = {"writes_per_compaction": 10.0}
    for part in filter(None, spec.split(",")):
        key, sep, value = part.partition("=")
        if not sep or key.strip() not in ("reads_per_write", "writes_per_compaction"):
            raise BadOption(f"--profile {text!r}: expected NAME:reads_per_write=N[,writes_per_compaction=K]")
        try:
            values[key.strip()] = float(value)
        except ValueError:
            raise BadOption(f"--profile {text!r}: {value!r} is not a number") from None
    if "reads_per_write" not in values or not all(math.isfinite(v) and v > 0 for v in values.values()):
        raise BadOption(f"--profile {text!r}: reads_per_write (and writes_per_compaction) must be positive numbers")
    return Profile(name or "custom", values["reads_per_write"], values["writes_per_compaction"], "user-supplied")


def break_even(a: Costs, b: Costs, writes_per_compaction: float) -> float | None:
    """Reads per write at which ``a`` and ``b`` cost the same; None if one is cheaper at every ratio."""
    fixed = (a.write_s + a.compaction_s / writes_per_compaction) - (b.write_s + b.compaction_s / writes_per_compaction)
    slope = b.read_s - a.read_s
    if slope == 0:
        return None
    ratio = fixed / slope
    return ratio if ratio > 0 and math.isfinite(ratio) else None


def cheaper_above(a: Costs, b: Costs) -> str:
    """Which of the two wins when reads dominate (the one with the cheaper read)."""
    return a.config_id if a.read_s <= b.read_s else b.config_id


def recommend(costs: list[Costs], profile: Profile) -> list[tuple[str, float]]:
    """Configurations ranked by total cost per write cycle under ``profile`` (cheapest first)."""
    ranked = [(c.config_id, c.total(profile.reads_per_write, profile.writes_per_compaction)) for c in costs]
    return sorted(ranked, key=lambda item: item[1])


def costs_of(ops: pd.DataFrame, reads: pd.DataFrame, scenario: str = HOTFIX) -> dict[str, Costs]:
    """W, R, C per configuration from one scenario's update and compaction records."""
    out: dict[str, Costs] = {}
    updates = ops[(ops.scenario == scenario) & (ops.operation == "update")]
    for _, u in updates.iterrows():
        after = reads[(reads.config_id == u.config_id) & (reads.operation == "update") & (reads.phase == "after")]
        if after.empty:
            continue
        comp = ops[(ops.scenario == scenario) & (ops.operation == "compaction") & (ops.config_id == u.config_id)]
        post = reads[(reads.config_id == u.config_id) & (reads.phase == "after_compaction")]
        out[u.config_id] = Costs(u.config_id, float(u.median_s), float(after.median_s.mean()),
                                 float(comp.median_s.iloc[0]) if not comp.empty else 0.0,
                                 float(post.median_s.mean()) if not post.empty else None)
    return out
