"""The tiny run's lanes merged into one record: a lane whose families all skipped (no jars) wrote no benchmark.json,
and its configurations must still reach the merged record, skipped with their reason, never vanish from the report."""

from __future__ import annotations

import json

from tests import conftest


def _lane(config_ids: list[str], family: str, status: str) -> dict:
    return {"formats": {family: {"status": status, "reason": None if status == "available" else f"{family}: missing jar"}},
            "configs": {c: {"family": family, "description": c} for c in config_ids}, "engines": {}}


def test_a_lane_that_measured_nothing_keeps_its_configurations_and_skips(tmp_path, monkeypatch):
    monkeypatch.setattr(conftest, "ARTIFACTS", tmp_path / "artifacts")
    measured = {"benchmarks": [{"name": "test_hotfix_update[iceberg-cow]"}],
                "cowmor": {"environment": _lane(["iceberg-cow"], "iceberg", "available"),
                           "outcomes": [{"config_id": "iceberg-cow", "outcome": "passed"}],
                           "time_breakdown": {"seconds": {"measured operations": 1.0}, "wall_s": 2.0}}}
    skipped_dir = tmp_path / "lane-1"
    skipped_dir.mkdir()
    (skipped_dir / "outcomes.json").write_text(json.dumps([{"config_id": "hudi-mor", "outcome": "skipped",
                                                            "reason": "hudi: missing jar"}]))
    (skipped_dir / "environment.json").write_text(json.dumps(_lane(["hudi-cow", "hudi-mor"], "hudi", "skipped")))
    merged = conftest.merge_records([{"json": measured, "stdout": "", "returncode": 0},
                                     {"run_dir": str(skipped_dir), "stdout": "", "returncode": 0}],
                                    tmp_path / "e2e", name="merged")["json"]
    env = merged["cowmor"]["environment"]
    assert list(env["configs"]) == ["iceberg-cow", "hudi-cow", "hudi-mor"]  # the project's order
    assert env["formats"]["hudi"]["status"] == "skipped"
    assert {o["config_id"]: o["outcome"] for o in merged["cowmor"]["outcomes"]} == {"iceberg-cow": "passed",
                                                                                    "hudi-mor": "skipped"}
