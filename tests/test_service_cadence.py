"""The table service beside several writers runs on its cadence: after every N writer commits, or back to back."""

from __future__ import annotations

import time

from bench.writers.race import Cadence, ServiceLoop


class FakeService:
    """A format whose table service only records when it ran and what it was told to expire."""

    def __init__(self) -> None:
        self.expired: list[float] = []

    def table_service(self, spark, table, expire_before=None) -> str:
        self.expired.append(expire_before)
        return "compaction"


def _race(cadence: Cadence, commits_over_time: list[int], step_s: float = 0.3) -> tuple[ServiceLoop, FakeService]:
    fmt, now = FakeService(), {"commits": 0}
    with ServiceLoop(fmt, None, None, cadence, lambda: now["commits"]) as loop:
        for count in commits_over_time:
            now["commits"] = count
            time.sleep(step_s)
    return loop, fmt


def test_the_service_runs_after_every_n_writer_commits_and_not_before():
    loop, fmt = _race(Cadence(every=2, keep_s=300.0), [0, 1, 2, 3, 4, 5])
    assert [r["service"] for r in loop.runs] == ["compaction", "compaction"]
    assert all(abs(e - (time.time() - 300.0)) < 10 for e in fmt.expired)  # snapshots minutes old, not the race's own


def test_a_run_that_came_due_as_the_last_writer_finished_still_runs():
    loop, _ = _race(Cadence(every=2), [0, 2], step_s=0.0)
    assert len(loop.runs) == 1


def test_back_to_back_runs_repeatedly_and_expires_everything_before_the_race():
    loop, fmt = _race(Cadence(every=0, pause_s=0.05), [0, 0, 0])
    assert len(loop.runs) >= 3 and set(fmt.expired) == {loop.since}


def test_no_service_when_the_race_is_run_without_it():
    fmt = FakeService()
    with ServiceLoop(fmt, None, None, Cadence(every=0), enabled=False) as loop:
        time.sleep(0.2)
    assert loop.runs == [] and fmt.expired == []
