"""Every --formats selection collects and runs what applies (a copy-on-write-only selection has no compaction
to run: that test is skipped, not an INTERNALERROR)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench.formats import CONFIGS, FAMILIES
from tests.conftest import ROOT

SELECTIONS = [*CONFIGS, *FAMILIES]


def collect(tmp_path, selection: str, *args: str, where: str = "scenarios") -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", str(ROOT / where), "--collect-only", "-q", "-p", "no:cacheprovider",
           "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"), "--formats", selection, "--scale", "tiny",
           "--warehouse", str(tmp_path / "ws"), "--results-dir", str(tmp_path / "results"), *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COWMOR_OFFLINE": "1"})


@pytest.mark.parametrize("selection", SELECTIONS)
def test_every_single_configuration_and_family_selection_collects(tmp_path, selection):
    proc = collect(tmp_path, selection)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "INTERNALERROR" not in out, out[-2000:]
    wanted = {c.id for c in CONFIGS.values() if selection in (c.id, c.family)}
    node_ids = [line for line in proc.stdout.splitlines() if "::" in line]
    collected = {c for c in CONFIGS if any(c in n for n in node_ids)}
    assert node_ids and collected == wanted, proc.stdout[-2000:]
    merge_on_read = any(CONFIGS[c].merges_on_read for c in wanted)
    assert ("test_hotfix_compaction[no-configuration]" not in proc.stdout) == merge_on_read


def test_a_file_layout_other_than_the_presets_is_named_in_the_test_ids(tmp_path):
    """So a run of 1 of 8 files touched is reported beside the preset's 2 of 4, not merged over it."""
    preset = collect(tmp_path, "iceberg-cow", where="scenarios/test_file_size.py").stdout
    other = collect(tmp_path, "iceberg-cow", "--param", "file_size_files=8", "--param", "file_size_touched=1",
                    where="scenarios/test_file_size.py").stdout
    assert "test_file_size[800rpf-iceberg-cow-join]" in preset and "1of8" not in preset
    assert "test_file_size[800rpf-1of8-iceberg-cow-join]" in other
