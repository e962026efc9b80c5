"""The results contract: its builder, validator and typed readers, and that a new format is one adapter file for the
report (the report, cost model and claims take families and pairs from the recorded matrix)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from bench.cli import main
from bench.exceptions import BadRecord
from bench.report.build import build_report
from bench.results.contract import HOTFIX, SCHEMA_VERSION, SPECS, Matrix, check_run_id, header, load_run, validate
from tests.constructed import write_run

FOUR_FAMILIES = {"iceberg-cow": ("iceberg", "cow", False), "iceberg-mor": ("iceberg", "mor", True),
                 "lance-cow": ("lance", "cow", False), "lance-mv": ("lance", "mv", True)}


def test_header_is_the_same_for_every_scenario_and_refuses_unknown_pairs():
    h = header("payments_hotfix", "update", "iceberg-cow", "iceberg", "cow", "tiny", 42, [])
    assert h["schema_version"] == SCHEMA_VERSION and h["scenario"] == "payments_hotfix" and "param" not in h
    assert header("update_sweep", "update", "x", "f", "m", "tiny", 1, [], "1pct")["param"] == "1pct"
    with pytest.raises(ValueError, match="not in the results contract"):
        header("payments_hotfix", "upsert", "x", "f", "m", "tiny", 1, [])
    assert all(op in ("update", "compaction", "sequence", "race", "search") for _, op in SPECS)


def test_a_fresh_constructed_run_is_valid(tmp_path, capsys):
    run_dir = write_run(tmp_path, "fresh")
    assert validate(run_dir) == []
    assert main(["validate", str(run_dir)]) == 0
    assert "valid (results schema" in capsys.readouterr().out


def test_a_run_of_the_old_shape_gets_one_clear_line(tmp_path, capsys):
    run_dir = write_run(tmp_path, "old")
    data = json.loads((run_dir / "benchmark.json").read_text())
    del data["cowmor"]["environment"]["schema_version"]  # every run recorded before the contract
    (run_dir / "benchmark.json").write_text(json.dumps(data))
    assert main(["validate", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "schema version 1" in err and f"reads version {SCHEMA_VERSION}" in err
    with pytest.raises(BadRecord, match="schema version 1"):
        build_report([run_dir], tmp_path / "out")


def test_the_validator_names_missing_fields(tmp_path):
    run_dir = write_run(tmp_path, "holes")
    data = json.loads((run_dir / "benchmark.json").read_text())
    del data["benchmarks"][0]["extra_info"]["reads_after"]
    (run_dir / "benchmark.json").write_text(json.dumps(data))
    problems = validate(run_dir)
    assert any("lacks reads_after" in p for p in problems), problems


def test_a_fake_fourth_family_is_reported_from_the_recorded_matrix(tmp_path):
    """No report module knows 'lance': it appears in the break-even pairs, the claims and the charts all the same."""
    run_dir = write_run(tmp_path, "four", FOUR_FAMILIES, engines=("spark", "duckdb"))
    run = load_run(run_dir)
    assert run.matrix.families == ["iceberg", "lance"]
    assert ("lance-cow", "lance-mv") in run.matrix.cow_mor_pairs()
    page = build_report([run_dir], tmp_path / "out").read_text()
    assert page.count("lance-cow vs lance-mv") >= 2  # break-even per pair, and per engine
    assert "lance-cow writes" in page  # the bytes claim pairs it too
    assert "lance-mv" in (tmp_path / "out" / "results.csv").read_text()


def test_matrix_from_ids_is_only_a_fallback():
    m = Matrix.from_ids(["a-cow", "a-mor", "b-cow"])
    assert m.cow_mor_pairs() == [("a-cow", "a-mor")] and m.families == ["a", "b"]


@pytest.mark.parametrize("bad", ["", ".", "..", "../x", "/abs", "a/b", "x" * 101, "-lead", "sp ace", "ü"])
def test_run_ids_are_one_safe_path_component(bad):
    with pytest.raises(BadRecord):
        check_run_id(bad)


def test_good_run_ids_pass():
    for good in ("20261124T000000Z-small-abc123", "a", "nightly.1", "001"):
        assert check_run_id(good) == good


def test_runs_on_different_storage_are_set_side_by_side_and_never_mixed_silently(tmp_path):
    """Local disk, an object store and one with added latency: one table and chart per storage, ratios to the
    first, requests by kind; the summary warns that their timings do not compare. One storage: no such section."""
    local = write_run(tmp_path, "on-local")
    s3 = write_run(tmp_path, "on-s3", speed=1.5, storage={"kind": "seaweedfs 4.48", "requests_counted": True,
                                                            "delay_ms_per_request": 0.0})
    delayed = write_run(tmp_path, "on-s3-20ms", speed=4.0, storage={"kind": "seaweedfs 4.48", "requests_counted": True,
                                                                    "delay_ms_per_request": 20.0})
    also_local = write_run(tmp_path, "also-local", workspace="/elsewhere/.cowmor-work")
    page = build_report([local, also_local, s3, delayed], tmp_path / "out").read_text()
    assert ("measured on different storage: local disk in on-local, also-local; object store in on-s3; "
            "object store +20 ms/request in on-s3-20ms.") in page  # grouped by storage, not one run at a time
    section = page.split('<section id="storage">')[1].split("</section>")[0]
    assert "Storage: local disk and object store" in page and 'alt="update by storage"' in section
    for label in ("local disk", "object store", "object store +20 ms/request"):
        assert f"<td>{label}</td>" in section, label
    assert "<td>4.00</td>" in section and "<td>1.50</td>" in section  # × local disk, for the same configuration
    assert "58 (GET 40, PUT 12, LIST 6)" in section
    assert "measured on different storage" in page and "every request of Spark and the read engines held 20 ms" in page
    alone = build_report([local], tmp_path / "alone").read_text()
    assert 'id="storage"' not in alone and "local disk (" in alone


def test_runs_made_with_different_spark_settings_are_flagged_but_not_for_their_own_paths(tmp_path):
    """A point measured with a bigger driver (Hudi at 263 MB files) beside runs made with 2 GB: the summary says
    which setting differs in which run; a worktree's log4j path, the app's name or another workspace on the same
    disk is no such difference."""
    conf = {"spark.driver.memory": "2g", "spark.sql.shuffle.partitions": "8"}
    base = write_run(tmp_path, "base", spark_conf=conf | {"spark.driver.extraJavaOptions": "-Dlog4j2=file:/a/x"},
                     workspace="/a/.cowmor-work")
    moved = write_run(tmp_path, "moved", spark_conf=conf | {"spark.driver.extraJavaOptions": "-Dlog4j2=file:/b/x"},
                      workspace="/b/.cowmor-work")
    same = build_report([base, moved], tmp_path / "same").read_text()
    assert "different Spark settings" not in same and "measured on different storage" not in same
    bigger = write_run(tmp_path, "bigger", spark_conf=conf | {"spark.driver.memory": "6g"})
    page = build_report([base, bigger], tmp_path / "out").read_text()
    assert "different Spark settings: spark.driver.memory: 2g in base, 6g in bigger." in page
    assert "extraJavaOptions" not in page.split("different Spark settings")[1].split("</p>")[0]


def test_a_record_is_built_only_from_its_typed_spec():
    from bench.results.contract import SPECS, record

    spec = SPECS[("payments_hotfix", "compaction")]
    fields = {name: ({} if kind is dict else [] if kind is list else 1) for name, kind in spec.required.items()}
    built = record("payments_hotfix", "compaction", {"scenario": "payments_hotfix"}, fields)
    assert built["answers_verified"] is True and built["scenario"] == "payments_hotfix"
    with pytest.raises(ValueError, match="lacks reads_after_compaction"):
        record("payments_hotfix", "compaction", {}, {k: v for k, v in fields.items() if k != "reads_after_compaction"})
    with pytest.raises(ValueError, match="undeclared field commits_failed"):
        record("payments_hotfix", "compaction", {}, {**fields, "commits_failed": 1})
    with pytest.raises(ValueError, match="row_count is str, not int"):
        record("payments_hotfix", "compaction", {}, {**fields, "row_count": "12"})
    with pytest.raises(ValueError, match="no typed spec"):
        record("payments_hotfix", "nothing", {}, fields)


def test_validate_checks_every_specs_shapes_not_only_those_with_a_route(tmp_path):
    """One schema per (scenario, operation): a sequence record with a field of the wrong type, or lacking one its spec
    requires, is a problem wherever the record came from."""
    import json

    run_dir = write_run(tmp_path, "typed")
    data = json.loads((run_dir / "benchmark.json").read_text())
    sequence = {**data["benchmarks"][0], "name": "test_degradation[iceberg-cow]", "fullname": "degradation"}
    info = {k: sequence["extra_info"][k] for k in ("schema_version", "config_id", "family", "mode", "scale", "seed", "settings")}
    sequence["extra_info"] = {**info, "scenario": "degradation", "operation": "sequence", "query": 7,  # not a str
                              "read_before_s": 1.0, "series": [], "degradation_rate": 0.0, "answers_verified": True}
    data["benchmarks"].append(sequence)
    (run_dir / "benchmark.json").write_text(json.dumps(data))
    problems = validate(run_dir)
    assert any("query is int, not str" in p for p in problems), problems
    assert any("lacks recovery" in p for p in problems), problems


def _with_pruned_route(run_dir, files_read: int, requests: int):
    """A copy of each hotfix update as its ``pruned`` route, with what its scans read and the requests it made."""
    data = json.loads((run_dir / "benchmark.json").read_text())
    for b in list(data["benchmarks"]):
        if b["extra_info"]["operation"] == "update":
            pruned = json.loads(json.dumps(b))
            pruned["name"] = pruned["fullname"] = b["name"] + "-pruned"
            pruned["extra_info"] |= {"route": "pruned", "table_data_files": 36, "files_touched": 9,
                                     "locate": {"scans": [{"files_read": files_read}], "largest_scan_files": files_read,
                                                "bytes_read": files_read * 1000}}
            if requests:  # counted on an object store only
                pruned["extra_info"]["requests"] = {"GET": requests, "total": requests}
            data["benchmarks"].append(pruned)
    (run_dir / "benchmark.json").write_text(json.dumps(data))
    return run_dir


def test_each_locate_route_is_set_side_by_side_on_each_storage(tmp_path):
    from bench.report.sections.storage import per_route
    from bench.results.load import load_run

    local = _with_pruned_route(write_run(tmp_path, "on-local"), 9, 0)
    s3 = _with_pruned_route(write_run(tmp_path, "on-s3", speed=3.0, storage={
        "kind": "seaweedfs 4.48", "requests_counted": True, "delay_ms_per_request": 20.0}), 9, 31)
    table = per_route([("local disk", load_run(local)), ("object store +20 ms/request", load_run(s3))])
    pruned = table[(table.route == "pruned") & (table.configuration == "iceberg-mor")]
    assert list(pruned.storage) == ["local disk", "object store +20 ms/request"]
    assert list(pruned["files read / table"]) == ["9/36", "9/36"] and list(pruned.requests) == ["–", "31"]
    assert set(table.route) == {"join", "pruned"}
    assert per_route([("local disk", load_run(write_run(tmp_path, "join-only")))]) is None  # the baseline alone: no table


def test_every_reference_record_reads_as_its_typed_class_with_its_nested_parts():
    """The report reads records through ``Record.view``: on the project's own runs every record gives its class,
    every field it carries comes back, and nested parts (rounds, reads, memory, attempts) are classes too."""
    from pathlib import Path

    from bench.results import schema

    reference = Path(__file__).resolve().parents[1] / "results" / "reference"
    seen = set()
    for folder in sorted(p for p in reference.iterdir() if p.is_dir()):
        for r in load_run(folder).records(route=None):
            kind = schema.KINDS[(r.scenario, r.operation)]
            view = r.view(kind)
            for name in (f.name for f in dataclasses.fields(kind)):
                if name in r.info and not isinstance(r.info[name], (dict, list)):
                    assert getattr(view, name) == r.info[name], (r.name, name)
            if isinstance(view, schema.HotfixUpdate):
                assert view.filesystem.bytes_added == r.info["filesystem"]["bytes_added"]
                assert all(isinstance(x, schema.Round) and isinstance(x.memory, schema.Memory) for x in view.rounds)
                assert all(isinstance(q.engines, dict) for q in view.reads_after.values())
            if isinstance(view, schema.MemorySearch):
                assert all(isinstance(a, schema.MemoryAttempt) for a in view.attempts)
            seen.add(kind)
    assert {schema.HotfixUpdate, schema.MemorySearch} <= seen
    with pytest.raises(TypeError, match="is not a MemorySearch"):
        next(iter(load_run(reference / "hotfix-small-routes-m2").records(HOTFIX))).view(schema.MemorySearch)


def test_a_record_that_lacks_a_field_recorded_since_reads_with_its_default():
    from bench.results import schema

    view = schema.parse(schema.MemorySearch, {"table": "hotfix", "attempts": [{"driver_memory_mb": 512, "completed": False}]})
    assert view.needed_mb is None and view.attempts[0].memory is None and view.largest_failure == view.attempts[0]
