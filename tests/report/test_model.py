"""The cost model on constructed points: it recovers known coefficients, its check flags a point it cannot predict,
and it turns a user's table into a verdict with its confidence."""

from __future__ import annotations

import numpy as np
import pytest

from bench.exceptions import BadOption
from bench.report.fitted import ConfigModel
from bench.report.model import MB, Point, files_touched, fit, held_out, nnls, parse_table, table_drivers
from bench.report.sections.file_size import table_text, user_table

DRIVERS = ["files_touched", "bytes_in_touched_files"]


def _points(a: float, per_file: float, per_mb: float, noise: float = 0.0, seed: int = 1) -> list[Point]:
    rng = np.random.default_rng(seed)
    out = []
    for files, mb in ((3, 0.3), (3, 1.2), (3, 4.8), (3, 19.2), (3, 76.8), (100, 0.17)):
        x = {"files_touched": files, "bytes_in_touched_files": files * mb * MB, "table_bytes": 2 * files * mb * MB}
        y = a + per_file * files + per_mb * files * mb
        out.append(Point(x, [y * (1 + noise * rng.standard_normal()) for _ in range(5)], f"{mb} MB"))
    return out


def test_a_fit_recovers_known_coefficients():
    model = fit(_points(2.0, 0.05, 0.04), DRIVERS, resamples=50)
    assert model.coef[0] == pytest.approx(2.0, rel=1e-6)
    assert model.coef[1] == pytest.approx(0.05, rel=1e-6)
    assert model.coef[2] * MB == pytest.approx(0.04, rel=1e-6)
    p, lo, hi = model.predict({"files_touched": 1000, "bytes_in_touched_files": 1000 * 1.25 * MB})
    assert p == pytest.approx(2.0 + 50 + 50, rel=1e-6) and lo <= p <= hi


def test_noisy_points_give_an_interval_that_holds_the_truth():
    model = fit(_points(2.0, 0.05, 0.04, noise=0.05), DRIVERS, resamples=300)
    truth = 2.0 + 0.05 * 3 + 0.04 * 3 * 300
    p, lo, hi = model.predict({"files_touched": 3, "bytes_in_touched_files": 3 * 300 * MB})
    assert lo < truth < hi and lo < p < hi


def test_single_measurements_still_get_an_interval():
    """One compaction a step: no rounds to resample, so the residuals are; the interval is not a point."""
    points = [Point(p.drivers, [p.samples[0] * (1.1 if i % 2 else 0.9)], p.label) for i, p in enumerate(_points(2.0, 0.05, 0.04))]
    model = fit(points, DRIVERS, resamples=200)
    _, lo, hi = model.predict({"files_touched": 3, "bytes_in_touched_files": 3 * 50 * MB})
    assert hi > lo


def test_coefficients_stay_non_negative():
    coef = nnls(np.array([[1.0, 1.0], [1.0, 2.0], [1.0, 3.0]]), np.array([3.0, 2.0, 1.0]))  # falling: slope 0
    assert np.all(coef >= 0) and coef[1] == 0


def test_the_check_passes_a_point_on_the_line_and_flags_one_off_it():
    good = held_out(_points(2.0, 0.05, 0.04, noise=0.02), DRIVERS, "bytes_in_touched_files", resamples=200)
    assert good.label == "76.8 MB" and good.inside
    assert good.reach == pytest.approx(4.0)  # 4x the bytes of the largest point it was fitted on
    points = _points(2.0, 0.05, 0.04, noise=0.02)
    points[4] = Point(points[4].drivers, [s * 3 for s in points[4].samples], points[4].label)  # 3x slower than the line
    bad = held_out(points, DRIVERS, "bytes_in_touched_files", resamples=200)
    assert not bad.inside and bad.measured > bad.high


def test_too_few_points_fit_nothing():
    assert fit(_points(1, 1, 1)[:2], DRIVERS) is None
    assert held_out(_points(1, 1, 1)[:3], DRIVERS, "bytes_in_touched_files") is None


def test_files_touched_by_scattered_rows():
    assert files_touched(4800, 1200) == pytest.approx(1061.9, abs=0.1)  # 4800 x (1 - (4799/4800)^1200)
    assert files_touched(1, 5) == 1.0
    assert table_drivers(47, 128, 1200)["files_touched"] == pytest.approx(47, abs=0.01)


@pytest.mark.parametrize("text, message", [("x", "expected NAME"), ("x:files=10", "missing file_mb"),
                                           ("x:files=10,file_mb=nan,rows_per_update=1", "finite"),
                                           ("x:files=10,file_mb=1,rows_per_update=1,bogus=2", "unknown 'bogus'"),
                                           ("x:files=0,file_mb=1,rows_per_update=1", "files ≥ 1"),
                                           ("x:files=10,file_mb=1,rows_per_update=1,partitions=11", "between 1 and files")])
def test_bad_tables_are_named(text, message):
    with pytest.raises(BadOption, match=message):
        parse_table(text)


