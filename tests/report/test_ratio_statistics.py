"""A ratio divides times of one host and commit only, and says what its rounds support (no JVM)."""

from __future__ import annotations

import json

import numpy as np

from bench.core import uncertainty
from bench.report import locate
from bench.results.load import load_run, merge
from tests.constructed import write_run

COW = {"iceberg-cow": ("iceberg", "cow", False)}
MOR = {"iceberg-mor": ("iceberg", "mor", True)}


def _run(folder, run_id, matrix, host, commit="abc123", seconds=None):
    run_dir = write_run(folder, run_id, matrix=matrix, operations=("update",))
    data = json.loads((run_dir / "benchmark.json").read_text())
    for b in data["benchmarks"]:
        if seconds:
            b["stats"]["data"], b["stats"]["median"] = seconds, float(np.median(seconds))
    data["cowmor"]["environment"] |= {"machine": {"cpus": 2, "host_id": host}, "harness_commit": commit}
    (run_dir / "benchmark.json").write_text(json.dumps(data))
    (run_dir / "environment.json").write_text(json.dumps(data["cowmor"]["environment"]))
    return load_run(run_dir)


def test_a_ratio_across_two_hosts_is_refused_and_one_host_is_divided(tmp_path):
    cow = _run(tmp_path, "cow-on-a", COW, host="host-a", seconds=[2.0, 2.1, 1.9, 2.0, 2.05])
    mor_elsewhere = _run(tmp_path, "mor-on-b", MOR, host="host-b", seconds=[1.0, 1.1, 0.9, 1.0, 1.05])
    mor_here = _run(tmp_path, "mor-on-a", MOR, host="host-a", seconds=[1.0, 1.1, 0.9, 1.0, 1.05])
    mor_other_commit = _run(tmp_path, "mor-on-a-later", MOR, host="host-a", commit="def456",
                            seconds=[1.0, 1.1, 0.9, 1.0, 1.05])

    def only(runs):
        view = merge(runs)
        [ratio] = locate.ratios(locate.located(view), view.matrix)
        return ratio

    refused = only([cow, mor_elsewhere])
    assert refused.crossed == ("cow-on-a", "mor-on-b") and not refused.divided and np.isnan(refused.ratio)
    assert refused.verdict.startswith("not divided") and refused.cell().startswith("not divided")
    assert not refused.decided
    assert only([cow, mor_other_commit]).crossed == ("cow-on-a", "mor-on-a-later")
    divided = only([cow, mor_here])
    assert divided.divided and divided.ratio == 2.0 and divided.verdict == "merge-on-read faster"


def test_a_newer_run_of_one_side_on_another_host_leaves_the_pair_one_run_measured_divided(tmp_path):
    """A merge keeps what a newer record replaced: iceberg-cow re-measured beside iceberg-dv elsewhere does not undo
    iceberg-cow ÷ iceberg-mor measured together; a view that asks for the newest alone gets the newer side."""
    dv = {"iceberg-dv": ("iceberg", "dv", True)}
    both = _run(tmp_path, "cow-mor-on-a", {**COW, **MOR}, host="host-a", seconds=[2.0, 2.1, 1.9, 2.0, 2.05])
    for b in both.benchmarks:
        if "mor" in b["name"]:
            b["stats"]["data"] = [1.0, 1.1, 0.9, 1.0, 1.05]
    later = _run(tmp_path, "cow-dv-on-b", {**COW, **dv}, host="host-b", seconds=[3.0, 3.1, 2.9, 3.0, 3.05])
    for b in later.benchmarks:
        if "dv" in b["name"]:
            b["stats"]["data"] = [1.5, 1.6, 1.4, 1.5, 1.55]
    view = merge([both, later])
    ratios = {r.mor: r for r in locate.ratios(locate.located(view, superseded=True), view.matrix)}
    assert ratios["iceberg-mor"].divided and ratios["iceberg-mor"].ratio == 2.0
    assert ratios["iceberg-dv"].divided and ratios["iceberg-dv"].ratio == 2.0
    newest = {r.mor: r for r in locate.ratios(locate.located(view), view.matrix)}
    assert newest["iceberg-mor"].crossed == ("cow-dv-on-b", "cow-mor-on-a")
    assert {r.origin.run_id for r in view.records(route=None) if r.config_id == "iceberg-cow"} == {"cow-dv-on-b"}


