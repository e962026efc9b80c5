"""Shared test fixtures: paths to ../shared/testdata (skipped when absent) and one real tiny run."""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from bench.formats import CONFIGS

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


# The test runs' drivers use the JVM's throughput collector: they check answers, bytes and files, never pauses, and
# on 2 cores G1's concurrent threads take CPU the runs need (Iceberg's scenarios at tiny, run alone: 344 -> 301
# CPU seconds, -13%; the serial collector the same). Recorded in each run's Spark settings like any --spark-conf.
# Tried and left out: C1 only (-XX:TieredStopAtLevel=1) cut a lane subset's CPU 15% alone (308 -> 261 s) but made
# Hudi's lane slower beside the other (808 -> 938 s, its statements run long enough for C2 to pay); switching off
# whole-stage codegen saved nothing (308 -> 323 s). The lanes' time is Spark executing the scenarios' statements
# (py-spy of lane 0: 32% MERGEs, 29% Spark reads, 12% table setup).
TEST_JVM = ("--spark-conf", "spark.driver.extraJavaOptions=-XX:+UseParallelGC")


def start_scenarios(tmp: Path, *args: str, run_id: str = "e2e", extra_env: dict | None = None,
                    warehouse: Path | None = None):
    """Start the scenarios exactly as a user would (pytest in a subprocess); ``finish()`` waits for the record.
    The run's workspace is its own (``tmp/ws-<run id>``) unless ``warehouse`` names another run's."""
    cmd = [sys.executable, "-m", "pytest", *args, *TEST_JVM, "-p", "no:cacheprovider", "-rs", "--rootdir", str(ROOT),
           "-c", str(ROOT / "pyproject.toml"), "--warehouse", str(warehouse or tmp / f"ws-{run_id}"), "--results-dir",
           str(tmp / "results"), "--run-id", run_id]
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / f"{run_id}.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, text=True,
                                env={**os.environ, "COWMOR_OFFLINE": "1", **(extra_env or {})})

    def finish() -> dict:
        try:
            proc.wait(timeout=2400)
        except subprocess.TimeoutExpired:
            proc.terminate()  # the run saves what it measured on SIGTERM (artifacts for the failure)
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise
        run_dir = tmp / "results" / run_id
        output = log.read_text()
        record = {"returncode": proc.returncode, "stdout": output, "stderr": "", "run_dir": run_dir}
        if (run_dir / "benchmark.json").exists():
            record["json"] = json.loads((run_dir / "benchmark.json").read_text())
        return record
    finish.proc = proc  # type: ignore[attr-defined]  # for a session that ends before the run does
    return finish


def run_scenarios(tmp: Path, *args: str, run_id: str = "e2e", extra_env: dict | None = None) -> dict:
    return start_scenarios(tmp, *args, run_id=run_id, extra_env=extra_env)()


# The tiny run in two lanes side by side: a tiny table keeps Spark's driver busy with planning more than the
# machine's cores, so two JVMs together finish well before one after the other. Measured on 2 cores (fresh clone):
# iceberg+delta | hudi took 8:16 | 6:33; one process per family 7:11 | 10:00 | 9:47 (three JVMs contend).
# Each lane's process also races its own families' several writers (one merge-on-read configuration per family,
# Hudi's with OCC and NBCC, separate applications and threads where both apply), in the family's application the
# scenarios already started and warmed: a writers' process of its own per lane started each family's JVM again and
# paid its cold first table builds (measured: 215 s | 274 s of races, 0.7-0.8 cores busy, after 938 s | 965 s).
TINY_LANES = (("iceberg,delta", "iceberg-mor,delta-dv"), ("hudi", "hudi-mor"))
WRITERS_CONFIGS = ",".join(writers for _, writers in TINY_LANES)


def lane_selection(writers: str) -> str:
    """The ``-k`` expression of a lane: every scenario, and the several writers' races of ``writers`` only."""
    return " or ".join(["not test_several_writers", *writers.split(",")])


VIOLATED = "AssertionError: invariants violated"


