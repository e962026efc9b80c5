"""The report, built from a real tiny run made in this test session, checked as data and as a rendered page."""

from __future__ import annotations

import base64
import json
import re
import shutil

import pytest

from bench.exceptions import BadRecord
from bench.report.build import build_report
from bench.results import load
from bench.results.contract import SCHEMA_VERSION
from tests.conftest import ARTIFACTS, VIOLATED
from tests.test_e2e import ran_here

SECTIONS = ("1. Summary", "2. The choice for a workload", "3. Write cost", "4. Finding the rows", "5. Memory", "6. Read cost",
            "7. Engines", "8. Over time", "9. Break-even and recommendation", "10. Claims check",
            "11. Environment and provenance", "12. Raw data")


@pytest.fixture(scope="module")
def report(tiny_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    index = build_report([tiny_run["run_dir"]], out, profiles=["lakehouse:reads_per_write=50,writes_per_compaction=5"])
    return index


@pytest.mark.spark
def test_flattening_is_tidy(tiny_run):
    run = load.load_run(tiny_run["run_dir"])
    ops = load.operations(run)
    assert set(ops.config_id) == ran_here(tiny_run)
    assert len(ops) == len(run.records()) == len([b for b in run.benchmarks if b["extra_info"].get("route", "join") == "join"])
    assert ops.median_s.gt(0).all()
    hotfix = ops[ops.scenario == "payments_hotfix"]
    assert (hotfix[hotfix.operation == "update"].rows_changed_verified == 12).all()
    assert set(ops.scenario) == {"payments_hotfix", "dinner_peak", "degradation", "monthly_settlements", "update_sweep",
                                 "table_growth", "late_arrivals", "concurrent_compaction", "file_size", "several_writers",
                                 "memory_needed", "compaction_cadence"}
    reads = load.reads(run)
    assert set(reads.phase) == {"before", "after", "after_compaction"} and reads.answer_ok.all()
    outcomes = load.outcomes(run)
    # configurations skipped everywhere (their jars are missing); a grid point a configuration lacks (a route, a kind of
    # writer, a concurrency control) skips while the configuration runs elsewhere
    ran = set(outcomes[outcomes.outcome != "skipped"].config_id) if len(outcomes) else set()
    skipped = set(outcomes[outcomes.outcome == "skipped"].config_id) - ran if len(outcomes) else set()
    assert skipped == {"hudi-cow", "hudi-mor", "delta-cow", "delta-dv"} - ran_here(tiny_run)


@pytest.mark.spark
def test_every_section_and_chart(report, tiny_run):
    page = report.read_text()
    for title in SECTIONS:
        assert f">{title}<" in page
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) >= 4
    for data in images:
        png = base64.b64decode(data)
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    charts = list((report.parent / "charts").glob("*.png"))
    assert charts and all(p.stat().st_size > 5000 for p in charts)
    assert "http://" not in page and "https://" not in page.split("</style>")[0]  # self-contained, no network
    broke_invariants = {o["config_id"] for o in tiny_run["json"]["cowmor"]["outcomes"]
                        if o["outcome"] == "failed" and o.get("reason", "").startswith(VIOLATED)}
    for config_id in ("iceberg-cow", "hudi-mor", "delta-dv"):
        status = ("FAILED" if config_id in broke_invariants else "measured") if config_id in ran_here(tiny_run) else "skipped"
        assert re.search(rf"<td>{config_id}</td>\s*<td>[^<]*</td>\s*<td>{status}</td>", page)
        write_section = page.split('<section id="write">')[1].split("</section>")[0]
        assert (f"<td>{config_id}</td>" in write_section) == (status != "skipped")
    assert "Razorpay monthly settlements" in page and "lakehouse" in page
    assert "T(r) = W + r·R + C/k" in page
    for chart in ("series_dinner_peak", "series_degradation", "break_even", "update_latency"):
        assert (report.parent / "charts" / f"{chart}.png").stat().st_size > 5000
    sweep_points = {b["extra_info"]["param"] for b in tiny_run["json"]["benchmarks"]
                    if b["extra_info"].get("scenario") == "update_sweep"}
    # the sweep's chart plots the share of rows updated: a sweep of only the clustered/scattered pivot draws none
    assert (report.parent / "charts" / "update_sweep.png").exists() == any(p.endswith("pct") for p in sweep_points)
    assert "Monthly settlements: few writes, many reads" in page and "Where merge-on-read starts to win" in page
    engines = page.split('<section id="engines">')[1].split("</section>")[0]
    assert "Who reads what" in engines and "snapshot: reads" in engines and "unsupported" not in engines
    if tiny_run["json"]["cowmor"]["environment"]["engines"].get("duckdb", {}).get("status") == "available":
        assert (report.parent / "charts" / "read_latency_engines.png").stat().st_size > 5000
        assert "Break-even and recommendation per engine" in engines
    assert "95% interval" in page and "cheapest in" in page  # the recommendation carries its confidence
    summary = page.split('<section id="summary">')[1].split("</section>")[0]  # the answer first, provenance later
    assert summary.index("Recommendation per workload") < summary.index("Verdicts") < summary.index("Configurations")
    assert "sha256" not in summary and "Spark master" in page.split('<section id="environment">')[1].split("</section>")[0]
    assert "Compaction racing the writer" in page and "Late data" in page and "How the cost grows: file count" in page and "How the cost grows: file size" in page
    assert (report.parent / "results.csv").stat().st_size > 0


