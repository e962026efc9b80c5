"""Tiny end-to-end runs on real Spark and real Iceberg, Delta and Hudi, checked through the recorded JSON.

Iceberg always runs (its jar ships on PyPI). Delta and Hudi run where their jars resolve (CI: ../shared/jars
through COWMOR_JARS_DIR); elsewhere their tests skip, and one test checks they were skipped with the reason.
"""

from __future__ import annotations

import os
import sys

import pytest

from bench.formats import CONFIGS
from bench.servers import artifacts
from tests.conftest import ARTIFACTS, ROOT, VIOLATED

pytestmark = pytest.mark.spark
ICEBERG = ("iceberg-cow", "iceberg-mor", "iceberg-dv")
ALL = tuple(CONFIGS)
MERGE_ON_READ = tuple(c.id for c in CONFIGS.values() if c.merges_on_read)
# settings each family must record with every result (its fairness-relevant keys)
RECORDED_KEYS = {
    "iceberg": {"format-version", "write.update.mode", "write.target-file-size-bytes", "write.parquet.compression-codec"},
    "delta": {"delta.enableDeletionVectors", "spark.databricks.delta.optimize.maxFileSize", "spark.sql.parquet.compression.codec"},
    "hudi": {"hoodie.datasource.write.table.type", "hoodie.parquet.max.file.size", "hoodie.parquet.compression.codec",
             "hoodie.index.type", "hoodie.write.record.merge.mode"},
}
TINY_ROWS, TINY_FILES, TINY_HOTFIX = 12 * 3 * 800, 36, 12
TINY_PEAK_BATCHES = 2  # of 15 updates and 15 inserts each


def ran(record, config_id: str) -> bool:
    """Did this configuration's family run in the tiny run? If not, skip with the recorded reason."""
    info = record["json"]["cowmor"]["environment"]["formats"].get(CONFIGS[config_id].family, {"status": "not selected"})
    if info["status"] != "available":
        pytest.skip(f"{config_id} did not run here: {info.get('reason', '')[:200]}")
    return True


def ran_here(record) -> set[str]:
    """The configurations whose family's jars resolved in this run (all seven with ../shared/jars)."""
    formats = record["json"]["cowmor"]["environment"]["formats"]
    return {c.id for c in CONFIGS.values() if formats.get(c.family, {}).get("status") == "available"}


def _bench(record, test, config_id, route="join"):
    for b in record["json"]["benchmarks"]:
        if b["name"] in (f"{test}[{config_id}]", f"{test}[{config_id}-{route}]"):
            return b
    raise AssertionError(f"{test}[{config_id}] not recorded; have {[b['name'] for b in record['json']['benchmarks']]}")


def _update(record, config_id):
    ran(record, config_id)
    return _bench(record, "test_hotfix_update", config_id)["extra_info"]


@pytest.mark.parametrize("config_id", ALL)
def test_hotfix_update_is_recorded_fully(tiny_run, config_id):
    ran(tiny_run, config_id)
    b = _bench(tiny_run, "test_hotfix_update", config_id)
    x = b["extra_info"]
    assert b["stats"]["rounds"] == 2 and b["stats"]["min"] > 0
    # --interleave: the family's configurations took their rounds in turn, each recorded under its own test
    assert x["rounds_plan"]["interleaved_with"] == [c for c in ALL if CONFIGS[c].family == CONFIGS[config_id].family]
    assert x["rounds_plan"]["rounds"] == len(b["stats"]["data"]) == 2
    assert x["rows_targeted"] == x["rows_changed_verified"] == TINY_HOTFIX and x["row_count"] == TINY_ROWS
    assert x["rows_changed_reported"] in (None, TINY_HOTFIX)
    assert x["answers_verified"] is True
    for phase in ("reads_before", "reads_after"):
        assert set(x[phase]) == {"revenue_last_7_days", "status_totals", "point_lookup"}
        assert all(r["answer_ok"] and r["median"] > 0 for r in x[phase].values())
    assert x["filesystem"]["bytes_added"] > 0 and x["metadata"]["bytes_added"] > 0
    assert x["write_amplification"] > 1
    assert len(x["rounds"]) == 2
    assert {s["key"] for s in x["settings"]} >= RECORDED_KEYS[CONFIGS[config_id].family]
    assert x["base"]["files"] == TINY_FILES and x["live_files_before"]["data_files"] == TINY_FILES  # 1 file per input file


@pytest.mark.parametrize("config_id", ALL)
def test_every_round_starts_from_the_same_table_and_writes_the_same(tiny_run, config_id):
    """The base table is built once and restored before each round: identical live files (names and sizes) at
    every round's start, and identical files and bytes written by the update in every round."""
    x = _update(tiny_run, config_id)
    rounds = x["rounds"]
    assert len(rounds) == 2
    assert rounds[0]["start_listing"] == rounds[1]["start_listing"] and rounds[0]["start_listing"]["files"] > 0
    # Hudi stores each file's own name in its _hoodie_file_name column, and the name's write token carries Spark's
    # stage and task-attempt ids, which grow from round to round: a few bytes per file may differ, nothing else
    slack_per_file = 16 if CONFIGS[config_id].family == "hudi" else 0
    for kind in ("data", "delete", "log"):
        files = {r["filesystem"][kind]["files_added"] for r in rounds}
        sizes = [r["filesystem"][kind]["bytes_added"] for r in rounds]
        assert len(files) == 1 and max(sizes) - min(sizes) <= slack_per_file * files.pop(), (kind, sizes)
    assert len({(r["metadata"]["data_files_added"], r["metadata"]["delete_files_added"], r["metadata"]["data_files_removed"])
                for r in rounds}) == 1


