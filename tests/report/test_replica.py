"""The whole table predicted from replicas at two fractions: the straight line in the fraction, read at 1, its
interval never narrower than its points' intervals allow."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bench.report.sections import replica
from bench.results.schema import Replica, Uncertainty


def _run(fraction: float, medians: dict[str, tuple[float, float, float]], run_id: str):
    records = [SimpleNamespace(config_id=c, route="pruned", spread=Uncertainty(median=m, ci95=[lo, hi]))
               for c, (m, lo, hi) in medians.items()]
    return SimpleNamespace(env=SimpleNamespace(like=Replica(fraction=fraction, location="/t/payments")), run_id=run_id,
                           records=lambda scenario=None, operation=None, route=None: records)


def test_two_fractions_bridge_to_the_whole_table_with_the_reach_stated():
    # 6.5 s fixed plus 68 s per whole table: 13.3 s at a tenth, 20.1 s at a fifth, 74.5 s whole
    runs = [_run(0.1, {"iceberg-cow": (13.3, 12.3, 14.3)}, "a"), _run(0.2, {"iceberg-cow": (20.1, 19.1, 21.1)}, "b")]
    row = replica.predictions(runs).iloc[0]
    # the interval: the lines through one end of each fraction's interval (12.3 then 21.1 is the steepest)
    assert row.predicted_s == pytest.approx(74.5) and (row.low_s, row.high_s) == (pytest.approx(57.5), pytest.approx(91.5))
    assert row.reach == pytest.approx(5.0)
    assert row.measured == "F=0.1: 13.30 s [12.30, 14.30]; F=0.2: 20.10 s [19.10, 21.10]"
    assert "74.5 s [57.5, 91.5]" in replica.section(runs) and "5x beyond the largest fraction" in replica.section(runs)


def test_one_fraction_is_not_scaled_but_asks_for_a_second():
    runs = [_run(0.1, {"iceberg-mor": (2.6, 2.3, 2.7)}, "a")]
    assert replica.predictions(runs).iloc[0].predicted_s is None
    assert "one fraction: measure a second" in replica.section(runs)


def test_runs_that_replicate_nothing_give_no_section():
    plain = SimpleNamespace(env=SimpleNamespace(like=None), run_id="x", records=lambda *a, **k: [])
    assert replica.section([plain]) == ""


def test_a_noisy_fraction_widens_the_interval_and_the_prediction_stays_inside_it():
    """As measured on the seeds' replicas: iceberg-cow at F=0.1 13.43 s [9.97, 14.34], at F=0.2 15.45 s [14.92, 20.44]."""
    runs = [_run(0.1, {"iceberg-cow": (13.43, 9.97, 14.34)}, "a"), _run(0.2, {"iceberg-cow": (15.45, 14.92, 20.44)}, "b")]
    row = replica.predictions(runs).iloc[0]
    assert row.low_s <= row.predicted_s <= row.high_s
    assert row.low_s == pytest.approx(19.56, abs=0.01) and row.high_s == pytest.approx(104.2, abs=0.01)


def _whole(days: int, medians: dict[str, float], host: str = "h1"):
    records = [SimpleNamespace(config_id=c, route="pruned", origin=SimpleNamespace(host=host),
                               spread=Uncertainty(median=m, ci95=[m * 0.9, m * 1.1], n=5)) for c, m in medians.items()]
    return SimpleNamespace(env=SimpleNamespace(like=None, scale=SimpleNamespace(days=days, files_per_day=53,
                                                                                rows_per_file=32000)),
                           records=lambda scenario=None, operation=None, route=None: records,
                           origin=SimpleNamespace(host=host))


def _replica(fraction: float, medians: dict[str, tuple[float, float, float]], run_id: str, host: str = "h1"):
    run = _run(fraction, medians, run_id)
    run.env.like = Replica(fraction=fraction, location="/t/payments",
                           params={"days": round(90 * fraction), "files_per_day": 53, "rows_per_file": 32000})
    run.origin = SimpleNamespace(host=host)
    return run


def test_the_round_trip_sets_the_bridge_beside_the_whole_table_measured_on_one_host():
    from bench.report import figures

    replicas = [_replica(0.1, {"iceberg-cow": (13.3, 12.3, 14.3)}, "a"), _replica(0.2, {"iceberg-cow": (20.1, 19.1, 21.1)}, "b")]
    columns = [("seed", _whole(90, {"iceberg-cow": 80.0})), ("f0.1", replicas[0]), ("f0.2", replicas[1]),
               ("other", _whole(45, {"iceberg-cow": 1.0}))]
    row = figures.round_trip(columns).iloc[0]
    assert row["whole, predicted s"] == "74.5 [57.5, 91.5]"
    assert row["whole, measured s"] == "80.0 [72.0–88.0] 95% bootstrap, 5 rounds"
    assert row["predicted ÷ measured"] == "0.93x (within 25%)"
    far = figures.round_trip([("seed", _whole(90, {"iceberg-cow": 200.0})), *columns[1:3]]).iloc[0]
    assert far["predicted ÷ measured"] == "0.37x (beyond 25%)"
    elsewhere = figures.round_trip([("seed", _whole(90, {"iceberg-cow": 80.0}, host="h2")), *columns[1:3]]).iloc[0]
    assert elsewhere["predicted ÷ measured"] == "not divided (the whole ran on another host)"
    assert figures.round_trip(columns[1:2]).iloc[0]["whole, predicted s"] == "one fraction: not bridged"


def test_the_round_trip_bridges_one_hosts_replicas_and_takes_the_whole_from_that_host():
    """An earlier host's single fraction is left out (a line through two hosts' points bridges nothing), and of two
    wholes of the table the one measured on the replicas' host is the one divided."""
    from bench.report import figures

    earlier = _replica(0.2, {"iceberg-cow": (40.0, 39.0, 41.0)}, "old", host="h0")
    here = [_replica(0.1, {"iceberg-cow": (13.3, 12.3, 14.3)}, "a"), _replica(0.2, {"iceberg-cow": (20.1, 19.1, 21.1)}, "b")]
    columns = [("seed-old", _whole(90, {"iceberg-cow": 200.0}, host="h0")), ("old", earlier),
               ("seed", _whole(90, {"iceberg-cow": 80.0})), ("f0.1", here[0]), ("f0.2", here[1])]
    row = figures.round_trip(columns).iloc[0]
    assert row["replicas (update s, median [interval])"].count("F=0.2") == 1 and "40.00" not in row.iloc[2]
    assert row["whole, predicted s"] == "74.5 [57.5, 91.5]"
    assert row["predicted ÷ measured"] == "0.93x (within 25%)"
