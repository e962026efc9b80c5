"""CI's run records: one `.ci/run` polls for appears whole or not at all."""

import json

import tests.conftest as harness


def test_a_published_record_replaces_the_old_one_whole_and_leaves_no_partial(tmp_path, monkeypatch):
    monkeypatch.setattr(harness, "ARTIFACTS", tmp_path / "artifacts")
    harness.publish_record(json.dumps({"run": 1}), "e2e-0")
    harness.publish_record(json.dumps({"run": 2, "benchmarks": list(range(1000))}), "e2e-0")
    assert json.loads((tmp_path / "artifacts" / "e2e-0.json").read_text())["run"] == 2
    assert [p.name for p in (tmp_path / "artifacts").iterdir()] == ["e2e-0.json"]