@pytest.mark.spark
def test_page_renders_in_chromium(report):
    chromium, driver_bin = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver_bin:
        pytest.skip("Debian packages chromium and chromium-driver are not installed (.ci/run installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_bin), options=options)
    try:
        driver.get(report.as_uri())
        assert driver.title.startswith("cowmor")
        sizes = driver.execute_script(
            "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.getBoundingClientRect().height])")
        assert sizes and all(done and width > 0 and height > 0 for done, width, height in sizes)
        sections = driver.execute_script("return Array.from(document.querySelectorAll('section h2')).map(h => h.textContent)")
        assert list(sections[:len(SECTIONS)]) == list(SECTIONS)
        severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not severe, severe
        height = driver.execute_script("return document.body.scrollHeight")
        driver.set_window_size(1280, min(height, 16000))
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "report.png"))
        assert (ARTIFACTS / "report.png").stat().st_size > 20000
    finally:
        driver.quit()


@pytest.mark.spark
def test_bad_inputs_fail_in_one_line(tmp_path, tiny_run):
    with pytest.raises(BadRecord, match="no such file"):
        build_report([tmp_path / "missing"], tmp_path / "out")
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(BadRecord, match="not valid JSON"):
        build_report([tmp_path / "x.json"], tmp_path / "out")
    (tmp_path / "y.json").write_text(json.dumps({"hello": 1}))
    with pytest.raises(BadRecord, match="not a pytest-benchmark JSON"):
        build_report([tmp_path / "y.json"], tmp_path / "out")
    (tmp_path / "z.json").write_text(json.dumps({"benchmarks": [], "machine_info": {}, "cowmor": {
        "environment": {"schema_version": SCHEMA_VERSION}, "outcomes": []}}))
    with pytest.raises(BadRecord, match="no results"):
        build_report([tmp_path / "z.json"], tmp_path / "out")


@pytest.mark.spark
def test_different_scales_are_warned_and_labelled(tiny_run, tmp_path):
    data = json.loads((tiny_run["run_dir"] / "benchmark.json").read_text())
    data["cowmor"]["environment"]["scale"]["name"] = "small"  # a relabelled copy made by this test
    data["cowmor"]["environment"]["run_id"] = "relabelled"
    (tmp_path / "other.json").write_text(json.dumps(data))
    with pytest.warns(UserWarning, match="different scales"):
        index = build_report([tiny_run["run_dir"], tmp_path / "other.json"], tmp_path / "out")
    page = index.read_text()
    assert "different scales" in page and "13. Comparing runs" in page


@pytest.mark.spark
def test_text_summary_covers_every_scenario(tiny_run):
    from bench.report.summary import text_summary

    text = text_summary(load.load_run(tiny_run["run_dir"]))
    expected = ["iceberg-mor", "update", "compaction", "dinner_peak", "degradation", "monthly_settlements",
                "update:scattered", "time: wall"]
    expected += [c if c in ran_here(tiny_run) else f"SKIPPED {c.split('-')[0]}" for c in ("hudi-mor", "delta-dv")]
    for needle in expected:
        assert needle in text, needle


