"""Each commit attempt of a Hudi writer application gets the lock waits its log shows while it ran; a format whose
writers take no lock gets none (never a 0 that was not measured)."""

from __future__ import annotations

from pathlib import Path

from bench.formats import make_adapter
from bench.writers.race import RaceResult, attach_lock_waits
from bench.writers.several import summarize

T0 = 1_764_358_800  # the race's epoch seconds; the times below are seconds after it
LINE = "{ms} 00:00:00.000 INFO BaseZookeeperBasedLockProvider: {what} lock atZkBasePath = /l, lock key = k\n"


def _log(tmp_path: Path, waits: list[tuple[float, float]]) -> Path:
    log = tmp_path / "writer.log"
    log.write_text("".join(LINE.format(ms=int((T0 + t) * 1000), what=what) for asked, held in waits
                           for t, what in ((asked, "ACQUIRING"), (held, "ACQUIRED"))))
    return log


def _records() -> list[dict]:
    failed = {"class": "X", "started_at": T0 + 100.0, "ended_at": T0 + 104.0}
    return [{"writer": 0, "batch": 0, "keys": [1], "attempts": 2, "failures": [failed], "committed": True,
             "attempt_started_at": T0 + 105.0, "ended_at": T0 + 112.0, "seconds": 7.0},
            {"writer": 0, "batch": 1, "keys": [2], "attempts": 1, "failures": [], "committed": True,
             "attempt_started_at": T0 + 113.0, "ended_at": T0 + 115.0, "seconds": 2.0}]


def test_each_attempt_gets_the_waits_for_locks_granted_while_it_ran(tmp_path):
    records = _records()
    log = _log(tmp_path, [(101.0, 101.5), (106.0, 109.0), (110.0, 110.25), (113.5, 113.5)])
    attach_lock_waits(make_adapter("hudi-mor", tmp_path, 1 << 20), records, {0: log})
    assert round(records[0]["failures"][0]["lock_wait_s"], 3) == 0.5
    assert round(records[0]["lock_wait_s"], 3) == 3.25 and records[1]["lock_wait_s"] == 0.0
    summary = summarize(RaceResult(records, [], 15.0, 1.0), 1)
    assert {k: round(v, 3) for k, v in summary["lock_wait_per_commit_s"].items()} == {"commits": 2, "median": 1.625, "max": 3.25}


def test_a_format_without_a_lock_records_no_wait(tmp_path):
    records = _records()
    attach_lock_waits(make_adapter("iceberg-mor", tmp_path, 1 << 20), records,
                      {0: _log(tmp_path, [(106.0, 109.0)])})
    assert "lock_wait_s" not in records[0] and "lock_wait_s" not in records[0]["failures"][0]
    assert summarize(RaceResult(records, [], 15.0, 1.0), 1)["lock_wait_per_commit_s"] is None
