"""Your table, measured on replicas: ``run --like PROFILE --fraction F`` at two or more fractions of its partitions,
and the whole table predicted from them by the one factor the replicas leave out.

A replica keeps the table's file size, files per partition and rows per file; a fraction F holds F of its partitions
and F of an update's rows (``bench.inspect.replica``). So between fractions only the amount of work grows: the
update's time is fitted as a straight line in F (a fixed part, the plan and the commit, plus a part per partition's
worth of files) and read at F = 1. One fraction cannot tell the fixed part from the rest: the section then says to
measure a second one instead of scaling it. How far the line reaches is stated: 1 / the largest fraction measured.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from bench.report.html_parts import note, table
from bench.results import load
from bench.results.contract import HOTFIX


def points(runs: list[load.Run]) -> pd.DataFrame:
    """One row per replica run, configuration and route: the fraction, the update's median and 95% interval."""
    rows = []
    for run in runs:
        like = run.env.like
        if not like or like.fraction is None:
            continue
        for r in run.records(HOTFIX, "update", route=None):
            spread = r.spread
            if spread.median is None:
                continue
            low, high = spread.ci95 or (spread.median, spread.median)
            rows.append({"table": like.location or like.profile, "configuration": r.config_id,
                         "route": r.route, "fraction": float(like.fraction), "median_s": spread.median,
                         "low_s": low, "high_s": high, "run": run.run_id})
    return pd.DataFrame(rows)


def bridge(g: pd.DataFrame) -> dict:
    """The whole table's update time from the fractions measured: a straight line in the fraction through the
    medians, read at F = 1; its interval spans the lines through every choice of each fraction's interval end (a
    noisy fraction widens it, as it should); None with one fraction."""
    by_fraction = g.groupby("fraction")[["median_s", "low_s", "high_s"]].median().sort_index()
    if len(by_fraction) < 2:
        return {"predicted_s": None, "low_s": None, "high_s": None, "reach": None}
    f = by_fraction.index.to_numpy()

    def at_one(y) -> float:
        slope, fixed = np.polyfit(f, np.asarray(y, dtype=float), 1)
        return float(fixed + slope)

    ends = [at_one(choice) for choice in itertools.product(*zip(by_fraction.low_s, by_fraction.high_s))]
    predicted = at_one(by_fraction.median_s)
    return {"predicted_s": predicted, "low_s": min(ends + [predicted]), "high_s": max(ends + [predicted]),
            "reach": 1 / float(f.max())}


def predictions(runs: list[load.Run]) -> pd.DataFrame:
    """Per table, configuration and route: the fractions measured and the whole table's predicted update time."""
    pts = points(runs)
    if pts.empty:
        return pts
    rows = []
    for (name, config_id, route), g in pts.groupby(["table", "configuration", "route"], sort=True):
        fitted = bridge(g)
        rows.append({"table": name, "configuration": config_id, "route": route,
                     "measured": "; ".join(f"F={r.fraction:g}: {r.median_s:.2f} s [{r.low_s:.2f}, {r.high_s:.2f}]"
                                           for r in g.sort_values("fraction").itertuples()),
                     **fitted})
    return pd.DataFrame(rows)


def section(runs: list[load.Run]) -> str:
    frame = predictions(runs)
    if frame.empty:
        return ""
    shown = frame.assign(**{
        "whole table, predicted": [("one fraction: measure a second (e.g. --fraction 2F) to bridge it" if p is None
                                    else f"{p:.1f} s [{lo:.1f}, {hi:.1f}]")
                                   for p, lo, hi in zip(frame.predicted_s, frame.low_s, frame.high_s)],
        "reach": ["–" if r is None else f"{r:.0f}x beyond the largest fraction" for r in frame.reach]})
    return table(shown[["table", "configuration", "route", "measured", "whole table, predicted", "reach"]]) + note(
        "Replicas of a profiled table (run --like PROFILE --fraction F): each keeps the table's file size, files per "
        "partition and rows per file, and holds F of its partitions and F of an update's rows. The whole table's "
        "update time is the straight line through the fractions' medians read at F = 1 (its interval: every line "
        "through one end of each fraction's interval); the reach says how far beyond the measurements it is read.")
