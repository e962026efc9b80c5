"""Where merge-on-read starts to win: one update, swept from a handful of rows to a tenth of the table.

Points: 0.01%, 0.1%, 1% and 10% of the rows scattered uniformly, plus ``hotfix_rows`` rows clustered in
one or two files versus the same count scattered — the files-affected vs rows-affected pivot. Each point
is a pytest-benchmark with the base table restored before each round; the rows changed are verified by a query,
and the dashboards read after the update (what a read costs after an update of that shape: the decision map).

Run with:  pytest scenarios/test_update_sweep.py --scale tiny --formats iceberg
Grid:      every selected configuration x locate route (``--routes``; ``sweep_routes`` where set: the join at `tiny`)
           x SWEEP points x one scale.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.workload.datagen import HOTFIX_STATUS, TXN_ID_BASE
from bench.workload.queries import PAYMENTS_FRAME_COLUMNS, payments_frame, payments_queries

pytestmark = pytest.mark.spark
TABLE = "payments"  # the same base table as the hotfix: built once per configuration, restored per round
# the files-vs-rows pivot first: a scale running fewer points (``sweep_points``) keeps the most telling ones
SWEEP = ("clustered", "scattered", "10pct", "1pct", "0.1pct", "0.01pct")
FRACTIONS = {"0.01pct": 0.0001, "0.1pct": 0.001, "1pct": 0.01, "10pct": 0.1}


def sweep_keys(payments, point: str, fixed_rows: int) -> list[int]:
    if point in FRACTIONS:
        return payments.hotfix_keys(max(1, round(payments.rows * FRACTIONS[point])))
    if point == "scattered":
        return payments.hotfix_keys(fixed_rows)
    rng = np.random.default_rng([payments.seed, 3])
    start = int(rng.integers(0, payments.rows - fixed_rows))  # consecutive ids: one or two base files
    return list(range(TXN_ID_BASE + start, TXN_ID_BASE + start + fixed_rows))


def ROUTES(scale, selected: list[str]) -> list[str]:  # noqa: N802 - the plugin's hook name (bench/run/plugin.py)
    """The selected routes the scale's ``sweep_routes`` keeps; where it keeps none of them, the first selected."""
    return scale.kept_routes(scale.sweep_routes, selected)


# the grid, per the run's scale (the plugin parametrizes it): the first ``sweep_points`` points of SWEEP
GRID = {"point": lambda scale: [(p, p) for p in SWEEP[:scale.sweep_points]]}


@pytest.fixture(scope="module")
def dashboards_after(payments):
    """Per point: the dashboards and their answers once its rows carry the new status (computed once, in pandas)."""
    made: dict[str, tuple] = {}

    def after(point: str, keys: list[int]) -> tuple:
        if point not in made:
            queries = payments_queries(payments.last_day, lookup_id=keys[0])
            frame = payments_frame(payments.read_in_parts(PAYMENTS_FRAME_COLUMNS), keep=keys)
            frame.loc[frame["txn_id"].isin(keys), "status"] = HOTFIX_STATUS
            made[point] = (queries, {q.name: q.expected(frame) for q in queries})
        return made[point]
    return after


def test_update_sweep(benchmark, lab, payments, dashboards_after, config_id, route, point, progress):
    """One point of the sweep by one locate route (``--routes``): the share of files an update touches is the decision
    map's second axis, and how the rows are found decides whether merge-on-read's smaller write shows."""
    scale = lab.session.scale
    keys = sweep_keys(payments, point, scale.hotfix_rows)
    if route == "pruned" and len(keys) > scale.sweep_literal_keys_max:
        pytest.skip(f"route pruned: {len(keys):,} literal keys, more than sweep_literal_keys_max "
                    f"({scale.sweep_literal_keys_max:,}): an update of that many rows finds them by a join")
    files_touched = payments.files_holding(keys)
    table, rounds, changed = lab.status_update_rounds(
        benchmark, TABLE, payments, keys, scale.sweep_rounds, progress=progress, status=HOTFIX_STATUS,
        label=f"{config_id} ({route}) {point} ({len(keys)} rows in {files_touched} files)")
    queries, answers = dashboards_after(point, keys)
    progress(f"{config_id} ({route}) {point}: the dashboards after the update")
    lab.record(benchmark, "update_sweep", "update", rounds, param=point,
               rows_targeted=len(keys), rows_fraction=len(keys) / payments.rows,
               files_total=len(payments.files), rows_changed_verified=changed,
               reads_after=lab.reads(table, queries, answers, scale.read_repeats),
               **lab.located(rounds, len(payments.files), files_touched, payments.days_holding(keys), payments.days))