def test_copy_on_write_rewrites_data_files(tiny_run):
    x = _bench(tiny_run, "test_hotfix_update", "iceberg-cow")["extra_info"]
    meta, fs = x["metadata"], x["filesystem"]
    assert meta["data_files_removed"] > 0 and meta["delete_files_added"] == 0 and meta["rows_changed"] is None
    assert fs["delete"]["files_added"] == 0 and fs["data"]["files_added"] == meta["data_files_added"]
    assert fs["data"]["bytes_added"] == meta["bytes_added"]  # filesystem and metadata agree on data bytes
    assert fs["bytes_removed"] == 0  # old files stay on disk until expire_snapshots
    # its own table read after its update (--interleave: its siblings' restores took the same place in between)
    assert x["live_files_after"]["delete_files"] == 0
    assert x["live_files_after"]["data_files"] == \
        x["live_files_before"]["data_files"] - meta["data_files_removed"] + meta["data_files_added"]


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
            answers[(x["config_id"], x["route"])] = {q: (r["rows"], r["answer_ok"]) for q, r in x["reads_after"].items()}
    assert {c for c, _ in answers} == ran_here(tiny_run) >= set(ICEBERG)
    assert len({str(a) for a in answers.values()}) == 1 and all(ok for a in answers.values() for _, ok in a.values())


@pytest.mark.parametrize("config_id", MERGE_ON_READ)
def test_compaction_clears_deletes(tiny_run, config_id):
    ran(tiny_run, config_id)
    x = _bench(tiny_run, "test_hotfix_compaction", config_id)["extra_info"]
    assert x["live_files_after"]["delete_files"] == 0 and x["live_files_before"]["delete_files"] > 0
    assert x["metadata"]["delete_files_removed"] == x["live_files_before"]["delete_files"]
    assert all(r["answer_ok"] for r in x["reads_after_compaction"].values())


@pytest.mark.parametrize("family, configs, artifact", [
    ("delta", ("delta-cow", "delta-dv"), "io.delta:delta-spark_2.12:3.3.2"),
    ("hudi", ("hudi-cow", "hudi-mor"), "org.apache.hudi:hudi-spark3.5-bundle_2.12:1.1.1"),
])
def test_delta_and_hudi_run_where_their_jars_are_and_are_skipped_with_the_reason_elsewhere(tiny_run, family, configs, artifact):
    """Without jars they are skipped with a reason naming the artifact; with them (CI: ../shared/jars) they run
    every scenario and verify their answers like Iceberg."""
    outcomes = [o for o in tiny_run["json"]["cowmor"]["outcomes"] if o["config_id"] in configs]
    env = tiny_run["json"]["cowmor"]["environment"]["formats"][family]
    measured = [b for b in tiny_run["json"]["benchmarks"] if b["extra_info"].get("family") == family]
    if env["status"] == "skipped":
        assert outcomes and all(o["outcome"] == "skipped" for o in outcomes)
        assert all(artifact in o["reason"] and "--jars-dir" in o["reason"] for o in outcomes)
        assert not measured  # a skipped configuration is never reported as measured
        assert f"SKIPPED {family}" in tiny_run["stdout"] and artifact in tiny_run["stdout"]
    else:
        # passed, but for a grid point the configuration does not have (a locate route, a kind of writer, a concurrency
        # control: recorded as skipped with its reason), and for a race that broke an invariant (tests/test_e2e_writers.py)
        others = [o for o in outcomes if o["test"] != "test_several_writers"]
        assert others and all(o["outcome"] == "passed" or (o["outcome"] == "skipped" and o["reason"].startswith("route "))
                              for o in others), others
        assert all(o["outcome"] != "failed" or o["reason"].startswith(VIOLATED) for o in outcomes), outcomes
        assert {b["extra_info"]["config_id"] for b in measured} == set(configs)
        assert all(b["extra_info"]["answers_verified"] for b in measured)
        scenarios = {b["extra_info"]["scenario"] for b in measured} - {"several_writers"}  # one configuration a family
        assert scenarios == {"payments_hotfix", "dinner_peak", "degradation", "monthly_settlements", "update_sweep",
                             "table_growth", "late_arrivals", "concurrent_compaction", "file_size", "memory_needed",
                             "compaction_cadence"}
        assert len(env["sha256"]) == len(env["jars"]) and all(len(h) == 64 for h in env["sha256"].values())


# --- Delta: what its log says, pinned as precisely as Iceberg's snapshot summaries ----------------------

def test_delta_copy_on_write_rewrites_files_and_writes_no_deletion_vectors(tiny_run):
    x = _update(tiny_run, "delta-cow")
    meta, fs = x["metadata"], x["filesystem"]
    assert meta["data_files_removed"] > 0 and meta["data_files_added"] > 0 and meta["delete_files_added"] == 0
    assert fs["delete"]["files_added"] == 0 and x["live_files_after"]["delete_files"] == 0
    assert meta["rows_changed"] == TINY_HOTFIX  # MERGE's numTargetRowsUpdated
    assert fs["data"]["bytes_added"] == meta["bytes_added"] and fs["data"]["files_added"] == meta["data_files_added"]
    assert fs["bytes_removed"] == 0  # removed files stay on disk until VACUUM


