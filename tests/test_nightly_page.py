"""The nightly's published page, built locally by the same script the workflow runs, with a stand-in for `gh`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.constructed import write_run

ROOT = Path(__file__).resolve().parents[1]
# `gh run list … --jq '.[].databaseId'` prints the ids newest first; `gh run download ID --dir D` unpacks that
# night's artifact (its results/ folder: nightly-<id>/ and history.csv) into D, or fails where the night has none
FAKE_GH = """#!/usr/bin/env bash
echo "$*" >> "$GH_LOG"
case "$1 $2" in
  "run list") printf '%s\\n' 101 100 99 98 ;;
  "run download")
    id=$3; shift 3
    while [ $# -gt 0 ]; do case "$1" in --dir) dir=$2; shift 2 ;; *) shift ;; esac; done
    [ -d "$GH_STORE/$id" ] || { echo "no artifact cowmor-results" >&2; exit 1; }
    mkdir -p "$dir" && cp -r "$GH_STORE/$id"/. "$dir"/ ;;
  *) exit 3 ;;
esac
"""


def test_the_page_spans_the_earlier_nights_oldest_first_failed_nights_included(tmp_path):
    store, bin_dir = tmp_path / "artifacts", tmp_path / "bin"
    # ids whose alphabetical order is not their order in time; night 100 was cancelled before its upload
    for night, outcome in ((98, "passed"), (99, "failed"), (101, "passed")):
        write_run(store / str(night), f"nightly-{night}", outcome=outcome, speed=1 + (night - 100) / 10)
        (store / str(night) / "history.csv").write_text("run_id\n")
    tonight = write_run(tmp_path / "results", "nightly-102", speed=1.7)
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(FAKE_GH)
    (bin_dir / "gh").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "GH_STORE": str(store),
           "GH_LOG": str(tmp_path / "gh.log"), "PYTHON": sys.executable, "GITHUB_REF_NAME": "main"}
    out = tmp_path / "site"
    done = subprocess.run(["bash", str(ROOT / "tools" / "nightly_page.sh"), str(tonight), str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "night 100 left no results" in done.stdout and "spans 3 earlier night(s)" in done.stdout
    assert "run list --workflow nightly-bench.yml --branch main --status completed --limit 7" in (tmp_path / "gh.log").read_text()
    page = (out / "index.html").read_text()
    assert "Trend over runs" in page and (out / "charts" / "trend.png").stat().st_size > 5000
    trend = page.split('<section id="trend">')[1]
    order = [trend.index(f"nightly-{n}<") for n in (98, 99, 101, 102)]
    assert order == sorted(order)  # oldest first, tonight last


def test_the_page_refuses_a_tonight_without_results(tmp_path):
    done = subprocess.run(["bash", str(ROOT / "tools" / "nightly_page.sh"), str(tmp_path), str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "holds no benchmark.json" in done.stderr
