"""Shared test fixtures: paths to ../shared/testdata (skipped when absent) and one real tiny run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_TESTDATA = ROOT.parent / "shared" / "testdata"
ARTIFACTS = ROOT / "test-artifacts"
REUSE_ENV = "COWMOR_REUSE_TINY_RUN"  # a results/<run-id> folder of an earlier tiny run, for developing tests


@pytest.fixture(scope="session")
def shared_testdata() -> Path:
    """The real Hudi/Delta sample tables beside the project; a user's clone has none, so skip cleanly."""
    if not SHARED_TESTDATA.is_dir():
        pytest.skip(f"{SHARED_TESTDATA} is absent (sample tables live outside the project)")
    return SHARED_TESTDATA


@pytest.fixture(scope="session")
def hudi_sample(shared_testdata: Path, tmp_path_factory: pytest.TempPathFactory):
    """Unzip a Hudi sample table (read-only source) into a temp folder and return the table directory."""
    cache: dict[str, Path] = {}

    def get(relative: str) -> Path:
        if relative not in cache:
            out = tmp_path_factory.mktemp("hudi")
            with zipfile.ZipFile(shared_testdata / "hudi" / relative) as z:
                z.extractall(out)
            tables = [p.parent.parent for p in out.rglob(".hoodie/hoodie.properties") if "__MACOSX" not in p.parts]
            cache[relative] = tables[0]
        return cache[relative]
    return get


def run_scenarios(tmp: Path, *args: str, run_id: str = "e2e", extra_env: dict | None = None) -> dict:
    """Run the scenarios exactly as a user would (pytest in a subprocess) and return the run's record."""
    cmd = [sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider", "-rs", "--rootdir", str(ROOT),
           "-c", str(ROOT / "pyproject.toml"), "--warehouse", str(tmp / "ws"), "--results-dir", str(tmp / "results"),
           "--run-id", run_id]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1500,
                          env={**os.environ, "COWMOR_OFFLINE": "1", **(extra_env or {})})
    run_dir = tmp / "results" / run_id
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"{run_id}.log").write_text(proc.stdout + proc.stderr)
    record = {"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr, "run_dir": run_dir}
    if (run_dir / "benchmark.json").exists():
        record["json"] = json.loads((run_dir / "benchmark.json").read_text())
    return record


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One real tiny run of every scenario on every configuration (Delta/Hudi skip here: no jars)."""
    reuse = os.environ.get(REUSE_ENV)
    if reuse:  # developing the assertions: read a tiny run recorded earlier instead of making one
        run_dir = Path(reuse)
        return {"returncode": 0, "run_dir": run_dir, "stderr": "", "json": json.loads((run_dir / "benchmark.json").read_text()),
                "stdout": (ARTIFACTS / "e2e.log").read_text() if (ARTIFACTS / "e2e.log").exists() else ""}
    tmp = tmp_path_factory.mktemp("tiny-run")
    record = run_scenarios(tmp, str(ROOT / "scenarios"), "--scale", "tiny", "--formats", "all")
    assert record["returncode"] == 0, record["stdout"][-3000:] + record["stderr"][-3000:]
    return record
