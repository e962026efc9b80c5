"""The regression gate, the history store and the trend, on real tiny runs made in this test session."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from bench import history
from bench.compare import compare
from bench.report.build import build_report
from bench.report.load import load_run
from tests.conftest import ARTIFACTS, ROOT, run_scenarios

HOTFIX = str(ROOT / "scenarios" / "test_payments_hotfix.py")
SMALL_FILES = ("--param", "days=4", "--param", "rows_per_file=2500")  # files big enough for a 16 KiB target to roll


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    """Two runs with the same settings, and one with a different target file size (a table setting)."""
    tmp = tmp_path_factory.mktemp("gate")
    args = (HOTFIX, "-k", "update", "--scale", "tiny", "--formats", "iceberg-cow,iceberg-mor", *SMALL_FILES)
    runs = {}
    for run_id, extra in (("a", ()), ("b", ()), ("target16k", ("--param", "target_file_bytes=16384"))):
        record = run_scenarios(tmp, *args, *extra, run_id=run_id)
        assert record["returncode"] == 0, record["stdout"][-3000:]
        runs[run_id] = record["run_dir"]
    return runs


pytestmark = pytest.mark.spark


def test_identical_inputs_pass(three_runs):
    run = load_run(three_runs["a"])
    result = compare(run, run)
    assert not result.failed and not result.changed


def test_run_to_run_noise_does_not_fail(three_runs):
    result = compare(load_run(three_runs["a"]), load_run(three_runs["b"]))
    assert not result.failed, result.text()


def test_changed_table_setting_is_caught(three_runs):
    baseline, current = load_run(three_runs["a"]), load_run(three_runs["target16k"])
    result = compare(baseline, current)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "compare-changed-setting.txt").write_text(result.text())
    failed = {(f.benchmark, f.metric) for f in result.failed}
    assert ("test_hotfix_update[iceberg-cow]", "data files written") in failed, result.text()
    proc = subprocess.run([sys.executable, "-m", "bench", "compare", str(three_runs["a"]), str(three_runs["target16k"])],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "FAIL" in proc.stdout and "data files written" in proc.stdout


def test_fabricated_slowdown_trips_the_timing_gate(three_runs, tmp_path):
    data = json.loads((three_runs["b"] / "benchmark.json").read_text())
    slowed = copy.deepcopy(data)  # a copy made by this test: one benchmark's timings multiplied by 3
    target = next(b for b in slowed["benchmarks"] if b["name"] == "test_hotfix_update[iceberg-mor]")
    for key in ("min", "max", "mean", "median", "q1", "q3"):
        target["stats"][key] *= 3
    target["stats"]["data"] = [x * 3 for x in target["stats"]["data"]]
    (tmp_path / "slowed.json").write_text(json.dumps(slowed))
    result = compare(load_run(three_runs["b"]), load_run(tmp_path / "slowed.json"))
    assert [(f.benchmark, f.metric) for f in result.failed] == [("test_hotfix_update[iceberg-mor]", "median seconds")]
    assert "+200% slower" in result.failed[0].note
    md = result.markdown(load_run(three_runs["b"]), load_run(tmp_path / "slowed.json"))
    assert "REGRESSION" in md and "iceberg-mor" in md


def test_missing_configuration_fails(three_runs, tmp_path):
    data = json.loads((three_runs["b"] / "benchmark.json").read_text())
    data["benchmarks"] = [b for b in data["benchmarks"] if "iceberg-mor" not in b["name"]]
    (tmp_path / "partial.json").write_text(json.dumps(data))
    result = compare(load_run(three_runs["a"]), load_run(tmp_path / "partial.json"))
    assert any(f.metric == "measured" and f.verdict == "fail" for f in result.failed)


def test_history_is_idempotent_and_atomic(three_runs, tmp_path, monkeypatch):
    path = tmp_path / "history.csv"
    first = history.append(path, load_run(three_runs["a"]))
    again = history.append(path, load_run(three_runs["a"]))
    assert len(first) == len(again) > 0 and set(again.run_id) == {"a"}
    assert {"median_s", "bytes_written", "files_written"} <= set(again.metric)
    before = path.read_bytes()

    def crash(*args, **kwargs):
        raise OSError("disk full (simulated crash mid-write)")

    monkeypatch.setattr(history.os, "replace", crash)
    with pytest.raises(OSError):
        history.append(path, load_run(three_runs["b"]))
    assert path.read_bytes() == before and len(pd.read_csv(path)) == len(first)


def test_report_shows_a_trend_over_three_runs(three_runs, tmp_path):
    index = build_report([three_runs["a"], three_runs["b"], three_runs["target16k"]], tmp_path / "trend")
    page = index.read_text()
    assert "9. Trend over runs" in page and (tmp_path / "trend" / "charts" / "trend.png").stat().st_size > 5000


def test_workflow_passes_actionlint():
    actionlint = shutil.which("actionlint") or str(ROOT / ".venv" / "bin" / "actionlint")
    proc = subprocess.run([actionlint, str(ROOT / ".github" / "workflows" / "nightly-bench.yml")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = ROOT / "test-artifacts" / "bad-workflow.yml"
    bad.parent.mkdir(exist_ok=True)
    bad.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n")
    assert subprocess.run([actionlint, str(bad)], capture_output=True, text=True, timeout=60).returncode != 0
