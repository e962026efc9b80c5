"""How sure a figure is: a median with its 95% bootstrap interval and coefficient of variation.

Bootstrap (percentile method) over the rounds: resample the rounds with replacement, take the median of each
resample, and report the 2.5th and 97.5th percentiles of those medians. With very few rounds the interval is
wide (at 3 rounds it spans roughly [min, max]); that is the honest answer, not a defect.
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np

RESAMPLES = 2000
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
