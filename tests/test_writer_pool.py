"""Writer applications kept from race to race: the pool grows to a race's writer count, a race with fewer writers
leaves the others idle (and they serve the next race they are in), another family's settings start new ones, a
writer that dies is named, and nothing outlives ``stop`` (a writer that speaks the protocol without Spark)."""

from __future__ import annotations

import json
import os
import sys

import pytest

from bench.writers.race import WriterPool
from tests.conftest import ROOT

FAKE = (sys.executable, "-m", "tests.fake_writer")


def run(pool: WriterPool, conf: dict, batches: list[list[list[int]]], **extra) -> tuple[int, list[dict], list[str]]:
    new = pool.ensure(conf, len(batches))
    jobs = pool.hand_out([{"writer": n, "batches": mine, **extra} for n, mine in enumerate(batches)])
    pool.wait(jobs, "ready")
    pool.go(jobs)
    errors = pool.wait(jobs, "done")
    records = [json.loads(line) for job in jobs if job.out.exists() for line in job.out.read_text().splitlines()]
    return new, records, errors


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def pool(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the fake writer is a module of the tests
    started = WriterPool(tmp_path / "writers", FAKE)
    yield started
    started.stop()


def test_writers_are_kept_grown_and_skipped_between_races(pool):
    new, first, errors = run(pool, {"a": "1"}, [[[1, 2]], [[3]]])
    assert new == 2 and not errors and sorted((r["writer"], r["keys"]) for r in first) == [(0, [1, 2]), (1, [3])]
    pids = {r["writer"]: r["pid"] for r in first}
    new, alone, errors = run(pool, {"a": "1"}, [[[4]]])  # one writer: writer 1 sits this race out
    assert new == 0 and not errors and [(r["writer"], r["pid"]) for r in alone] == [(0, pids[0])]
    new, third, errors = run(pool, {"a": "1"}, [[[5]], [[6]], [[7]]])  # grows by one; writer 1 serves this race
    assert new == 1 and not errors and {r["writer"]: r["pid"] for r in third}.items() >= pids.items()
    assert len({r["pid"] for r in third}) == 3


def test_another_familys_settings_stop_the_old_writers_and_start_new_ones(pool):
    _, before, _ = run(pool, {"family": "iceberg"}, [[[1]], [[2]]])
    new, after, errors = run(pool, {"family": "hudi"}, [[[3]]])
    assert new == 1 and not errors and after[0]["conf"] == {"family": "hudi"}
    assert not any(alive(r["pid"]) for r in before)
    assert (pool.work_dir / "pool-1" / "writer-0" / "writer.log").exists()  # the earlier writers' logs stay


def test_a_writer_that_dies_is_named_and_nothing_outlives_stop(pool):
    pool.ensure({}, 1)
    jobs = pool.hand_out([{"writer": 0, "batches": [], "crash": "before ready"}])
    with pytest.raises(RuntimeError, match="writer 0 exited with 3.*before it was ready"):
        pool.wait(jobs, "ready")
    pool.stop()
    _, _, errors = run(pool, {}, [[[1]], [[2]]], crash="during the race")
    assert len(errors) == 2 and all("exited with 4" in e for e in errors)
    procs = list(pool.procs)
    pool.stop()
    assert pool.procs == [] and all(p.poll() is not None for p in procs)
