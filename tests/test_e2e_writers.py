"""Several writers at tiny, on real Spark, Iceberg (JDBC catalog on the run's PostgreSQL), Hudi (ZooKeeper lock on the
run's ZooKeeper) and Delta, checked through the recorded JSON: every batch accounted for, the invariants held on
every engine, the servers started by the run and gone after it."""

from __future__ import annotations

import subprocess

import pytest

from bench.core.failures import KINDS, NOT_RECORDED
from tests.conftest import WRITERS_CONFIGS
from tests.test_e2e import ran

pytestmark = pytest.mark.spark
TINY_WRITERS, TINY_BATCHES, TINY_KEYS = 2, 2, 4


def races(record) -> list[dict]:
    return [b["extra_info"] for b in record["json"]["benchmarks"] if b["extra_info"].get("scenario") == "several_writers"]


def race(record, config_id: str, kind: str, control: str = "default") -> dict:
    ran(record, config_id)
    found = [x for x in races(record) if (x["config_id"], x["kind"], x["control"]) == (config_id, kind, control)]
    assert len(found) == 1, f"{config_id} {kind} {control}: {len(found)} races recorded"
    return found[0]


RACES = [("iceberg-mor", "processes", "default"), ("iceberg-mor", "threads", "default"),
         ("hudi-mor", "processes", "default"), ("hudi-mor", "processes", "nbcc"),
         ("hudi-mor", "threads", "default"), ("delta-dv", "threads", "default")]
# configurations whose commits are serializable: a broken invariant there fails CI; under NBCC (event-time merging,
# writers never wait) a broken invariant is the finding this scenario exists for, recorded and reported
SERIALIZABLE = {("iceberg-mor", "default"), ("hudi-mor", "default"), ("delta-dv", "default")}


@pytest.mark.parametrize("config_id, kind, control", RACES)
def test_every_batch_is_accounted_for_and_the_invariants_are_checked_on_every_engine(tiny_run, config_id, kind, control):
    x = race(tiny_run, config_id, kind, control)
    assert x["writers"] == TINY_WRITERS and x["batches_attempted"] == TINY_WRITERS * TINY_BATCHES
    assert len(x["batches"]) == x["batches_attempted"] and not x["writer_errors"]
    assert x["batches_committed"] + x["batches_failed"] == x["batches_attempted"]
    assert x["commit_attempts"] == x["batches_attempted"] + x["retries"]
    assert x["conflicts"] == sum(len(b["failures"]) for b in x["batches"]) == sum(x["failure_causes"].values())
    assert all(f["cause"] for b in x["batches"] for f in b["failures"])  # each failed attempt with its cause
    assert all(f["kind"] in KINDS and f["kind"] != NOT_RECORDED for b in x["batches"] for f in b["failures"])
    assert sum(x["failure_kinds"].values()) == x["conflicts"]
    wait = x["lock_wait_per_commit_s"]  # from a Hudi writer application's own log; no lock elsewhere, none for threads
    if config_id.startswith("hudi") and kind == "processes":
        assert wait["commits"] == x["batches_committed"] and 0 <= wait["median"] <= wait["max"] < x["race_wall_s"], wait
    else:
        assert wait is None, (config_id, kind, wait)
    assert x["rows_committed"] == TINY_KEYS * x["batches_committed"]
    engines = x["invariants"]["engines"]
    assert engines["spark"]["read"] == "reads" and set(engines["spark"]["checks"]) >= {
        "each_acknowledged_batch_once", "last_writer_wins", "no_deleted_key", "no_duplicate_key", "row_count",
        "every_other_value_unchanged"}
    assert x["services"], "the table service never ran beside the writers"
    if config_id.startswith("iceberg"):  # DuckDB follows the catalog's own pointer to the JDBC table's metadata
        assert engines["duckdb"]["read"] == "reads" and "pointer" not in engines["duckdb"], engines["duckdb"]
    failed = [name for e in engines.values() if e["read"] == "reads" for name, c in e["checks"].items() if not c["ok"]]
    failed += [name for name, c in x["invariants"]["history"].items() if not c["ok"]]
    assert bool(failed) == bool(x["violations"])  # every broken check is in the record's violations, with evidence
    assert all("key " in v or "commit" in v or "rows" in v for v in x["violations"])
    isolation = x["invariants"]["commit_isolation"]  # Delta's commits record the level they were checked under
    assert (isolation and set(isolation) <= {"Serializable", "WriteSerializable", "SnapshotIsolation"}
            and sum(isolation.values()) == x["batches_committed"]) if config_id.startswith("delta") else isolation is None
    if config_id.startswith(("hudi", "delta")):  # their commits carry the attempt's label (Hudi extraMetadata, Delta userMetadata)
        assert "each_commit_acknowledged_once" in x["invariants"]["history"]
        assert all(any(c["label"].startswith(b["tag"] + "#") for c in b["commits"]) for b in x["batches"] if b["committed"])
    if (config_id, control) in SERIALIZABLE:
        assert x["violations"] == [], x["violations"]
    outcome = [o for o in tiny_run["json"]["cowmor"]["outcomes"] if o["test"] == "test_several_writers"
               and o["config_id"] == config_id and o["params"]["kind"] == kind and o["params"]["control"] == control]
    assert [o["outcome"] for o in outcome] == (["failed"] if x["violations"] else ["passed"])


