"""Tiny end-to-end runs on real Spark and real Iceberg, checked through the recorded JSON."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark
ICEBERG = ("iceberg-cow", "iceberg-mor", "iceberg-dv")


def _bench(record, test, config_id):
    for b in record["json"]["benchmarks"]:
        if b["name"] == f"{test}[{config_id}]":
            return b
    raise AssertionError(f"{test}[{config_id}] not recorded; have {[b['name'] for b in record['json']['benchmarks']]}")


@pytest.mark.parametrize("config_id", ICEBERG)
def test_hotfix_update_is_recorded_fully(tiny_run, config_id):
    b = _bench(tiny_run, "test_hotfix_update", config_id)
    x = b["extra_info"]
    assert b["stats"]["rounds"] == 2 and b["stats"]["min"] > 0
    assert x["rows_targeted"] == x["rows_changed_verified"] == 12 and x["row_count"] == 12 * 3 * 800
    assert x["answers_verified"] is True
    for phase in ("reads_before", "reads_after"):
        assert set(x[phase]) == {"revenue_last_7_days", "status_totals", "point_lookup"}
        assert all(r["answer_ok"] and r["median"] > 0 for r in x[phase].values())
    assert x["filesystem"]["bytes_added"] > 0 and x["metadata"]["bytes_added"] > 0
    assert x["write_amplification"] > 1
    assert len(x["rounds"]) == 2
    # deterministic: every round wrote the same number of files
    assert len({r["filesystem"]["files_added"] for r in x["rounds"]}) == 1
    assert {s["key"] for s in x["settings"]} >= {"format-version", "write.update.mode", "write.target-file-size-bytes"}
    assert x["base"]["files"] == 36 and x["live_files_before"]["data_files"] == 36  # layout kept: 1 file per input file


def test_copy_on_write_rewrites_data_files(tiny_run):
    x = _bench(tiny_run, "test_hotfix_update", "iceberg-cow")["extra_info"]
    meta, fs = x["metadata"], x["filesystem"]
    assert meta["data_files_removed"] > 0 and meta["delete_files_added"] == 0 and meta["rows_changed"] is None
    assert fs["delete"]["files_added"] == 0 and fs["data"]["files_added"] == meta["data_files_added"]
    assert fs["data"]["bytes_added"] == meta["bytes_added"]  # filesystem and metadata agree on data bytes
    assert fs["bytes_removed"] == 0  # old files stay on disk until expire_snapshots


def test_merge_on_read_adds_delete_files_and_removes_none(tiny_run):
    mor = _bench(tiny_run, "test_hotfix_update", "iceberg-mor")["extra_info"]
    dv = _bench(tiny_run, "test_hotfix_update", "iceberg-dv")["extra_info"]
    cow = _bench(tiny_run, "test_hotfix_update", "iceberg-cow")["extra_info"]
    for x in (mor, dv):
        assert x["metadata"]["data_files_removed"] == 0 and x["metadata"]["delete_files_added"] > 0
        assert x["metadata"]["rows_changed"] == 12
        assert x["live_files_after"]["delete_files"] == x["metadata"]["delete_files_added"]
    assert mor["filesystem"]["delete"]["files_added"] == mor["metadata"]["delete_files_added"]  # one per touched file
    assert dv["filesystem"]["delete"]["files_added"] == 1  # every DV of the commit in one Puffin file
    assert "added-dvs" in dv["metadata"]["raw"][0]
    assert dv["filesystem"]["delete"]["bytes_added"] < mor["filesystem"]["delete"]["bytes_added"]
    assert mor["filesystem"]["data"]["bytes_added"] < cow["filesystem"]["data"]["bytes_added"]


def test_all_configurations_agree_on_every_answer(tiny_run):
    answers = {}
    for b in tiny_run["json"]["benchmarks"]:
        x = b["extra_info"]
        if x.get("scenario") == "payments_hotfix" and x["operation"] == "update":
            answers[x["config_id"]] = {q: (r["rows"], r["answer_ok"]) for q, r in x["reads_after"].items()}
    assert set(ICEBERG) <= set(answers)
    assert len({str(a) for a in answers.values()}) == 1 and all(ok for a in answers.values() for _, ok in a.values())


@pytest.mark.parametrize("config_id", ("iceberg-mor", "iceberg-dv"))
def test_compaction_clears_deletes(tiny_run, config_id):
    x = _bench(tiny_run, "test_hotfix_compaction", config_id)["extra_info"]
    assert x["live_files_after"]["delete_files"] == 0 and x["live_files_before"]["delete_files"] > 0
    assert x["metadata"]["delete_files_removed"] == x["live_files_before"]["delete_files"]
    assert all(r["answer_ok"] for r in x["reads_after_compaction"].values())


@pytest.mark.parametrize("family, configs, artifact", [
    ("delta", ("delta-cow", "delta-dv"), "io.delta:delta-spark_2.12:3.3.2"),
    ("hudi", ("hudi-cow", "hudi-mor"), "org.apache.hudi:hudi-spark3.5-bundle_2.12:1.0.2"),
])
def test_delta_and_hudi_run_where_their_jars_are_and_are_skipped_with_the_reason_elsewhere(tiny_run, family, configs, artifact):
    """Here (no Maven, no jars) they are skipped with a reason naming the artifact; with the jars they must
    run every scenario and verify their answers like Iceberg."""
    outcomes = [o for o in tiny_run["json"]["cowmor"]["outcomes"] if o["config_id"] in configs]
    env = tiny_run["json"]["cowmor"]["environment"]["formats"][family]
    measured = [b for b in tiny_run["json"]["benchmarks"] if b["extra_info"].get("family") == family]
    if env["status"] == "skipped":
        assert outcomes and all(o["outcome"] == "skipped" for o in outcomes)
        assert all(artifact in o["reason"] and "--jars-dir" in o["reason"] for o in outcomes)
        assert not measured  # a skipped configuration is never reported as measured
        assert "SKIPPED" in tiny_run["stdout"] and artifact in tiny_run["stdout"]
    else:
        assert all(o["outcome"] == "passed" for o in outcomes), outcomes
        assert {b["extra_info"]["config_id"] for b in measured} == set(configs)
        assert all(b["extra_info"]["answers_verified"] for b in measured)


def test_environment_is_recorded(tiny_run):
    env = tiny_run["json"]["cowmor"]["environment"]
    assert env["scale"]["name"] == "tiny" and env["seed"] == 42 and env["java"] >= 11
    assert env["packages"]["pyspark"] == "3.5.9" and env["formats"]["iceberg"]["source"].startswith("pypi:")
    assert env["spark"]["conf"]["spark.sql.parquet.compression.codec"] == "snappy"
    assert (tiny_run["run_dir"] / "environment.json").exists() and (tiny_run["run_dir"] / "outcomes.json").exists()


def test_one_jvm_per_family(tmp_path):
    """Stopping a family's application really stops its JVM, so the next family starts clean."""
    from bench.spark import SparkApps, SparkOptions

    apps = SparkApps(SparkOptions(master="local[1]", driver_memory="512m"))
    try:
        first = apps.get("iceberg", {})
        pid1 = first.sparkContext._jvm.ProcessHandle.current().pid()
        gateway_proc = first.sparkContext._gateway.proc
        apps.stop()
        assert gateway_proc.poll() is not None  # the JVM process has exited
        second = apps.get("delta", {"spark.app.name": "second"})
        assert second.sparkContext._jvm.ProcessHandle.current().pid() != pid1
    finally:
        apps.stop()