def test_delta_deletion_vectors_mark_exactly_the_changed_rows_and_remove_no_file(tiny_run):
    x = _update(tiny_run, "delta-dv")
    meta, raw = x["metadata"], x["metadata"]["raw"][0]
    assert meta["data_files_removed"] == 0 and meta["delete_files_added"] > 0
    assert raw["dv_rows_added"] == TINY_HOTFIX == meta["rows_changed"]  # DV cardinalities sum to the rows changed
    assert set(raw["dv_storage_types"]) <= {"u", "i"}
    assert x["live_files_after"]["delete_files"] == meta["delete_files_added"]
    assert x["live_files_after"]["data_files"] == TINY_FILES + meta["data_files_added"]  # new rows in new files
    if "u" in raw["dv_storage_types"]:  # DVs on disk live in deletion_vector_*.bin files, several DVs to a file
        assert 1 <= x["filesystem"]["delete"]["files_added"] <= meta["delete_files_added"]
    cow = _update(tiny_run, "delta-cow")
    assert x["filesystem"]["bytes_added"] < cow["filesystem"]["bytes_added"]


@pytest.mark.parametrize("config_id", ("delta-cow", "delta-dv"))
def test_delta_commit_metrics_agree_with_the_log_and_the_filesystem(tiny_run, config_id):
    """MERGE's own operationMetrics, the add/remove actions this harness parses, and the directory diff agree."""
    x = _update(tiny_run, config_id)
    raw = x["metadata"]["raw"][0]
    m = {k: int(v) for k, v in raw["operation_metrics"].items() if v.lstrip("-").isdigit()}
    assert raw["operation"] == "MERGE" and m["numTargetRowsUpdated"] == TINY_HOTFIX
    assert m["numTargetFilesAdded"] == raw["files_added"] == x["filesystem"]["data"]["files_added"]
    assert m["numTargetBytesAdded"] == x["filesystem"]["data"]["bytes_added"]
    assert m["numTargetDeletionVectorsAdded"] == raw["dvs_added"]
    assert m["numTargetFilesRemoved"] == raw["files_removed"]  # DV-marked files are re-added, not removed


def test_delta_reorg_purge_leaves_no_deletion_vector(tiny_run):
    ran(tiny_run, "delta-dv")
    x = _bench(tiny_run, "test_hotfix_compaction", "delta-dv")["extra_info"]
    assert x["live_files_before"]["delete_files"] > 0 and x["live_files_after"]["delete_files"] == 0
    assert x["metadata"]["delete_files_removed"] == x["live_files_before"]["delete_files"]
    assert x["metadata"]["operation"].startswith("REORG")
    assert all(r["answer_ok"] for r in x["reads_after_compaction"].values())


# --- Hudi: what its timeline says ---------------------------------------------------------------------

def test_hudi_copy_on_write_rewrites_base_files(tiny_run):
    x = _update(tiny_run, "hudi-cow")
    raw = x["metadata"]["raw"][0]
    assert raw["action"] == "commit" and raw["operation"] == "UPSERT_PREPPED"  # SQL UPDATE: rows carry their file
    assert raw["base_files_replaced"] > 0 and raw["log_files_written"] == 0
    assert raw["records_updated"] == TINY_HOTFIX
    assert x["filesystem"]["log"]["files_added"] == 0 and x["filesystem"]["data"]["files_added"] == raw["base_files_written"]
    assert x["filesystem"]["bytes_removed"] == 0  # old file slices stay until the cleaner removes them
    assert x["filesystem"]["parts"]["metadata_table"]["bytes_added"] > 0  # the metadata table's own write, apart


def test_hudi_merge_on_read_appends_logs_and_replaces_no_base_file(tiny_run):
    x = _update(tiny_run, "hudi-mor")
    raw = x["metadata"]["raw"][0]
    assert raw["action"] == "deltacommit" and raw["base_files_written"] == 0 and raw["base_files_replaced"] == 0
    assert raw["log_files_written"] > 0 and raw["records_updated"] == TINY_HOTFIX
    assert x["filesystem"]["data"]["files_added"] == 0 and x["filesystem"]["log"]["files_added"] == raw["log_files_written"]
    assert x["live_files_after"]["delete_files"] == raw["log_files_written"]  # one log per touched file group
    assert x["live_files_after"]["data_files"] == TINY_FILES
    assert x["filesystem"]["parts"]["metadata_table"]["bytes_added"] > 0


def test_hudi_compaction_leaves_no_log_in_the_latest_file_slices(tiny_run):
    ran(tiny_run, "hudi-mor")
    x = _bench(tiny_run, "test_hotfix_compaction", "hudi-mor")["extra_info"]
    assert x["live_files_before"]["delete_files"] > 0 and x["live_files_after"]["delete_files"] == 0
    raw = x["metadata"]["raw"]
    assert any(c["is_compaction"] for c in raw)
    assert sum(c["log_files_compacted"] for c in raw) == x["live_files_before"]["delete_files"]
    assert all(r["answer_ok"] for r in x["reads_after_compaction"].values())


def test_hudi_read_optimized_misses_exactly_the_uncompacted_changes(tiny_run):
    ran(tiny_run, "hudi-mor")
    x = _infos(tiny_run, "dinner_peak")["hudi-mor"]
    logged = []
    for step in x["series"]:
        in_logs = sum(c["log_records_written"] for c in step["metadata"]["raw"])
        # rows written only to log files are invisible to read-optimized reads; rows in base files are not. When a
        # batch's inserts land in the same small file group as its updates, Hudi rewrites that base file with the
        # updates merged in and writes no log: then nothing of the batch is stale.
        assert step["read_optimized"]["rows_not_yet_visible"] == in_logs, step["batch"]
        assert in_logs in (0, step["rows_updated"]), step["batch"]
        logged.append(in_logs)
    assert sum(logged) > 0
    assert x["compaction"]["read_optimized_after"]["rows_not_yet_visible"] == 0