def test_writers_coordinate_through_servers_the_run_started(tiny_run):
    iceberg = race(tiny_run, "iceberg-mor", "processes")["coordination"]
    assert "started by the run" in iceberg["servers"]["iceberg_catalog"]["kind"]
    assert iceberg["servers"]["iceberg_catalog"]["uri"].startswith("jdbc:postgresql://127.0.0.1:")
    assert any(s["key"].endswith("catalog-impl") and s["value"] == "org.apache.iceberg.jdbc.JdbcCatalog"
               for s in iceberg["settings"])
    hudi = race(tiny_run, "hudi-mor", "processes")["coordination"]
    assert "started by the run" in hudi["servers"]["hudi_lock"]["kind"]
    settings = {s["key"]: s["value"] for s in hudi["settings"]}
    assert settings["hoodie.write.lock.provider"].endswith("ZookeeperBasedLockProvider")
    assert settings["hoodie.write.lock.zookeeper.url"] == hudi["servers"]["hudi_lock"]["connect"]
    assert settings["hoodie.clean.automatic"] == "true"  # Hudi's default: each writer cleans (writer_inline_clean=1)
    assert settings["hoodie.client.heartbeat.interval_in_ms"] == "2000"  # tiny's races last a minute
    assert hudi["setup"] == {"name": "realistic", "service": True, "service_every_commits": 2, "keep_snapshots_s": 300.0,
                             "writers_clean": True, "heartbeat_ms": 2000, "retry": "checked", "route": "pruned",
                             "names_partition": False}
    nbcc = {s["key"]: s["value"] for s in race(tiny_run, "hudi-mor", "processes", "nbcc")["coordination"]["settings"]}
    assert nbcc["hoodie.write.concurrency.mode"] == "NON_BLOCKING_CONCURRENCY_CONTROL"


def test_delta_writers_in_separate_applications_are_skipped_with_the_reason(tiny_run):
    ran(tiny_run, "delta-dv")
    skipped = [o for o in tiny_run["json"]["cowmor"]["outcomes"] if o["test"] == "test_several_writers"
               and o["config_id"] == "delta-dv" and o["params"].get("kind") == "processes"]
    assert skipped and all(o["outcome"] == "skipped" and "multi-driver" in o["reason"] for o in skipped)


def test_no_catalog_or_lock_server_outlives_the_run(tiny_run):
    assert set(WRITERS_CONFIGS.split(",")) <= {x["config_id"] for x in races(tiny_run)}
    left = subprocess.run(["pgrep", "-af", "cowmor-postgres-|cowmor-zookeeper-|bench.writers.writer_process"],
                          capture_output=True, text=True).stdout.strip()
    assert left == "", f"still running after the run: {left}"


def test_one_pool_of_writer_applications_serves_every_race_of_a_family(tiny_run):
    """Hudi's OCC race and its NBCC race take the same two writer applications (each job brings its settings): a
    writer's JVM is started once per family, not once per race."""
    started = [race(tiny_run, "hudi-mor", "processes", control)["writers_started"] for control in ("default", "nbcc")]
    assert sorted(started) == [0, TINY_WRITERS], started
    assert race(tiny_run, "iceberg-mor", "processes")["writers_started"] == TINY_WRITERS


def test_hudi_writer_applications_log_how_each_commit_was_checked_for_conflicts(tiny_run):
    """Each Hudi writer application's ``writer.log`` keeps Hudi's conflict decisions (the last completed instant a
    commit's check starts from, the conflicts it found, and a line for each commit it let through): the evidence a
    lost update is read against."""
    occ = race(tiny_run, "hudi-mor", "processes")
    logs = sorted(tiny_run["run_dir"].parent.glob("e2e-*/writers/pool-*/writer-*/writer.log"))
    text = "\n".join(p.read_text(errors="replace") for p in logs)
    assert text.count("Successfully resolved conflicts, if any") >= occ["batches_committed"] > 0, [str(p) for p in logs]
    assert "State change starting for" in text