def only_violations_failed(record: dict) -> bool:
    """The run failed only where a race broke an invariant (recorded with its evidence), not anywhere else."""
    failed = [o for o in record.get("json", {}).get("cowmor", {}).get("outcomes", []) if o["outcome"] == "failed"]
    return record["returncode"] == 1 and bool(failed) and all(o.get("reason", "").startswith(VIOLATED) for o in failed)


def merge_records(records: list[dict], run_dir: Path, name: str = "e2e") -> dict:
    """One run record (and run folder) from runs of disjoint families: benchmarks, outcomes and time added up,
    the environment's per-family and per-engine parts united; its log and record also kept as CI's artifacts
    (``name``.log, ``name``.json, published whole)."""
    # a process whose families all skipped (no jars here) measured nothing and wrote no benchmark.json, but its
    # folder keeps each skip with its reason and the environment naming the missing jars: those join the run
    unmeasured = [r["run_dir"] for r in records if "json" not in r and r.get("run_dir")
                  and (Path(r["run_dir"]) / "outcomes.json").exists()]
    records = [r for r in records if "json" in r]
    datas = [r["json"] for r in records]
    merged = json.loads(json.dumps(datas[0]))
    env = merged["cowmor"]["environment"]
    for folder in map(Path, unmeasured):
        merged["cowmor"]["outcomes"] += json.loads((folder / "outcomes.json").read_text())
        skipped_env = json.loads((folder / "environment.json").read_text())
        for family, info in skipped_env.get("formats", {}).items():
            env["formats"].setdefault(family, info)
        for config_id, info in skipped_env.get("configs", {}).items():
            env["configs"].setdefault(config_id, info)  # the report lists it, skipped with its reason
    for data in datas[1:]:
        other = data["cowmor"]
        merged["benchmarks"] += data["benchmarks"]
        merged["cowmor"]["outcomes"] += other["outcomes"]
        for family, info in other["environment"]["formats"].items():
            if info.get("status") == "available" or family not in env["formats"]:
                env["formats"][family] = info
        env["configs"].update(other["environment"]["configs"])
        for engine_name, engine in other["environment"].get("engines", {}).items():
            into = env.setdefault("engines", {}).setdefault(engine_name, engine)
            if into is not engine and "support" in engine:
                into.setdefault("support", {}).update(engine["support"])
        time = merged["cowmor"]["time_breakdown"]
        for key, value in other["time_breakdown"]["seconds"].items():
            time["seconds"][key] = time["seconds"].get(key, 0) + value
        time["wall_s"] += other["time_breakdown"]["wall_s"]
        time["cpu_s"] = time.get("cpu_s", 0) + other["time_breakdown"].get("cpu_s", 0)
        time["python_rss_peak_bytes"] = max(time.get("python_rss_peak_bytes") or 0,
                                            other["time_breakdown"].get("python_rss_peak_bytes") or 0)
        time["measured_share"] = sum(v for k, v in time["seconds"].items() if k.startswith(("measured", "second"))) / time["wall_s"]
    env["configs"] = {k: env["configs"][k] for k in CONFIGS if k in env["configs"]}
    run_dir.mkdir(parents=True, exist_ok=True)
    record = json.dumps(merged)
    (run_dir / "benchmark.json").write_text(record)
    for file, part in (("environment.json", env), ("outcomes.json", merged["cowmor"]["outcomes"]),
                       ("time_breakdown.json", merged["cowmor"]["time_breakdown"])):
        (run_dir / file).write_text(json.dumps(part, indent=2))
    stdout = "\n".join(r["stdout"] for r in records)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"{name}.log").write_text(stdout)
    publish_record(record, name)
    return {"returncode": max(r["returncode"] for r in records), "stdout": stdout, "stderr": "", "run_dir": run_dir,
            "json": merged}


def publish_record(record: str, name: str) -> None:
    """A run record in CI's artifacts as ``name``.json, written whole and then renamed into place, so a reader
    polling for it never sees half of it: `.ci/run` starts the cluster test from lane 0's record (``e2e-0``) while
    the Hudi lane still runs and leaves a core idle; ``e2e`` is the whole tiny run's, merged from its lanes."""
    ARTIFACTS.mkdir(exist_ok=True)
    partial = ARTIFACTS / f".{name}.json.partial"
    partial.write_text(record)
    partial.replace(ARTIFACTS / f"{name}.json")