def test_environment_is_recorded(tiny_run):
    env = tiny_run["json"]["cowmor"]["environment"]
    assert env["scale"]["name"] == "tiny" and env["seed"] == 42 and env["java"] >= 11
    official = (artifacts.maven_jars_dir() / artifacts.FAMILY_ARTIFACTS["iceberg"][0].filename).is_file()  # make jars
    assert env["packages"]["pyspark"] == "3.5.9" and env["formats"]["iceberg"]["source"].startswith(
        "maven-central:" if official else "pypi:")
    assert env["machine"]["host_id"]  # a ratio divides times of one host only
    assert env["spark"]["conf"]["spark.sql.parquet.compression.codec"] == "snappy"
    # one shuffle partition count for every shuffle, Delta's log replay included
    assert env["spark"]["conf"]["spark.databricks.delta.snapshotPartitions"] == env["spark"]["conf"]["spark.sql.shuffle.partitions"]
    assert (tiny_run["run_dir"] / "environment.json").exists() and (tiny_run["run_dir"] / "outcomes.json").exists()


def test_one_jvm_per_family(tmp_path, monkeypatch):
    """Stopping a family's application really stops its JVM, so the next family starts clean; a JVM that died (out
    of memory, killed) is started again for its family, and another family starts after it, instead of every later
    test failing on the dead one. The first application also shows that a broken python3 first on PATH never
    reaches Spark's Python workers (createDataFrame needs them): they take the harness's interpreter."""
    from bench.run.spark import SparkApps, SparkOptions

    fake = tmp_path / "bin"
    fake.mkdir()
    for name in ("python3", "python"):
        (fake / name).write_text("#!/bin/sh\necho 'not the harness python' >&2\nexit 3\n")
        (fake / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)

    def pid(session) -> int:
        return session.sparkContext._jvm.ProcessHandle.current().pid()

    def kill(session) -> None:
        proc = session.sparkContext._gateway.proc
        proc.kill()
        proc.wait(timeout=60)

    apps = SparkApps(SparkOptions(master="local[1]", driver_memory="512m"))
    try:
        first = apps.get("iceberg", {})
        assert first.createDataFrame([(1,), (2,)], "x bigint").rdd.map(lambda r: r.x * 10).collect() == [10, 20]
        assert os.environ["PYSPARK_PYTHON"] == sys.executable
        pid1 = pid(first)
        gateway_proc = first.sparkContext._gateway.proc
        apps.stop()
        assert gateway_proc.poll() is not None  # the JVM process has exited
        second = apps.get("delta", {"spark.app.name": "second"})
        pid2 = pid(second)
        assert pid2 != pid1 and apps.running("delta")
        kill(second)
        assert not apps.running("delta")
        third = apps.get("delta", {"spark.app.name": "second"})  # the same family again, on a new JVM
        assert pid(third) != pid2 and third.range(3).count() == 3
        kill(third)
        fourth = apps.get("iceberg", {})  # another family after a dead one
        assert fourth.range(2).count() == 2 and apps.running("iceberg")
        # the memory search's attempts: the same family with another driver memory is another application; the run's
        # own memory, however it is written, is the same one
        assert apps.running("iceberg", "512m") and not apps.running("iceberg", "768m")
        pid4 = pid(fourth)
        fifth = apps.get("iceberg", {}, driver_memory="768m")
        assert pid(fifth) != pid4 and apps.conf["spark.driver.memory"] == "768m" and apps.running("iceberg", "768m")
        assert not apps.running("iceberg")  # back to the run's own memory takes a new application
    finally:
        apps.stop()


def _infos(record, scenario, route="join"):
    """The scenario's records by configuration (and parameter), of one locate route (the baseline unless told)."""
    return {b["extra_info"]["config_id"] + (f":{b['extra_info']['param']}" if b["extra_info"].get("param") else ""): b["extra_info"]
            for b in record["json"]["benchmarks"]
            if b["extra_info"].get("scenario") == scenario and b["extra_info"].get("route", "join") == route}


def test_dinner_peak_series_and_final_state(tiny_run):
    infos = _infos(tiny_run, "dinner_peak")
    assert set(infos) == ran_here(tiny_run)
    for x in infos.values():
        assert len(x["series"]) == TINY_PEAK_BATCHES and all(s["upsert_s"] > 0 and s["read_s"] > 0 for s in x["series"])
        assert x["row_count"] == 4 * 3 * 500 + TINY_PEAK_BATCHES * 15 and x["rows_changed_verified"] > 0 and x["answers_verified"]
        assert x["upsert_p50_s"] <= x["upsert_p95_s"] <= x["upsert_max_s"]
        assert all(s["bytes_added"] > 0 and s["files_added"] > 0 for s in x["series"])
    for config_id, x in infos.items():
        if not CONFIGS[config_id].merges_on_read:
            assert x["compaction"]["skipped"]
            continue
        c = x["compaction"]
        assert c["seconds"] > 0 and c["live_files_before"]["delete_files"] > 0 and c["live_files_after"]["delete_files"] == 0
        assert all(r["answer_ok"] for r in c["reads_after"].values())


