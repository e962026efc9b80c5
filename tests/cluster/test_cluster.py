"""The payments hotfix on a real Spark standalone master + worker (loopback), checked against local mode.

Run with:  make cluster-test   (pytest tests/cluster -m cluster)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bench.servers.cluster import StandaloneCluster, group_alive
from tests.conftest import ARTIFACTS, ROOT, run_scenarios

pytestmark = [pytest.mark.cluster, pytest.mark.spark]
HOTFIX = str(ROOT / "scenarios" / "test_payments_hotfix.py")
ARGS = (HOTFIX, "--scale", "tiny", "--formats", "iceberg", "--routes", "join,pruned", "--driver-memory", "1g")


# A local tiny run's record of this same hotfix (Iceberg, routes join and pruned) to compare with, instead of running
# it again: CI points here the Iceberg lane of the tiny run `make test` is making (test-artifacts/e2e-0.json, recorded
# while its Hudi lane still runs), one JVM and ~100 CPU-s fewer
BASELINE_ENV = "COWMOR_CLUSTER_BASELINE"
PATH_COPIES = 3  # at most, how often a delete file holds a data file's path


def local_baseline(path: str) -> dict:
    """The hotfix's Iceberg records (routes join, pruned) of a recorded local tiny run, as a run record."""
    data = json.loads(Path(path).read_text())
    env = data["cowmor"]["environment"]
    assert env["scale"]["name"] == "tiny" and not env["spark"]["master"].startswith("spark://"), (path, env["scale"])
    data["benchmarks"] = [b for b in data["benchmarks"] if b["extra_info"].get("scenario") == "payments_hotfix"
                          and b["extra_info"]["config_id"].startswith("iceberg-")
                          and b["extra_info"].get("route", "join") in ("join", "pruned")]
    return {"returncode": 0, "json": data, "stdout": f"(recorded: {path})", "stderr": ""}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cluster")
    baseline = os.environ.get(BASELINE_ENV)
    local = local_baseline(baseline) if baseline else \
        run_scenarios(tmp / "local", *ARGS, "--spark-master", "local[2]", run_id="local")
    cluster = StandaloneCluster(tmp / "daemons")
    try:
        with cluster:
            pids = [p.pid for p in cluster.procs]
            remote = run_scenarios(tmp / "cluster", *ARGS, "--spark-master", cluster.master_url,
                                   "--spark-conf", "spark.executor.memory=1g", "--spark-conf", "spark.cores.max=2",
                                   run_id="cluster")
            master_log = (tmp / "daemons" / "master.log").read_text()
    finally:
        cluster.stop()
    return {"local": local, "cluster": remote, "pids": pids, "master_log": master_log, "master": cluster.master_url}


def workspace(record) -> str:
    return record["json"]["cowmor"]["environment"]["workspace"]


def _by_name(record):
    assert record["returncode"] == 0, record["stdout"][-3000:] + record["stderr"][-2000:]
    return {b["name"]: b for b in record["json"]["benchmarks"]}


def test_cluster_run_used_the_standalone_master(runs):
    env = runs["cluster"]["json"]["cowmor"]["environment"]
    assert env["spark"]["master"] == runs["master"]
    assert env["spark"]["conf"]["spark.executor.memory"] == "1g"  # --spark-conf passes through and is recorded
    assert "Registering app cowmor-iceberg" in runs["master_log"]  # executors really ran on the worker


def test_cluster_matches_local(runs):
    local, cluster = _by_name(runs["local"]), _by_name(runs["cluster"])
    assert set(local) == set(cluster) and len(local) == 8  # 3 updates by 2 routes, 2 compactions
    for name, lb in local.items():  # the search reads the same files wherever the executors run
        if lb["extra_info"]["operation"] == "update":
            lx, cx = lb["extra_info"]["locate"], cluster[name]["extra_info"]["locate"]
            assert lx["largest_scan_files"] == cx["largest_scan_files"] and lx["files_read"] == cx["files_read"], name
    figures = {}
    longer = abs(len(workspace(runs["local"])) - len(workspace(runs["cluster"])))
    for name, lb in local.items():
        lx, cx = lb["extra_info"], cluster[name]["extra_info"]
        assert lx["rows_changed_verified"] == cx["rows_changed_verified"] and lx["row_count"] == cx["row_count"]
        for phase in ("reads_after", "reads_after_compaction"):
            if phase in lx:
                assert {q: r["rows"] for q, r in lx[phase].items()} == {q: r["rows"] for q, r in cx[phase].items()}
                assert all(r["answer_ok"] for r in cx[phase].values())
        for kind in ("data", "delete"):
            lf, cf = lx["filesystem"][kind], cx["filesystem"][kind]
            assert lf["files_added"] == cf["files_added"], (name, kind)
            # a delete file names the data files it deletes from (a DV's Puffin footer once per file, a position
            # delete file in its rows and min/max): the two warehouses' path lengths differ by `longer` bytes a name
            paths = PATH_COPIES * lf["files_added"] * longer if kind == "delete" else 0
            assert abs(lf["bytes_added"] - cf["bytes_added"]) <= 0.02 * max(lf["bytes_added"], 1) + paths, (name, kind)
        assert lx["metadata"]["data_files_removed"] == cx["metadata"]["data_files_removed"]
        assert lx["metadata"]["delete_files_added"] == cx["metadata"]["delete_files_added"]
        figures[name] = {"local_median_s": lb["stats"]["median"], "cluster_median_s": cluster[name]["stats"]["median"],
                         "bytes_added_local": lx["filesystem"]["bytes_added"], "bytes_added_cluster": cx["filesystem"]["bytes_added"]}
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "cluster-vs-local.json").write_text(json.dumps(figures, indent=2))


def test_no_daemon_left_behind(runs):
    assert runs["pids"] and not any(group_alive(pid) for pid in runs["pids"])


def test_daemons_are_stopped_even_on_failure(tmp_path):
    cluster = StandaloneCluster(tmp_path)
    with pytest.raises(RuntimeError):
        with cluster:
            pids = [p.pid for p in cluster.procs]
            raise RuntimeError("a failing test body")
    assert not any(group_alive(pid) for pid in pids)


def test_daemons_die_when_the_process_holding_them_is_killed(tmp_path):
    """A CI time limit or a timeout kills the test process from outside: no Master or Worker may outlive it."""
    import subprocess
    import sys
    import time

    code = ("import sys, time, pathlib; from bench.servers.cluster import StandaloneCluster; "
            "c = StandaloneCluster(pathlib.Path(sys.argv[1])).__enter__(); "
            "print(' '.join(str(p.pid) for p in c.procs), flush=True); time.sleep(600)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        pids = [int(p) for p in holder.stdout.readline().split()]
        assert len(pids) == 2 and all(group_alive(p) for p in pids)
        holder.kill()  # SIGKILL: none of the holder's cleanup runs
        holder.wait()
        deadline = time.monotonic() + 60  # a bound on a hang; the kernel's parent-death signal acts at once
        while time.monotonic() < deadline and any(group_alive(p) for p in pids):
            time.sleep(0.5)
        assert not any(group_alive(p) for p in pids), "a Spark daemon outlived the killed process that started it"
    finally:
        holder.kill()