def test_report_never_imports_pyspark():
    import subprocess
    import sys

    code = ("import sys, bench.report.build, bench.results.compare, bench.results.history, bench.cli; "
            "sys.exit(1 if any(m.startswith('pyspark') for m in sys.modules) else 0)")
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0


@pytest.mark.spark
def test_a_run_with_only_sequence_scenarios_still_builds(tiny_run, tmp_path):
    """A dinner-peak-only run has no dashboard reads before/after an update: the report says so, it does not crash;
    its upserts' locate routes still have their section."""
    data = json.loads((tiny_run["run_dir"] / "benchmark.json").read_text())
    data["benchmarks"] = [b for b in data["benchmarks"] if b["extra_info"].get("scenario") == "dinner_peak"]
    (tmp_path / "peak.json").write_text(json.dumps(data))  # a filtered copy made by this test
    page = build_report([tmp_path / "peak.json"], tmp_path / "out").read_text()
    headings = re.findall(r"<h2[^>]*>\d+\. ([^<]*)</h2>", page)
    assert "no dashboard reads before and after a payments hotfix update" in page and "Over time" in headings
    assert "Finding the rows" in headings and "per upsert batch" in page


def test_a_benchmark_whose_test_failed_after_timing_is_reported_as_failed_not_crashed():
    """pytest-benchmark keeps the timing of a test that failed afterwards (its extra_info never filled)."""
    from pathlib import Path

    from bench.report.summary import text_summary

    failed = {"nodeid": "scenarios/test_concurrent_compaction.py::test_concurrent_compaction[hudi-cow]",
              "test": "test_concurrent_compaction", "config_id": "hudi-cow", "outcome": "failed", "reason": "boom"}
    run = load.Run(Path("r/benchmark.json"), {"benchmarks": [
        {"name": "test_concurrent_compaction[hudi-cow]", "extra_info": {},
         "stats": {"median": 1.0, "min": 1.0, "max": 1.0, "rounds": 1, "data": [1.0]}}],
        "cowmor": {"outcomes": [failed], "environment": {"scale": {"name": "small"}}}})
    assert load.operations(run).empty
    assert "FAILED  hudi-cow (test_concurrent_compaction): boom" in text_summary(run)


def _routed_run(tmp_path, pruned_full_scan: bool):
    """A constructed run (made-up figures) whose hotfix update ran by two routes on both Iceberg configurations."""
    import json

    from tests.constructed import record, write_run

    run_dir = write_run(tmp_path, "constructed-routes", operations=("update",))
    data = json.loads((run_dir / "benchmark.json").read_text())
    for b in list(data["benchmarks"]):
        b["extra_info"] |= {"route": "join", "table_data_files": 36, "files_touched": 9, "locate_full_scan": True,
                            "locate": {"statements": 1, "scans": [{"node": "BatchScan", "files_read": 36}], "files_read": 36,
                                       "largest_scan_files": 36, "bytes_read": 1_300_000}}
        cow = b["extra_info"]["mode"] == "cow"
        pruned = record(b["extra_info"]["config_id"], "iceberg", b["extra_info"]["mode"], "update",
                        [1.0, 1.05, 0.97, 1.02, 0.99] if cow else [0.2, 0.21, 0.19, 0.2, 0.205], cow)
        files = 36 if pruned_full_scan else 9
        pruned["name"] = pruned["name"].replace("]", "-pruned]")
        pruned["extra_info"] |= {"route": "pruned", "table_data_files": 36, "files_touched": 9,
                                 "locate_full_scan": pruned_full_scan,
                                 "locate": {"statements": 1, "scans": [{"node": "BatchScan", "files_read": files}],
                                            "files_read": files, "largest_scan_files": files, "bytes_read": 320_000}}
        data["benchmarks"].append(pruned)
    (run_dir / "benchmark.json").write_text(json.dumps(data))
    return run_dir


