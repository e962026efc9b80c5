"""How sure a figure is: a median with its 95% bootstrap interval and coefficient of variation.

Bootstrap (percentile method) over the rounds: resample the rounds with replacement, take the median of each
resample, and report the 2.5th and 97.5th percentiles of those medians. With very few rounds the interval is
wide (at 3 rounds it spans roughly [min, max]); that is the honest answer, not a defect.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

import numpy as np

RESAMPLES = 2000  # every bootstrap in the project: intervals, ratios, refits, verdicts' shares
DECISIVE = 0.90  # the share of resamples a verdict needs (a cheapest configuration, a claim, a cadence)
ROUNDS_FOR_VERDICT = 5  # a side: below this a percentile bootstrap is [min ÷ max, max ÷ min] and no verdict is stated
CV_FLAG = 0.10  # operations noisier than this are flagged in the summary and the report
METHOD = f"bootstrap percentile interval of the median, {RESAMPLES} resamples over rounds"


def resampled_medians(samples: list[float], rng: np.random.Generator, resamples: int = RESAMPLES) -> np.ndarray:
    data = np.asarray(samples, dtype=float)
    picks = rng.integers(0, len(data), size=(resamples, len(data)))
    return np.median(data[picks], axis=1)


def describe(samples: list[float], seed: int = 0) -> dict[str, Any]:
    """median, ci95 [low, high] (None for one round: one round has no spread to show), cv (stdev / mean; 0 for
    one round), n, and the interval's method."""
    n = len(samples)
    median = statistics.median(samples)
    if n < 2:
        return {"median": median, "ci95": None, "cv": 0.0, "n": n, "ci_method": METHOD}
    medians = resampled_medians(samples, np.random.default_rng(seed))
    low, high = np.percentile(medians, [2.5, 97.5])
    mean = statistics.fmean(samples)
    cv = statistics.stdev(samples) / mean if mean else 0.0
    return {"median": median, "ci95": [float(low), float(high)], "cv": float(cv), "n": n, "ci_method": METHOD}


def half_width(summary: dict) -> float | None:
    """Half the 95% interval relative to the median (0.1 = the median is known to ±10%); None without an interval."""
    if not summary.get("ci95"):
        return None
    low, high = summary["ci95"]
    return (high - low) / 2 / summary["median"] if summary["median"] else float("inf")


def median_text(median: float, interval: tuple[float, float] | list[float] | None, n: int | None, digits: int = 2,
                unit: str = "", of: str = "round") -> str:
    """One configuration's median with what its rounds support, the method named: ``3.41 [3.18–3.77] 95% bootstrap,
    6 rounds`` at ``ROUNDS_FOR_VERDICT`` rounds or more; ``3.41 (range 3.18–4.75, 3 rounds)`` below, where the
    percentile bootstrap of a median is the rounds' min–max; ``3.41 (one round: no interval)``."""
    text = f"{median:,.{digits}f}{unit}"
    if not interval or not n or n < 2:
        return f"{text} (one {of}: no interval)"
    low, high = interval
    if n < ROUNDS_FOR_VERDICT:
        return f"{text} (range {low:,.{digits}f}–{high:,.{digits}f}, {n} {of}s)"
    return f"{text} [{low:,.{digits}f}–{high:,.{digits}f}] 95% bootstrap, {n} {of}s"


# --- two configurations compared: a ratio of medians and how sure it is ---------------------------------------

SIGNIFICANCE = 0.05  # the exact rank test's two-sided p a verdict needs beside an interval that excludes a tie


@dataclass(frozen=True)
class RatioSpread:
    """A ratio of medians (``a`` over ``b``) with what its rounds can support, and the method named.

    At ``ROUNDS_FOR_VERDICT`` rounds a side or more: a percentile-bootstrap 95% interval of the ratio of medians. Below
    it: the plain range of round ratios [min(a) ÷ max(b), max(a) ÷ min(b)], called a range. Either way the exact
    two-sided Mann-Whitney rank test's p (scipy), which at 3 rounds a side is 0.10 at best, never 0.05.
    """

    ratio: float
    low: float | None
    high: float | None
    rounds: tuple[int, int]
    p: float | None

    @property
    def method(self) -> str:
        if self.low is None:
            return "one round: no interval"
        return "95% bootstrap" if min(self.rounds) >= ROUNDS_FOR_VERDICT else "range"

    @property
    def decided(self) -> bool:
        """Enough rounds, an interval that excludes a tie, and the rank test's p under ``SIGNIFICANCE``."""
        return self.method == "95% bootstrap" and self.low is not None and self.high is not None \
            and not self.low <= 1 <= self.high and self.p is not None and self.p <= SIGNIFICANCE

    def interval_text(self) -> str:
        """``[1.20–3.40] 95% bootstrap, 5+5 rounds, p 0.008`` or ``range 1.20–3.40, 3+3 rounds, p 0.10``."""
        if self.low is None or self.high is None:
            return "one round: no interval"
        rounds, p = f"{self.rounds[0]}+{self.rounds[1]} rounds", f"p {self.p:.2f}" if self.p is not None else "p –"
        p = "p < 0.01" if self.p is not None and self.p < 0.01 else p
        if self.method == "range":
            return f"range {self.low:.2f}–{self.high:.2f}, {rounds}, {p}"
        return f"[{self.low:.2f}–{self.high:.2f}] 95% bootstrap, {rounds}, {p}"

    def verdict(self, faster_a: str, faster_b: str) -> str:
        """``faster_b`` where ``a`` takes longer (ratio > 1), ``faster_a`` where shorter; else why none is stated."""
        if self.low is None:
            return "one round: no interval, no verdict"
        if self.method == "range":
            return f"no verdict: {min(self.rounds)} rounds a side (a verdict needs {ROUNDS_FOR_VERDICT})"
        if not self.decided:
            return "too close to call at this scale"
        return faster_b if self.ratio > 1 else faster_a


def rank_p(a: list[float], b: list[float]) -> float | None:
    """The exact two-sided Mann-Whitney U test's p for ``a`` against ``b`` (None with fewer than 2 rounds a side)."""
    if min(len(a), len(b)) < 2:
        return None
    from scipy.stats import mannwhitneyu

    return float(mannwhitneyu(a, b, alternative="two-sided", method="exact" if len(a) + len(b) <= 40 else "auto").pvalue)


def ratio_spread(a: list[float], b: list[float], rng: np.random.Generator, resamples: int = RESAMPLES) -> RatioSpread:
    """``median(a) ÷ median(b)`` with the interval its rounds support (``RatioSpread``)."""
    ratio, rounds = float(np.median(a) / np.median(b)), (len(a), len(b))
    if min(rounds) < 2:
        return RatioSpread(ratio, None, None, rounds, None)
    if min(rounds) < ROUNDS_FOR_VERDICT:
        return RatioSpread(ratio, float(min(a) / max(b)), float(max(a) / min(b)), rounds, rank_p(a, b))
    draws = resampled_medians(a, rng, resamples) / resampled_medians(b, rng, resamples)
    low, high = (float(v) for v in np.percentile(draws, [2.5, 97.5]))
    return RatioSpread(ratio, low, high, rounds, rank_p(a, b))