def test_a_user_table_gets_a_verdict_with_its_confidence():
    reads = [Point(p.drivers, [0.5 + p.drivers["table_bytes"] / MB * 0.001] * 3, p.label) for p in _points(1, 1, 1)]
    mor_reads = [Point(p.drivers, [s * 1.5 for s in p.samples], p.label) for p in reads]
    cow = ConfigModel("a-cow", fit(_points(2.0, 0.05, 0.04), DRIVERS, resamples=50),
                      fit(reads, ["table_bytes", "files_touched"], resamples=50), None, {})
    mor = ConfigModel("a-mor", fit(_points(2.0, 0.01, 0.0001), DRIVERS, resamples=50),
                      fit(mor_reads, ["table_bytes", "files_touched"], resamples=50), None, {})
    read_heavy = parse_table("dash:files=100,file_mb=1,rows_per_update=10,updates_per_day=1,reads_per_day=100000")
    frame, verdict, _ = user_table(read_heavy, {"a-cow": cow, "a-mor": mor})
    assert verdict.startswith("a-cow") and "100% of resamples" in verdict and len(frame) == 2
    write_heavy = parse_table("ingest:files=4800,file_mb=128,rows_per_update=1200,updates_per_day=100,reads_per_day=1")
    _, verdict, reach = user_table(write_heavy, {"a-cow": cow, "a-mor": mor})
    assert verdict.startswith("a-mor") and reach > 100
    text = table_text(write_heavy, {"a-cow": cow, "a-mor": mor})  # the terminal's copy says what the model cannot price
    assert "recommended: a-mor" in text and "prices files alone" in text and "outside the measured range" in text


def test_a_new_measurements_interval_is_wider_than_the_coefficients_alone():
    points = [Point({"x": x}, [2 + x * 0.5 + e for e in (-0.3, 0.0, 0.3)], f"p{x}") for x in (1, 2, 4, 8)]
    model = fit(points, ["x"])
    _, low, high = model.predict({"x": 16})
    _, new_low, new_high = model.predict_new({"x": 16})
    assert new_low < low and new_high > high


def test_the_route_decides_what_the_search_goes_through():
    join = table_drivers(4800, 1.25, 1200, "join")
    pruned = table_drivers(4800, 1.25, 1200, "pruned")
    assert join["locate_bytes"] == join["table_bytes"] == 4800 * 1.25 * MB
    assert pruned["locate_bytes"] == pruned["bytes_in_touched_files"] < join["locate_bytes"] / 4
    assert parse_table("t:files=10,file_mb=128,rows_per_update=5,route=pruned").route == "pruned"
    assert parse_table("t:files=10,file_mb=128,rows_per_update=5").route == "join"
    with pytest.raises(BadOption, match="route 'scan'"):
        parse_table("t:files=10,file_mb=128,rows_per_update=5,route=scan")


def test_a_driver_that_is_another_under_a_new_name_is_not_fitted_twice():
    from bench.report.fitted import identified

    points = [Point({"a": v, "b": v, "c": 2.0, "d": v * v}, [1.0], str(v)) for v in (1.0, 2.0, 3.0)]
    assert identified(points, ["a", "b", "c", "d"]) == ["a", "d"]


def test_a_driver_told_apart_at_one_point_only_is_not_fitted():
    """Partitions touched equal files touched at every file-size step: one hotfix layout alone would set their split."""
    from bench.report.fitted import identified

    steps = [Point({"files": f, "parts": f}, [1.0], f"step {f}") for f in (1.0, 2.0, 3.0)]
    one = [*steps, Point({"files": 100.0, "parts": 68.0}, [1.0], "90 days")]
    assert identified(one, ["files", "parts"]) == ["files"]
    two = [*one, Point({"files": 100.0, "parts": 8.0}, [1.0], "8 days")]
    assert identified(two, ["files", "parts"]) == ["files", "parts"]
    assert identified([*two, Point({"files": 5.0}, [1.0], "older record")], ["files", "parts"]) == ["files"]


def test_the_partitions_a_table_update_touches():
    seed = table_drivers(4800, 1.25, 1200, "pruned", partitions=90)
    assert seed["partitions_touched"] == pytest.approx(90, abs=0.01) and seed["files_touched"] == pytest.approx(1061.9, abs=0.1)
    assert table_drivers(4800, 1.25, 1200)["partitions_touched"] == pytest.approx(1061.9, abs=0.1)  # one per file
    assert table_drivers(4800, 1.25, 1200, partitions=1)["partitions_touched"] == 1.0
    assert parse_table("t:files=4800,file_mb=1.25,rows_per_update=1200,partitions=90").drivers["partitions_touched"] \
        == pytest.approx(90, abs=0.01)