def test_a_ratio_of_sides_that_took_their_rounds_in_turn_says_so(tmp_path):
    """--interleave records each side's partners: the cell says *interleaved* only where each names the other."""
    folder = tmp_path / "both"
    run_dir = write_run(folder, "pair", matrix={**COW, **MOR}, operations=("update",))
    data = json.loads((run_dir / "benchmark.json").read_text())
    for b in data["benchmarks"]:
        b["stats"]["data"] = [2.0, 2.1, 1.9, 2.0, 2.05] if "cow" in b["name"] else [1.0, 1.1, 0.9, 1.0, 1.05]
    (run_dir / "benchmark.json").write_text(json.dumps(data))
    [plain] = locate.ratios(locate.located(load_run(run_dir)), load_run(run_dir).matrix)
    assert not plain.interleaved and "interleaved" not in plain.cell()
    for b in data["benchmarks"]:
        b["extra_info"]["rounds_plan"]["interleaved_with"] = ["iceberg-cow", "iceberg-mor"]
    (run_dir / "benchmark.json").write_text(json.dumps(data))
    [paired] = locate.ratios(locate.located(load_run(run_dir)), load_run(run_dir).matrix)
    assert paired.interleaved and paired.cell().endswith(", interleaved)")


def test_a_run_without_a_host_id_is_a_host_of_its_own(tmp_path):
    a = _run(tmp_path, "old-a", COW, host=None, seconds=[2.0, 2.1, 1.9, 2.0, 2.05])
    b = _run(tmp_path, "old-b", MOR, host=None, seconds=[1.0, 1.1, 0.9, 1.0, 1.05])
    view = merge([a, b])
    [ratio] = locate.ratios(locate.located(view), view.matrix)
    assert not ratio.divided


def test_three_rounds_a_side_give_a_range_and_no_verdict_five_give_a_bootstrap_interval():
    rng = np.random.default_rng(0)
    three = uncertainty.ratio_spread([2.0, 2.1, 1.9], [1.0, 1.1, 0.9], rng)
    assert three.method == "range" and (three.low, three.high) == (1.9 / 1.1, 2.1 / 0.9)
    assert abs(three.p - 0.1) < 1e-9 and not three.decided  # all three beat all three: p 0.10, never 0.05
    assert three.verdict("cow faster", "mor faster").startswith("no verdict: 3 rounds a side")
    assert "range" in three.interval_text() and "95%" not in three.interval_text()
    five = uncertainty.ratio_spread([2.0, 2.1, 1.9, 2.0, 2.05], [1.0, 1.1, 0.9, 1.0, 1.05], rng)
    assert five.method == "95% bootstrap" and five.p < 0.01 and five.decided
    assert five.verdict("cow faster", "mor faster") == "mor faster"
    tie = uncertainty.ratio_spread([1.0, 1.2, 0.9, 1.1, 1.0], [1.05, 0.95, 1.1, 1.0, 1.15], rng)
    assert tie.verdict("cow faster", "mor faster") == "too close to call at this scale"
    one = uncertainty.ratio_spread([2.0], [1.0], rng)
    assert one.low is None and one.verdict("a", "b").startswith("one round")


def test_a_median_says_what_its_rounds_support():
    """Below five rounds a median's interval is its rounds' range and is called one; from five, a 95% bootstrap."""
    assert uncertainty.median_text(3.41, (3.18, 4.75), 3) == "3.41 (range 3.18–4.75, 3 rounds)"
    assert uncertainty.median_text(3.41, (3.18, 3.77), 6) == "3.41 [3.18–3.77] 95% bootstrap, 6 rounds"
    assert uncertainty.median_text(3.41, None, 1) == "3.41 (one round: no interval)"
    assert uncertainty.median_text(1.7, (1.5, 1.9), 1, of="race") == "1.70 (one race: no interval)"
