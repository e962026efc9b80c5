"""The regression gate, the history store and the trend, on real tiny runs made in this test session."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from bench.report.build import build_report
from bench.results import history
from bench.results.compare import compare
from bench.results.contract import header
from bench.results.load import Run, load_run
from tests.conftest import ARTIFACTS, ROOT, start_scenarios

HOTFIX = str(ROOT / "scenarios" / "test_payments_hotfix.py")
SMALL_FILES = ("--param", "days=4", "--param", "rows_per_file=2500")  # files big enough for a 16 KiB target to roll


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    """Two runs with the same settings, and one with a different target file size (a table setting). The second
    of the two runs in the first's workspace with ``--reuse-tables``: it restores the first's saved base table
    instead of building it, so their agreement is also the check that a restored copy measures the same."""
    tmp = tmp_path_factory.mktemp("gate")
    args = (HOTFIX, "-k", "update", "--scale", "tiny", "--formats", "iceberg-cow", "--routes", "join", *SMALL_FILES)
    started = {run_id: start_scenarios(tmp, *args, *extra, run_id=run_id)  # side by side: each is mostly JVM start
               for run_id, extra in (("a", ("--reuse-tables",)), ("target16k", ("--param", "target_file_bytes=16384")))}
    runs = {}
    for run_id, finish in [*started.items(), ("b", None)]:
        if finish is None:  # after "a": its saved copy is there to restore
            finish = start_scenarios(tmp, *args, "--reuse-tables", run_id=run_id, warehouse=tmp / "ws-a")
        record = finish()
        assert record["returncode"] == 0, record["stdout"][-3000:]
        runs[run_id] = record["run_dir"]
    return runs


def test_a_run_with_reuse_tables_restores_the_earlier_run_s_copy_and_says_so(three_runs):
    adopted = {run: json.loads((three_runs[run] / "environment.json").read_text())["tables_adopted"] for run in "ab"}
    assert adopted == {"a": [], "b": ["iceberg-cow/payments"]}
    assert json.loads((three_runs["target16k"] / "environment.json").read_text())["tables_adopted"] is None


pytestmark = pytest.mark.spark


def test_identical_inputs_pass(three_runs):
    run = load_run(three_runs["a"])
    result = compare(run, run)
    assert not result.failed and not result.changed


def test_two_real_runs_agree_on_every_deterministic_metric(three_runs):
    """Bytes, files, rows and answers of two real runs with the same settings are the same (the second on the
    first's restored base table); their timings are whatever the machine made of them (a busy CI machine can double
    them), so this test does not look at them."""
    result = compare(load_run(three_runs["a"]), load_run(three_runs["b"]))
    assert not [f for f in result.failed if f.metric != "median seconds"], result.text()


def _with_samples(run_dir, tmp_path, name: str, samples: dict[str, list[float]]):
    """A copy of a real run (made by this test) whose named benchmarks carry the given round timings."""
    import statistics

    data = json.loads((run_dir / "benchmark.json").read_text())
    for b in data["benchmarks"]:
        if b["name"] in samples:
            xs = sorted(samples[b["name"]])
            b["stats"].update(data=xs, min=xs[0], max=xs[-1], median=statistics.median(xs), mean=statistics.fmean(xs),
                              rounds=len(xs))
    (tmp_path / f"{name}.json").write_text(json.dumps(data))
    return load_run(tmp_path / f"{name}.json")


def test_timing_noise_with_overlapping_rounds_does_not_fail(three_runs, tmp_path):
    """A median 37% slower whose rounds overlap the baseline's is noise: listed as changed, never failed."""
    name = "test_hotfix_update[iceberg-cow-join]"
    base = _with_samples(three_runs["a"], tmp_path, "base", {name: [1.0, 1.3]})
    noisy = _with_samples(three_runs["a"], tmp_path, "noisy", {name: [1.25, 1.9]})
    result = compare(base, noisy)
    assert not result.failed, result.text()
    assert any(f.benchmark == name and f.metric == "median seconds" for f in result.changed)