class TinyRun:
    """The tiny run's lanes, started in the background as soon as the session knows a selected test reads it.

    The tests that read the run go last (``pytest_collection_modifyitems``), so the ~400 others — mostly Python,
    one core — run while the lanes' JVMs do, instead of before or after them.
    """

    def __init__(self, tmp: Path) -> None:
        self.tmp, self.running, self.cancelled = tmp, [], False
        for number in range(len(TINY_LANES)):  # an earlier test session's lane record is not this run's
            (ARTIFACTS / f"e2e-{number}.json").unlink(missing_ok=True)
        self.pool = concurrent.futures.ThreadPoolExecutor(len(TINY_LANES), thread_name_prefix="tiny-lane")
        self.lanes = [self.pool.submit(self.lane, number) for number in range(len(TINY_LANES))]

    def _run(self, *args: str, run_id: str) -> dict:
        if self.cancelled:
            return {"returncode": -1, "stdout": "cancelled: the test session ended first", "run_dir": None}
        finish = start_scenarios(self.tmp, *args, run_id=run_id)
        self.running.append(finish.proc)
        return finish()

    def lane(self, number: int) -> dict:
        families, writers = TINY_LANES[number]
        # Hudi's process also takes the warm-up (off at tiny): its routes build tables of their own, and the warm-up
        # takes each route's own path (the record index's MERGE wants the keys with their ordering values); once per
        # route, not per configuration (the path is the route's: 134 s of the lane's 965 s for all six)
        warm = ("--param", "warm_up=1", "--param", "warm_up_each_config=0") if "hudi" in families else ()
        # --interleave: a family's hotfix rounds in turn, as the reference runs take them (every check below holds
        # of each configuration's own rounds all the same)
        record = self._run(str(ROOT / "scenarios"), "--scale", "tiny", "--formats", families, "-k",
                           lane_selection(writers), *warm, "--interleave", run_id=f"e2e-{number}")
        if "json" in record:  # CI starts the cluster test from lane 0's record while the other lane still runs
            publish_record(json.dumps(record["json"]), f"e2e-{number}")
        return record

    def result(self) -> dict:
        records = [lane.result() for lane in self.lanes]
        for record in records:
            if only_violations_failed(record):
                continue  # a race that broke an invariant is a recorded finding (tests/test_e2e_writers.py reads it)
            assert record["returncode"] == 0, record["stdout"][-6000:]
        return merge_records(records, self.tmp / "results" / "e2e")

    def cancel(self) -> None:
        """The session ends before the lanes: stop their runs (each saves what it measured on SIGTERM)."""
        self.cancelled = True
        for proc in self.running:
            if proc.poll() is None:
                proc.terminate()
        self.pool.shutdown(wait=True)


_TINY: dict[str, object] = {}


@pytest.hookimpl(trylast=True)  # after -m / -k deselection: start the run only if a selected test reads it
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    readers = [item for item in items if "tiny_run" in getattr(item, "fixturenames", ())]
    if not readers:
        return
    items[:] = [item for item in items if item not in readers] + readers
    if not os.environ.get(REUSE_ENV) and not config.option.collectonly:
        _TINY["run"] = TinyRun(config._tmp_path_factory.mktemp("tiny-run"))  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session) -> None:
    run = _TINY.pop("run", None)
    if isinstance(run, TinyRun) and not all(lane.done() for lane in run.lanes):
        run.cancel()


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One real tiny run of every scenario on every configuration (Delta/Hudi skip where their jars are absent)."""
    reuse = os.environ.get(REUSE_ENV)
    if reuse:  # developing the assertions: read a tiny run recorded earlier instead of making one
        run_dir = Path(reuse)
        return {"returncode": 0, "run_dir": run_dir, "stderr": "", "json": json.loads((run_dir / "benchmark.json").read_text()),
                "stdout": (ARTIFACTS / "e2e.log").read_text() if (ARTIFACTS / "e2e.log").exists() else ""}
    run = _TINY.get("run")
    if not isinstance(run, TinyRun):  # a test reached without collection (never in a normal session)
        run = _TINY["run"] = TinyRun(tmp_path_factory.mktemp("tiny-run"))
    return run.result()