def test_the_cadence_check_runs_its_cycles_at_each_cadence_and_prices_them_as_the_model_does(tiny_run):
    """At tiny: every 2 writes alone (cadence_k 2, no neighbours), one cycle, on every merge-on-read configuration;
    each state's read answered on both engines; copy-on-write not run (nothing to compact)."""
    infos = _infos(tiny_run, "compaction_cadence")
    merging = {c for c in ran_here(tiny_run) if CONFIGS[c].merges_on_read}
    assert set(infos) == {f"{c}:every2" for c in merging}
    for x in infos.values():
        k, (cycle,) = x["writes_per_compaction"], x["cycles"]
        assert len(cycle["update_s"]) == len(cycle["read_s"]) == len(cycle["reads"]) == k and cycle["compaction_s"] > 0
        assert cycle["cost_per_write_s"] == pytest.approx(
            (sum(cycle["update_s"]) + cycle["compaction_s"] + x["reads_per_write"] * sum(cycle["read_s"])) / k)
        assert all(e.get("answer_ok") or e.get("unsupported") for r in cycle["reads"] for e in r["engines"].values())
        assert {"spark", "duckdb"} <= {name for r in cycle["reads"] for name in r["engines"]} and x["answers_verified"]


def test_degradation_records_the_curve(tiny_run):
    infos = _infos(tiny_run, "degradation")
    assert set(infos) == ran_here(tiny_run)
    for config_id, x in infos.items():
        assert len(x["series"]) == 2 and x["read_before_s"] > 0 and isinstance(x["degradation_rate"], float)
        deletes = [s["live_files"]["delete_files"] for s in x["series"]]
        if CONFIGS[config_id].merges_on_read:  # un-compacted deletes / DVs / logs pile up, compaction clears them
            assert deletes == sorted(deletes) and deletes[-1] > deletes[0], (config_id, deletes)
            assert x["recovery"]["live_files_after"]["delete_files"] == 0 and x["recovery"]["recovery_vs_start"] > 0
        else:
            assert deletes == [0, 0] and x["recovery"]["skipped"]


def test_settlements_compare_with_a_never_updated_copy(tiny_run):
    infos = _infos(tiny_run, "monthly_settlements")
    assert set(infos) == ran_here(tiny_run)
    for x in infos.values():
        assert len(x["writes"]) == 2 and x["write_total_s"] > 0 and x["reads"]["reads"] == 3
        assert x["read_total_s"] > 0 and x["read_total_pristine_s"] > 0
        assert set(x["per_read_overhead_s"]) == set(x["reads"]["per_query_mean_s"])


def test_update_sweep_points(tiny_run):
    infos = _infos(tiny_run, "update_sweep")
    assert len(infos) == len(ran_here(tiny_run)) * 2  # tiny runs the first two points: clustered and scattered
    for x in infos.values():
        assert x["rows_changed_verified"] == x["rows_targeted"] > 0
        assert x["route"] == "join" and set(x["reads_after"]) == {"revenue_last_7_days", "status_totals", "point_lookup"}
    assert infos["iceberg-cow:clustered"]["files_touched"] <= 2 < infos["iceberg-cow:scattered"]["files_touched"]
    # copy-on-write rewrites more bytes for scattered rows than for the same number clustered
    assert infos["iceberg-cow:scattered"]["filesystem"]["bytes_added"] > infos["iceberg-cow:clustered"]["filesystem"]["bytes_added"]


def _engine_records(node, found=None) -> list[dict]:
    """Every per-engine read record anywhere in a benchmark's extra_info (dashboards, series, settlements)."""
    found = [] if found is None else found
    if isinstance(node, dict):
        if isinstance(node.get("engines"), dict):
            found.append(node["engines"])
        for value in node.values():
            _engine_records(value, found)
    elif isinstance(node, list):
        for value in node:
            _engine_records(value, found)
    return found


def _second_engine(record) -> dict:
    duck = record["json"]["cowmor"]["environment"]["engines"].get("duckdb", {"status": "not selected"})
    if duck["status"] != "available":
        pytest.skip(f"duckdb did not run here: {duck.get('reason', duck['status'])}")
    return duck


def test_every_read_of_every_scenario_ran_on_both_engines_and_agreed(tiny_run):
    _second_engine(tiny_run)
    per_config: dict[str, int] = {}
    for b in tiny_run["json"]["benchmarks"]:
        if b["extra_info"]["scenario"] in ("table_growth", "late_arrivals", "concurrent_compaction", "memory_needed"):
            continue  # these verify their rows with Spark queries; they make no dashboard read
        records = _engine_records(b["extra_info"])
        assert records, b["name"]
        for engines in records:
            assert set(engines) == {"spark", "duckdb"}, (b["name"], engines)
            assert not any("unsupported" in e for e in engines.values()), (b["name"], engines)
        per_config[b["extra_info"]["config_id"]] = per_config.get(b["extra_info"]["config_id"], 0) + len(records)
    assert set(per_config) == ran_here(tiny_run)


def test_the_second_engine_reads_every_configuration_and_records_its_limits(tiny_run):
    duck = _second_engine(tiny_run)
    assert duck["version"] == "duckdb 1.4.4" and duck["settings"]["memory_limit_bytes"] > 0
    assert set(duck["settings"]["extensions"]) == {"avro", "iceberg", "delta"}
    assert set(duck["support"]) == ran_here(tiny_run)
    for config_id, modes in duck["support"].items():
        assert modes["snapshot"] == "reads", (config_id, modes)
    if "hudi-mor" in ran_here(tiny_run):  # hudi-rs reads the read-optimized view too, to the same rows as Spark
        assert duck["support"]["hudi-mor"]["read_optimized"] == "reads"
        for step in _infos(tiny_run, "dinner_peak")["hudi-mor"]["series"]:
            ro = step["read_optimized"]["engines"]
            assert ro["duckdb"]["rows_not_yet_visible"] == ro["spark"]["rows_not_yet_visible"]


