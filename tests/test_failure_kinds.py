"""A failed attempt's kind from what committed while it ran: each rule fails on a planted fault."""

from __future__ import annotations

from bench.core import failures as kinds

FAILED = {"class": "X", "message": "", "started_at": 100.0, "ended_at": 110.0}


def committed(writer: int, began: float, ended: float) -> dict:
    return {"writer": writer, "committed": True, "attempt_started_at": began, "ended_at": ended, "failures": []}


def service(began: float, ended: float, ok: bool = True) -> dict:
    return {"committed": ok, "started_at": began, "ended_at": ended}


def test_another_writer_s_commit_meanwhile_is_a_write_conflict():
    assert kinds.kind(FAILED, None, 0, [committed(1, 95.0, 105.0)], [service(120.0, 130.0)]) == kinds.WRITE_CONFLICT


def test_the_writer_s_own_earlier_commit_is_not_a_conflict():
    assert kinds.kind(FAILED, None, 0, [committed(0, 95.0, 105.0)], []) == kinds.OTHER


def test_only_the_service_meanwhile_is_a_collision_with_the_service():
    assert kinds.kind(FAILED, None, 0, [committed(1, 50.0, 60.0)], [service(108.0, 112.0)]) == kinds.TABLE_SERVICE


def test_a_service_run_that_failed_does_not_count():
    assert kinds.kind(FAILED, None, 0, [], [service(101.0, 109.0, ok=False)]) == kinds.OTHER


def test_both_meanwhile_is_said_to_be_either():
    assert kinds.kind(FAILED, None, 0, [committed(1, 99.0, 101.0)], [service(109.0, 111.0)]) == kinds.WRITER_OR_SERVICE


def test_the_words_decide_before_the_timing_and_a_landed_commit_before_both():
    both = ([committed(1, 99.0, 101.0)], [service(109.0, 111.0)])
    assert kinds.kind(FAILED, kinds.HARNESS_EXPIRY, 0, *both) == kinds.HARNESS_EXPIRY
    assert kinds.kind({**FAILED, "landed": True}, kinds.HARNESS_EXPIRY, 0, *both) == kinds.RAISED_AFTER_COMMIT


def test_an_attempt_without_its_times_is_not_recorded_rather_than_guessed():
    assert kinds.kind({"class": "X"}, None, 0, [committed(1, 0.0, 1e12)], []) == kinds.NOT_RECORDED


def test_kinds_are_counted_most_first():
    batches = [{"failures": [{"kind": kinds.TABLE_SERVICE}, {"kind": kinds.WRITE_CONFLICT}]},
               {"failures": [{"kind": kinds.TABLE_SERVICE}]}, {"failures": []}]
    assert list(kinds.counted(batches).items()) == [(kinds.TABLE_SERVICE, 2), (kinds.WRITE_CONFLICT, 1)]