def test_changed_table_setting_is_caught(three_runs):
    baseline, current = load_run(three_runs["a"]), load_run(three_runs["target16k"])
    result = compare(baseline, current)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "compare-changed-setting.txt").write_text(result.text())
    failed = {(f.benchmark, f.metric) for f in result.failed}
    assert ("test_hotfix_update[iceberg-cow-join]", "data files written") in failed, result.text()
    proc = subprocess.run([sys.executable, "-m", "bench", "compare", str(three_runs["a"]), str(three_runs["target16k"])],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "FAIL" in proc.stdout and "data files written" in proc.stdout


def test_fabricated_slowdown_trips_the_timing_gate(three_runs, tmp_path):
    """Rounds 3x slower with no overlap fail exactly that benchmark's timing (constructed rounds, not a busy machine)."""
    name = "test_hotfix_update[iceberg-cow-join]"
    others = {b["name"]: [1.0, 1.1] for b in load_run(three_runs["b"]).benchmarks if b["name"] != name}
    base = _with_samples(three_runs["b"], tmp_path, "base", {name: [1.0, 1.05, 1.1], **others})
    slowed = _with_samples(three_runs["b"], tmp_path, "slowed", {name: [3.0, 3.15, 3.3], **others})
    result = compare(base, slowed)
    assert [(f.benchmark, f.metric) for f in result.failed] == [(name, "median seconds")]
    assert "+200% slower" in result.failed[0].note and "do not overlap" in result.failed[0].note
    # the same slowdown on two rounds a side cannot be told from a busy machine: listed, not failed
    two = compare(_with_samples(three_runs["b"], tmp_path, "b2", {name: [1.0, 1.1]}),
                  _with_samples(three_runs["b"], tmp_path, "s2", {name: [3.0, 3.3]}))
    assert not two.failed and any("too few rounds" in f.note for f in two.changed)
    md = result.markdown(base, slowed)
    assert "REGRESSION" in md and "iceberg-cow" in md


def test_missing_configuration_fails(three_runs, tmp_path):
    data = json.loads((three_runs["b"] / "benchmark.json").read_text())
    data["benchmarks"] = [b for b in data["benchmarks"] if "iceberg-cow" not in b["name"]]
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
    assert re.search(r"<h2>\d+\. Trend over runs</h2>", page) and (tmp_path / "trend" / "charts" / "trend.png").stat().st_size > 5000


def test_workflow_passes_actionlint():
    actionlint = shutil.which("actionlint") or str(ROOT / ".venv" / "bin" / "actionlint")
    proc = subprocess.run([actionlint, *map(str, sorted((ROOT / ".github" / "workflows").glob("*.yml")))],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = ROOT / "test-artifacts" / "bad-workflow.yml"
    bad.parent.mkdir(exist_ok=True)
    bad.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n")
    assert subprocess.run([actionlint, str(bad)], capture_output=True, text=True, timeout=60).returncode != 0


def _run_with_reads(engines: dict) -> Run:
    x = {**header("payments_hotfix", "update", "iceberg-dv", "iceberg", "dv", "tiny", 42, []),
         "reads_after": {"status_totals": {"rows": 3, "answer_ok": True, "engines": engines}}}
    bench = {"name": "test_hotfix_update[iceberg-dv]", "extra_info": x, "stats": {"median": 1.0, "min": 0.9, "max": 1.1}}
    return Run(Path("r/benchmark.json"), {"benchmarks": [bench]})


def test_an_engine_answer_or_support_status_is_a_deterministic_metric():
    spark = {"rows": 3, "answer_ok": True}
    reads = _run_with_reads({"spark": spark, "duckdb": {"rows": 3, "answer_ok": True}})
    cannot = _run_with_reads({"spark": spark, "duckdb": {"unsupported": "IOException: deletion vectors"}})
    assert not compare(reads, reads).failed
    lost = compare(reads, cannot)
    assert [f.metric for f in lost.failed] == ["answer reads_after.status_totals@duckdb"]
    gained = compare(cannot, reads)
    assert not gained.failed and [f.note for f in gained.changed] == ["the engine now reads this configuration"]
    older = compare(_run_with_reads({}), reads)  # a baseline recorded before the second engine existed
    assert not older.failed and len([f for f in older.findings if f.verdict == "new"]) == 2  # new, never a failure