def test_table_growth_keeps_the_update_and_grows_the_table(tiny_run):
    infos = _infos(tiny_run, "table_growth")
    assert len(infos) == len(ran_here(tiny_run)) * 2  # tiny: 3 (the payments table) and 6 files per day
    for key, x in infos.items():
        assert x["rows_changed_verified"] == x["rows_targeted"] == TINY_HOTFIX, key
    for config_id in ran_here(tiny_run):
        small, large = infos[f"{config_id}:36files"], infos[f"{config_id}:72files"]
        assert large["rows_total"] == 2 * small["rows_total"]
        for x in (small, large):  # copy-on-write rewrites the files the rows sit in; merge-on-read none of them
            removed = x["metadata"]["data_files_removed"]
            if CONFIGS[config_id].merges_on_read:
                assert removed == 0, (config_id, x["param"])
            else:
                assert 0 < removed <= x["files_touched"], (config_id, x["param"], removed, x["files_touched"])


@pytest.mark.spark
def test_every_benchmark_carries_its_uncertainty(tiny_run):
    for b in tiny_run["json"]["benchmarks"]:
        u = b["extra_info"]["uncertainty"]
        assert u["n"] == b["stats"]["rounds"] and u["cv"] >= 0
        assert (u["ci95"] is None) if u["n"] < 2 else (u["ci95"][0] <= u["median"] <= u["ci95"][1])
    plan = _update(tiny_run, "iceberg-cow")["rounds_plan"]
    assert plan["min_rounds"] == plan["max_rounds"] == plan["rounds"] == 2 and plan["target_ci"] == 0.10


def test_late_arrivals_measure_every_strategy(tiny_run):
    infos = _infos(tiny_run, "late_arrivals")
    assert set(infos) == ran_here(tiny_run)
    for config_id, x in infos.items():
        strategies = x["strategies"]
        plain = strategies["upsert"]
        assert plain["rows_late"] == 8 and plain["seconds"] > 0 and plain["source"].startswith("https://")
        # Hudi's ordering field keeps the newer version; elsewhere the last writer wins and every late row goes back
        expected_back = 0 if CONFIGS[config_id].family == "hudi" else plain["rows_late"]
        assert plain["rows_back_in_time"] == expected_back, config_id
        if CONFIGS[config_id].family == "hudi":
            assert "skipped" in strategies["guarded_merge"]
        else:
            assert strategies["guarded_merge"]["rows_back_in_time"] == 0, config_id  # the guard keeps every row current


def test_concurrent_compaction_records_every_commit_and_keeps_every_committed_batch(tiny_run):
    infos = _infos(tiny_run, "concurrent_compaction")
    assert set(infos) == ran_here(tiny_run)
    for config_id, x in infos.items():
        batches = x["batches"]
        assert len(batches) == 2 and [(b["batch"], b["concurrent"]) for b in batches] == [(1, False), (2, True)]
        assert x["commits_succeeded"] + x["batches_lost"] == 2 and x["answers_verified"]  # the table was checked
        assert x["commits_attempted"] == x["commits_succeeded"] + x["commits_failed_by_conflict"]
        assert all(c.get("class") for b in batches for c in b["conflicts"])  # every lost race names its exception
        assert all(s["source"] for s in x["concurrency_settings"])  # isolation, retries, locks with their docs
        if CONFIGS[config_id].merges_on_read:
            assert x["compactions"] and all("not_applicable" not in c for c in x["compactions"])
        else:
            assert x["compactions"][0]["not_applicable"] and not x["compaction_committed"]
    if "hudi-mor" in infos:
        keys = {s["key"] for s in infos["hudi-mor"]["concurrency_settings"]}
        assert {"hoodie.write.concurrency.mode", "hoodie.write.lock.provider"} <= keys


