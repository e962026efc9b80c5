"""Every configuration on a real S3 server (SeaweedFS, started by the run on loopback): answers on both engines,
bytes and files from the object listings, and the requests each operation made.

Run with:  make s3-test   (pytest tests/objectstore -m objectstore; needs the S3A jars: make s3a-jars)
"""

from __future__ import annotations

import os

import pytest

from bench.servers import daemons
from tests.conftest import ROOT, TINY_LANES, merge_records, start_scenarios

pytestmark = [pytest.mark.objectstore, pytest.mark.spark]
HOTFIX = str(ROOT / "scenarios" / "test_payments_hotfix.py")


@pytest.fixture(scope="module")
def s3_run(tmp_path_factory):
    if not os.environ.get("COWMOR_S3A_JARS_DIR"):
        pytest.skip("COWMOR_S3A_JARS_DIR is not set (make s3a-jars fetches the S3A connector; make s3-test sets it)")
    tmp = tmp_path_factory.mktemp("s3")
    # every request of Spark and DuckDB passes the delaying proxy (1 ms: the path, not the latency, is under test);
    # one round per operation: answers, bytes, files and requests are what this run checks, not timings; the join and
    # the literal keys (Hudi's record index finds keys the same way on any storage: the tiny local run covers it).
    # In the tiny run's two lanes, each with its own S3 server: CI runs this beside the cluster test, which ends
    # first, and one process alone then left a core idle
    finishes = [start_scenarios(tmp, HOTFIX, "--scale", "tiny", "--formats", families, "--object-store", "seaweedfs",
                                "--object-store-delay-ms", "1", "--min-rounds", "1", "--max-rounds", "1",
                                "--routes", "join,pruned", run_id=f"s3-tiny-{number}")
                for number, (families, _) in enumerate(TINY_LANES)]
    try:
        records = [finish() for finish in finishes]
    finally:  # a lane that timed out stops only itself: the other must not outlive the session with its server
        for finish in finishes:
            if finish.proc.poll() is None:
                finish.proc.terminate()
                finish.proc.wait(timeout=120)
    for record in records:
        assert record["returncode"] == 0, record["stdout"][-6000:]
    record = merge_records(records, tmp / "results" / "s3-tiny", name="s3-tiny")
    return {**record, "lanes": [r for r in records if "json" in r], "starters": {f.proc.pid for f in finishes}}


def test_the_run_says_where_it_measured(s3_run):
    for lane in s3_run["lanes"]:  # each lane its own server
        storage = lane["json"]["cowmor"]["environment"]["storage"]
        assert storage["kind"].startswith("seaweedfs") and storage["requests_counted"]
        assert storage["delay_ms_per_request"] == 1 and storage["endpoint"] != storage["server_endpoint"]
        assert all(name.endswith(".jar") and len(digest) == 64 for name, digest in storage["s3a_jars"].items())
        assert lane["json"]["cowmor"]["environment"]["workspace"].startswith("s3a://warehouse/")


def test_every_available_configuration_updated_on_the_object_store(s3_run):
    outcomes = s3_run["json"]["cowmor"]["outcomes"]
    ran = {o["config_id"] for o in outcomes if o["outcome"] == "passed"}
    failed = [o for o in outcomes if o["outcome"] == "failed"]
    assert not failed, failed
    assert {"iceberg-cow", "iceberg-mor", "iceberg-dv"} <= ran  # the others where their jars are
    updates = [b for b in s3_run["json"]["benchmarks"] if b["extra_info"].get("operation") == "update"]
    assert {b["extra_info"]["config_id"] for b in updates} == {c for c in ran}
    for b in updates:
        x = b["extra_info"]
        assert x["rows_changed_verified"] == x["rows_targeted"]
        assert x["filesystem"]["files_added"] > 0 and x["filesystem"]["bytes_added"] > 0  # from the object listing
        requests = x["requests"]
        assert requests["PUT"] > 0 and requests["total"] >= requests["PUT"], (x["config_id"], requests)


def test_both_engines_answered_every_read_or_said_why_not(s3_run):
    for b in s3_run["json"]["benchmarks"]:
        for phase in ("reads_before", "reads_after", "reads_after_compaction"):
            for query, r in (b["extra_info"].get(phase) or {}).items():
                spark = r["engines"]["spark"]
                assert spark["answer_ok"] and spark["requests"]["total"] > 0, (b["name"], query)
                duck = r["engines"].get("duckdb")
                assert duck is not None and (duck.get("answer_ok") or duck.get("unsupported")), (b["name"], query, duck)


def test_no_server_is_left_behind(s3_run):
    """Only this run's servers: CI runs the cluster test beside it, whose Spark daemons share the pid folder (a check
    of every recorded daemon failed CI whenever this run ended first)."""
    assert not daemons.alive_groups_started_by(s3_run["starters"])


def test_on_the_object_store_literal_keys_search_fewer_files_than_the_join(s3_run):
    """The locate routes on S3: the same rows, fewer files searched (Spark's scan metrics, not timings); the requests of
    each route are recorded for the report's per-route comparison."""
    updates = {(b["extra_info"]["config_id"], b["extra_info"]["route"]): b["extra_info"] for b in s3_run["json"]["benchmarks"]
               if b["extra_info"].get("operation") == "update"}
    pruned = [c for c, route in updates if route == "pruned"]
    assert {"iceberg-cow", "iceberg-mor", "iceberg-dv"} <= set(pruned)
    for config_id in pruned:
        x, join = updates[(config_id, "pruned")], updates[(config_id, "join")]
        assert x["rows_changed_verified"] == join["rows_changed_verified"] == x["rows_targeted"]
        assert x["locate"]["largest_scan_files"] < join["locate"]["largest_scan_files"], config_id
        assert x["locate_full_scan"] is False and join["locate_full_scan"] is True, config_id
        assert x["requests"]["total"] > 0 and join["requests"]["total"] > 0


def test_a_removed_table_leaves_nothing_that_lists(tmp_path, monkeypatch):
    """SeaweedFS keeps emptied folders until a delayed cleanup, and Delta's path-based CREATE TABLE takes any listed
    entry for an existing table: a second route's warm-up could not make its table again (seen at `small` on S3)."""
    import pyarrow.fs as pafs

    from bench.core.storage import Files
    from bench.run.workspace import Workspace
    from bench.servers import objectstore

    store = objectstore.start_seaweedfs(tmp_path, {})
    try:
        for name, value in store.environ().items():  # this process's pyarrow reaches the server; undone after
            monkeypatch.setenv(name, value)
        workspace = Workspace(f"s3a://{objectstore.BUCKET}/cowmor-test", store.clear_folders)
        table = Files.of(f"{workspace.warehouse}/delta/warmup")
        for name in ("_delta_log/00000000000000000000.json", *(f"settled_date=2026-01-0{d}/part-0.parquet" for d in range(1, 6))):
            (table / name).write_text("x")
        assert len(table.iterdir()) == 6
        workspace.remove(table.uri)
        assert not table.exists() and not table.iterdir()
        assert not [i for i in table.fs.get_file_info(pafs.FileSelector(table.parent.path, allow_not_found=True))]
        store.clear_folders(table.uri)  # nothing left: not an error
    finally:
        store.stop()