def test_finding_the_rows_shows_each_route_and_the_ratio_per_route_and_flags_a_pruning_that_scanned(tmp_path):
    page = build_report([_routed_run(tmp_path, pruned_full_scan=False)], tmp_path / "out").read_text()
    section = page.split('id="locate"')[1].split("</section>")[0]
    assert "read 36 of 36 files" in section and "read 9 of 36 files" in section and "rows in 9 files" in section
    assert "iceberg-cow ÷ iceberg-mor" in section and "5.00x" in section  # pruned: 1.0 s ÷ 0.2 s
    assert "merge-on-read faster" in section and "Promised pruning" not in section
    flagged = build_report([_routed_run(tmp_path / "b", pruned_full_scan=True)], tmp_path / "out2").read_text()
    assert "Promised pruning, read the whole table: iceberg-cow pruned" in flagged


def test_views_that_know_no_routes_see_only_the_baseline(tmp_path):
    from bench.results.load import load_run, operations

    run = load_run(_routed_run(tmp_path, pruned_full_scan=False))
    assert len(run.records(route=None)) == 2 * len(run.records()) == 4
    assert set(operations(run).median_s.round(2)) == {2.0, 1.5}  # the join rounds only


def test_counts_print_as_integers_even_beside_a_missing_value():
    import pandas as pd

    from bench.report.html_parts import table

    html = table(pd.DataFrame({"data files": [8.0, None], "seconds": [1.25, 2.0]}))
    assert "<td>8</td>" in html and "8.0" not in html and "1.25" in html and "–" in html


def test_settlements_adjustments_are_located_per_route_with_their_own_times_not_the_months():
    """The settlements' timed month also holds its reads: the locate view takes the adjustments' own times as the
    samples, and the last adjustment's search and bytes."""
    from types import SimpleNamespace

    from bench.report.locate import located
    from bench.results.contract import Record

    def month(config_id: str, route: str, files_read: int, seconds: list[float]) -> Record:
        writes = [{"batch": n + 1, "seconds": s, "filesystem": {"bytes_added": 4096 * (n + 1)}, "files_touched": 2,
                   "locate_full_scan": files_read == 36,
                   "locate": {"scans": [{"files_read": files_read}], "largest_scan_files": files_read, "bytes_read": 1000}}
                  for n, s in enumerate(seconds)]
        info = {"scenario": "monthly_settlements", "operation": "sequence", "config_id": config_id, "route": route,
                "table_data_files": 36, "writes": writes}
        return Record("m", "m", {"median": 99.0, "data": [99.0]}, info)

    run = SimpleNamespace(records=lambda scenario=None, operation=None, route=None, superseded=False: [
        month("iceberg-cow", "join", 36, [2.0, 2.2]), month("iceberg-cow", "pruned", 2, [0.5, 0.6])]
        if scenario == "monthly_settlements" else [])
    join, pruned = located(run)
    assert join.seconds == [2.0, 2.2] and join.files_read == 36 and join.full_scan is True and join.param == "per adjustment"
    assert pruned.files_read == 2 and pruned.files_touched == 2 and pruned.bytes_written == 8192 and pruned.full_scan is False


@pytest.mark.spark
def test_a_second_file_layout_sits_beside_the_first_and_the_check_says_how_far_out_it_predicts(tiny_run, tmp_path):
    """A file-size run with 1 of 8 files touched (its own test ids) is reported with the preset's 2 of 4, not over it."""
    from bench.report.sections.file_size import section_file_size

    data = json.loads((tiny_run["run_dir"] / "benchmark.json").read_text())
    data["benchmarks"] = [b for b in data["benchmarks"] if b["extra_info"].get("scenario") == "file_size"]
    for b in data["benchmarks"]:  # a relabelled copy made by this test: the same steps as if 1 of 8 files were touched
        b["fullname"] = b["fullname"].replace("rpf-", "rpf-1of8-")
        b["extra_info"].update(files_total=8, files_touched=1)
    data["cowmor"]["environment"]["run_id"] = "layout"
    (tmp_path / "layout.json").write_text(json.dumps(data))
    run = load.merge([load.load_run(tiny_run["run_dir"]), load.load_run(tmp_path / "layout.json")])
    page = section_file_size(run, tmp_path)
    assert "2 of 4 files" in page and "1 of 8 files" in page and "Also measured with 1 of 8 files touched" in page
    assert re.search(r"\(\d+\.\dx beyond the rest\)", page)