@pytest.mark.spark
def test_the_tiny_runs_hold_the_results_contract(tiny_run):
    """Each process's recorded run, and their merge, pass the validator CI runs (``python -m bench validate``)."""
    import subprocess
    import sys

    folders = [tiny_run["run_dir"], *sorted(tiny_run["run_dir"].parent.glob("e2e-*"))]
    done = subprocess.run([sys.executable, "-m", "bench", "validate", *map(str, folders)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("valid (results schema 2") == len(folders) >= 3, done.stdout
    (ARTIFACTS / "validate.txt").write_text(done.stdout)


@pytest.mark.spark
def test_file_size_steps_keep_the_update_and_grow_the_files(tiny_run):
    """Two steps at tiny (800 and 3,200 rows per file): the same 2 rows in 2 of 4 files, 4x the bytes per file;
    copy-on-write rewrites the touched files (so writes more bytes), merge-on-read removes none."""
    infos = [b["extra_info"] for b in tiny_run["json"]["benchmarks"] if b["extra_info"].get("scenario") == "file_size"
             and b["extra_info"]["route"] == "join"]
    by_config: dict[str, list[dict]] = {}
    for x in infos:
        by_config.setdefault(x["config_id"], []).append(x)
    assert set(by_config) == set(ran_here(tiny_run))
    for config_id, steps in by_config.items():
        small, large = sorted(steps, key=lambda x: x["file_bytes_mean"])
        assert large["rows_per_file"] == 4 * small["rows_per_file"] and 3 < large["file_bytes_mean"] / small["file_bytes_mean"] < 5
        for x in (small, large):
            assert x["rows_changed_verified"] == x["rows_targeted"] == x["files_touched"] == 2, (config_id, x["param"])
            assert x["target_file_bytes"] >= 2 * x["file_bytes_mean"]
            assert all(r["answer_ok"] for r in x["reads_after"].values())
            removed = x["metadata"]["data_files_removed"]
            if CONFIGS[config_id].merges_on_read:
                assert removed == 0 and x["compaction"]["seconds"] > 0, config_id
                assert x["compaction"]["live_files_after"]["delete_files"] == 0, config_id
            else:
                assert 0 < removed <= 2 and x["compaction"] is None, (config_id, removed)
        if not CONFIGS[config_id].merges_on_read:  # the rewritten files are 4x bigger (Hudi adds a fixed bloom filter)
            grown = large["filesystem"]["data"]["bytes_added"] / small["filesystem"]["data"]["bytes_added"]
            assert grown > 1.1, (config_id, grown)
        assert large["workspace_peak_bytes"] >= large["workspace_bytes"] > 0


def _routed(tiny_run, scenario):
    return {(x["config_id"], x["route"], x.get("param")): x for x in (b["extra_info"] for b in tiny_run["json"]["benchmarks"])
            if x.get("scenario") == scenario and x.get("operation") == "update"}


def test_pruned_and_indexed_updates_read_fewer_files_than_the_join_and_change_the_same_rows(tiny_run):
    """Spark's own scan metrics, never a timing: the join reads every data file to find its rows; literal keys (and
    Hudi's record index) read fewer files and fewer bytes, write the same rows, and are never flagged as a full scan.
    The hotfix takes every route at tiny; the file-size steps take the join there (``file_size_routes``)."""
    records = _routed(tiny_run, "payments_hotfix")
    assert {x["route"] for x in _routed(tiny_run, "file_size").values()} == {"join"}
    routes_run = {(c, r) for c, r, _ in records}
    expected = {(c, "join") for c in ran_here(tiny_run)} | {(c, "pruned") for c in ran_here(tiny_run)} \
        | {(c, "index") for c in ran_here(tiny_run) if CONFIGS[c].family == "hudi"}
    assert routes_run == expected
    for (config_id, route, param), x in records.items():
        locate, join = x["locate"], records[(config_id, "join", param)]
        assert x["rows_changed_verified"] == join["rows_changed_verified"] == x["rows_targeted"], (config_id, route)
        assert locate["statements"] >= 1, (config_id, route, locate)
        if route == "index":  # Hudi's write client looks the keys up itself: no SQL scan, only what its tasks read
            assert locate["largest_scan_files"] < x["table_data_files"] and x["locate_full_scan"] is not True, (config_id, locate)
            assert locate["bytes_read"] < join["locate"]["bytes_read"], (config_id, param)
            continue
        assert locate["scans"], (config_id, route, locate)
        if route == "join":
            assert x["locate_full_scan"] is True and locate["largest_scan_files"] >= x["table_data_files"], (config_id, locate)
            continue
        assert x["locate_full_scan"] is False, (config_id, route, param, locate)
        assert locate["largest_scan_files"] < join["locate"]["largest_scan_files"], (config_id, route, param)
        assert locate["bytes_read"] < join["locate"]["bytes_read"], (config_id, route, param)
        if CONFIGS[config_id].merges_on_read:  # the search changed, not the write: the same kind of files added
            assert x["metadata"]["data_files_removed"] == join["metadata"]["data_files_removed"] == 0, (config_id, route)


def _largest_scan(write: dict) -> int:
    return write["locate"]["largest_scan_files"]


def test_settlements_adjustments_by_literal_keys_or_the_index_read_fewer_files_and_agree(tiny_run):
    """The month's adjustments per locate route (Spark's scan metrics, never a timing): every route leaves the same
    answers; literal keys read fewer files than the join on every adjustment, and Hudi's index route runs (its MoR
    MERGE reads the new values from the correction feed's rows)."""
    for config_id in ran_here(tiny_run):
        join = _infos(tiny_run, "monthly_settlements")[config_id]
        pruned = _infos(tiny_run, "monthly_settlements", "pruned")[config_id]
        assert join["locate_full_scan"] is True and pruned["locate_full_scan"] is False, config_id
        assert all(_largest_scan(p) < _largest_scan(j) for p, j in zip(pruned["writes"], join["writes"])), config_id
        routes = [pruned] + ([_infos(tiny_run, "monthly_settlements", "index")[config_id]]
                             if CONFIGS[config_id].family == "hudi" else [])
        for x in routes:
            assert x["answers_verified"] and x["write_bytes_total"] > 0 and len(x["writes"]) == len(join["writes"])
            assert x["reads"]["reads"] == join["reads"]["reads"]


def test_dinner_peak_upserts_by_literal_keys_read_fewer_files_and_reach_the_same_table(tiny_run):
    """Iceberg and Delta: the batch's keys as a target-only condition in the MERGE prune the target's scan, and the
    table ends the same; Hudi's MERGE cannot take it (skipped with the reason) and upserts through its record index."""
    outcomes = tiny_run["json"]["cowmor"]["outcomes"]
    for config_id in ran_here(tiny_run):
        join = _infos(tiny_run, "dinner_peak")[config_id]
        if CONFIGS[config_id].family == "hudi":
            skipped = [o for o in outcomes if o["test"] == "test_dinner_peak" and o["config_id"] == config_id
                       and o["outcome"] == "skipped"]
            assert skipped and "record-key equality" in skipped[0]["reason"], (config_id, skipped)
            other = _infos(tiny_run, "dinner_peak", "index")[config_id]
        else:
            other = _infos(tiny_run, "dinner_peak", "pruned")[config_id]
            assert all(_largest_scan(p) < _largest_scan(j) for p, j in zip(other["series"], join["series"])), config_id
        assert other["row_count"] == join["row_count"] and other["answers_verified"], config_id
        assert other["rows_changed_verified"] == join["rows_changed_verified"], config_id


def _memory_figures(memory: dict) -> list[int]:
    """The figures that are never 0 where recorded: heaps and resident memory (execution memory may be 0: a plan with
    no sort, join or aggregation buffer asks Spark's memory manager for none)."""
    return [v for k, v in memory.items() if k.endswith("_peak_bytes") and v is not None
            and not k.startswith(("execution_", "storage_"))]


def test_every_measured_operation_and_read_records_its_peak_memory(tiny_run):
    """Each round of every update and compaction, every step of the sequences and every read on every engine carries
    its peak memory: the executors' heap over the stages it ran, the driver JVM's resident memory, this process's;
    each positive and below the machine's memory."""
    machine = tiny_run["json"]["cowmor"]["environment"]["machine"]["memory_bytes"]
    seen = 0
    for b in tiny_run["json"]["benchmarks"]:
        x = b["extra_info"]
        rounds = x.get("rounds") or []
        steps = [s for s in x.get("series") or [] if "memory" in s] + [w for w in x.get("writes") or [] if isinstance(w, dict)]
        for measured in rounds + steps:
            memory = measured["memory"]
            assert memory["python_rss_peak_bytes"] > 0 and memory["python_rss_scope"] == "operation", (b["name"], memory)
            assert memory["jvm_rss_peak_bytes"] > 0 and memory["driver_heap_peak_bytes"] > 0, (b["name"], memory)
            assert all(0 < v < machine for v in _memory_figures(memory)), (b["name"], memory)
            seen += 1
        for engines in _engine_records(x):
            for engine, read in engines.items():
                if "answer_ok" in read:  # a timed dashboard read (not a staleness count)
                    assert all(0 < v < machine for v in _memory_figures(read["memory"])), (b["name"], engine, read)
                    assert read["memory"]["python_rss_peak_bytes"] > 0
    updates = [_bench(tiny_run, "test_hotfix_update", c)["extra_info"] for c in ran_here(tiny_run)]
    # an update runs Spark stages: the executors' heap over them is recorded where a poll sampled them
    assert all(r["memory"]["stages"] > 0 for x in updates for r in x["rounds"])
    assert any(r["memory"]["executor_heap_peak_bytes"] for x in updates for r in x["rounds"])
    assert seen >= 2 * len(updates)
    assert 0 < tiny_run["json"]["cowmor"]["time_breakdown"]["python_rss_peak_bytes"] < machine  # the harness's own


def test_the_memory_search_records_the_memory_each_configuration_needs_on_both_tables(tiny_run):
    """At tiny the search has one rung, the driver's own 2 GB: every configuration and route completes the update on
    both tables with it, its rows verified, its memory recorded."""
    found = {(b["extra_info"]["config_id"], b["extra_info"]["route"], b["extra_info"]["table"]): b["extra_info"]
             for b in tiny_run["json"]["benchmarks"] if b["extra_info"].get("scenario") == "memory_needed"}
    assert {c for c, _, _ in found} == ran_here(tiny_run)
    assert {t for _, _, t in found} == {"hotfix", "largest_file_step"}
    for (config_id, route, table), x in found.items():
        assert x["ladder_mb"] == [2048] and x["needed_mb"] == 2048 and not x["more_than_ladder"], (config_id, route, table)
        attempt = x["attempts"][0]
        assert attempt["completed"] and attempt["rows_changed_verified"] == x["rows_targeted"]
        assert attempt["memory"]["jvm_rss_peak_bytes"] > 0


def _same_where_declared(view, raw, where: str) -> None:
    """Every value the typed view declares equals the recorded one, nested parts included."""
    import dataclasses

    from bench.results import schema

    if dataclasses.is_dataclass(view):
        names = {schema.key(f): f.name for f in dataclasses.fields(view)}
        for key, value in (raw or {}).items():
            if key in names:
                _same_where_declared(getattr(view, names[key]), value, f"{where}.{key}")
    elif isinstance(view, list):
        assert len(view) == len(raw), where
        for i, (a, b) in enumerate(zip(view, raw)):
            _same_where_declared(a, b, f"{where}[{i}]")
    elif isinstance(view, dict):
        assert view.keys() == raw.keys(), where
        for key in raw:
            _same_where_declared(view[key], raw[key], f"{where}.{key}")
    else:
        assert view == raw, (where, view, raw)


def test_every_record_of_the_tiny_run_reads_as_its_typed_class(tiny_run):
    """The report reads records through ``Record.view``: every scenario's record, nested parts included, comes back
    field for field from the classes in bench/results/schema.py."""
    from bench.results import schema

    kinds = set()
    for b in tiny_run["json"]["benchmarks"]:
        x = b["extra_info"]
        kind = schema.KINDS[(x["scenario"], x["operation"])]
        _same_where_declared(schema.parse(kind, x), x, b["name"])
        kinds.add(kind)
    assert {schema.HotfixUpdate, schema.FileSizeUpdate, schema.DinnerPeakSequence, schema.SettlementsSequence,
            schema.DegradationSequence, schema.MemorySearch, schema.WritersRace} <= kinds