def _infos(record, scenario):
    return {b["extra_info"]["config_id"] + (f":{b['extra_info']['param']}" if b["extra_info"].get("param") else ""): b["extra_info"]
            for b in record["json"]["benchmarks"] if b["extra_info"].get("scenario") == scenario}


def test_dinner_peak_series_and_final_state(tiny_run):
    infos = _infos(tiny_run, "dinner_peak")
    assert set(infos) == set(ICEBERG)
    for x in infos.values():
        assert len(x["series"]) == 4 and all(s["upsert_s"] > 0 and s["read_s"] > 0 for s in x["series"])
        assert x["row_count"] == 4 * 3 * 500 + 4 * 15 and x["rows_changed_verified"] > 0 and x["answers_verified"]
        assert x["upsert_p50_s"] <= x["upsert_p95_s"] <= x["upsert_max_s"]
        assert all(s["bytes_added"] > 0 and s["files_added"] > 0 for s in x["series"])
    assert infos["iceberg-cow"]["compaction"]["skipped"]
    for config_id in ("iceberg-mor", "iceberg-dv"):
        c = infos[config_id]["compaction"]
        assert c["seconds"] > 0 and c["live_files_before"]["delete_files"] > 0 and c["live_files_after"]["delete_files"] == 0
        assert all(r["answer_ok"] for r in c["reads_after"].values())


def test_degradation_records_the_curve(tiny_run):
    infos = _infos(tiny_run, "degradation")
    assert set(infos) == set(ICEBERG)
    for x in infos.values():
        assert len(x["series"]) == 3 and x["read_before_s"] > 0 and isinstance(x["degradation_rate"], float)
    mor = infos["iceberg-mor"]
    deletes = [s["live_files"]["delete_files"] for s in mor["series"]]
    assert deletes == sorted(deletes) and deletes[-1] > deletes[0]  # un-compacted deletes pile up
    assert mor["recovery"]["live_files_after"]["delete_files"] == 0 and mor["recovery"]["recovery_vs_start"] > 0
    assert all(s["live_files"]["delete_files"] == 0 for s in infos["iceberg-cow"]["series"])


def test_settlements_compare_with_a_never_updated_copy(tiny_run):
    infos = _infos(tiny_run, "monthly_settlements")
    assert set(infos) == set(ICEBERG)
    for x in infos.values():
        assert len(x["writes"]) == 2 and x["write_total_s"] > 0 and x["reads"]["reads"] == 12
        assert x["read_total_s"] > 0 and x["read_total_pristine_s"] > 0
        assert set(x["per_read_overhead_s"]) == set(x["reads"]["per_query_mean_s"])


def test_update_sweep_points(tiny_run):
    infos = _infos(tiny_run, "update_sweep")
    assert len(infos) == 3 * 6
    for x in infos.values():
        assert x["rows_changed_verified"] == x["rows_targeted"] > 0
    assert infos["iceberg-cow:clustered"]["files_touched"] <= 2 < infos["iceberg-cow:scattered"]["files_touched"]
    assert infos["iceberg-cow:10pct"]["rows_targeted"] == round(12 * 3 * 800 * 0.1)
    # copy-on-write rewrites more bytes for scattered rows than for the same number clustered
    assert infos["iceberg-cow:scattered"]["filesystem"]["bytes_added"] > infos["iceberg-cow:clustered"]["filesystem"]["bytes_added"]