def test_the_note_says_which_models_price_partitions():
    from bench.report.sections.file_size import partitions_note

    steps = [({"files_touched": f, "partitions_touched": f}, 1.0 + 0.1 * f) for f in (1.0, 2.0, 4.0)]
    layouts = [({"files_touched": 100.0, "partitions_touched": p}, 1.0 + 0.05 * 100 + 0.09 * p) for p in (68.0, 29.0, 8.0)]
    drivers = ["files_touched", "partitions_touched"]
    priced = fit([Point(x, [y] * 3, "") for x, y in steps + layouts], drivers, resamples=20)
    assert priced.coef[2] == pytest.approx(0.09, rel=1e-3)
    files_only = fit([Point(x, [y] * 3, "") for x, y in steps], ["files_touched"], resamples=20)
    both = [ConfigModel("h-mor", priced, None, None, {}), ConfigModel("i-mor", files_only, None, None, {})]
    text = partitions_note(both)
    assert "h-mor (join)" in text.split("Not:")[0] and "i-mor (join)" in text.split("Not:")[1] and "prices files alone" in text
    assert "prices files alone" not in partitions_note(both[:1])
    assert "prices files alone" in partitions_note([])  # no model at all prices nothing


def test_the_hotfix_on_another_layout_is_another_point_when_runs_are_merged(tmp_path):
    """Runs of the hotfix on 90 days x 4 files and 8 days x 45 (the same test id) keep both points; the same layout
    measured again is replaced by the newer run's, as before."""
    import json

    from bench.results.contract import load_run
    from bench.results.load import merge
    from tests.constructed import write_run

    def run(run_id: str, days: int, per_day: int, speed: float):
        path = write_run(tmp_path, run_id, operations=("update",), speed=speed)
        data = json.loads((path / "benchmark.json").read_text())
        for b in data["benchmarks"]:
            b["extra_info"]["base"] = {"days": days, "files_per_day": per_day, "rows_per_file": 800, "files": days * per_day}
        (path / "benchmark.json").write_text(json.dumps(data))
        return load_run(path)

    merged = merge([run("preset", 90, 4, 1.0), run("fewer-days", 8, 45, 2.0), run("preset-again", 90, 4, 3.0)])
    layouts = sorted((r.config_id, r["base"]["days"], r.seconds[0])
                     for r in merged.records("payments_hotfix", "update", other_layouts=True))
    assert layouts == [("iceberg-cow", 8, 4.0), ("iceberg-cow", 90, 6.0), ("iceberg-mor", 8, 3.0), ("iceberg-mor", 90, 4.5)]
    # every other view keeps one record per test: the newest run's
    assert sorted((r.config_id, r["base"]["days"]) for r in merged.records("payments_hotfix", "update")) == \
        [("iceberg-cow", 90), ("iceberg-mor", 90)]
    twice = merge([merged, merged])
    assert sorted((r.config_id, r["base"]["days"]) for r in twice.records("payments_hotfix", "update")) == \
        [("iceberg-cow", 90), ("iceberg-mor", 90)]
    again = merge([merged, run("later", 8, 45, 1.0)])  # a merged view merged again keeps what it held aside
    assert sorted((r["base"]["days"], r.seconds[0]) for r in again.records("payments_hotfix", "update", other_layouts=True)
                  if r.config_id == "iceberg-cow") == [(8, 2.0), (90, 6.0)]


def test_the_same_race_under_another_set_up_is_kept_beside_it_when_runs_are_merged(tmp_path):
    """Several writers' realistic set-up, its stress variant and a control run the same test ids: a merge of their runs
    keeps each set-up's record (the findings page merges a machine's runs), and the same set-up again replaces it."""
    import json

    from bench.results.contract import load_run
    from bench.results.load import merge
    from tests.constructed import write_run

    def run(run_id: str, setup: str, speed: float):
        path = write_run(tmp_path, run_id, operations=("update",), speed=speed)
        data = json.loads((path / "benchmark.json").read_text())
        for b in data["benchmarks"]:
            b["extra_info"]["coordination"] = {"setup": {"name": setup, "service": setup != "control"}}
        (path / "benchmark.json").write_text(json.dumps(data))
        return load_run(path)

    merged = merge([run("realistic", "realistic", 1.0), run("stress", "stress", 2.0), run("control", "control", 3.0),
                    run("realistic-again", "realistic", 4.0)])
    kept = sorted((r.config_id, r["coordination"]["setup"]["name"], r.seconds[0])
                  for r in merged.records("payments_hotfix", "update") if r.config_id == "iceberg-cow")
    assert kept == [("iceberg-cow", "control", 6.0), ("iceberg-cow", "realistic", 8.0), ("iceberg-cow", "stress", 4.0)]


def test_file_size_steps_on_another_route_only_say_what_is_missing(tmp_path):
    """A run whose file-size steps all took literal keys is not told it has no steps: it is told it lacks the join's."""
    from pathlib import Path

    from bench.report.sections.file_size import section_file_size
    from bench.results.contract import Run

    step = {"name": "test_file_size[8400rpf-iceberg-mor-pruned]", "stats": {"median": 0.2, "data": [0.2, 0.21, 0.19]},
            "extra_info": {"scenario": "file_size", "operation": "update", "config_id": "iceberg-mor", "route": "pruned"}}
    page = section_file_size(Run(Path(tmp_path / "run.json"), {"benchmarks": [step]}), tmp_path)
    assert "took only the pruned route" in page and "--routes join,pruned" in page and "No file-size steps" not in page
