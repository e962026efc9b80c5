"""The memory search: the rungs it tries, the answer it gives, and a failure for memory told from any other."""

from __future__ import annotations

import pytest

from bench.measure.needed import ladder, memory_failure, next_rung, verdict


def search(rungs, needs_mb):
    completed: dict[int, bool] = {}
    while (rung := next_rung(rungs, completed)) is not None:
        assert rung not in completed
        completed[rung] = rung >= needs_mb
    return completed


@pytest.mark.parametrize("needs_mb", [100, 512, 700, 1024, 1500, 3000, 8192, 9000])
def test_the_bisection_finds_the_smallest_rung_that_completes_in_few_attempts(needs_mb):
    rungs = ladder(512, 8192)
    completed = search(rungs, needs_mb)
    attempts = [{"driver_memory_mb": m, "completed": ok, "out_of_memory": not ok} for m, ok in completed.items()]
    result = verdict(rungs, attempts)
    expected = min((m for m in rungs if m >= needs_mb), default=None)
    assert result["needed_mb"] == expected
    assert result["more_than_ladder"] == (expected is None)
    assert len(completed) <= 5  # 9 rungs: the top, then at most 4 halvings


def test_the_ladder_always_holds_its_top_and_nothing_outside():
    assert ladder(1024, 1024) == [1024]
    assert ladder(512, 2500) == [512, 768, 1024, 1536, 2048, 2500]


def test_a_failure_for_memory_is_named_with_the_jvms_words_and_another_failure_is_not():
    stderr = "26/11/28 WARN x\nException in thread \"Executor task launch worker\" java.lang.OutOfMemoryError: Java heap space\n"
    assert memory_failure("Py4JError: An error occurred while calling o55.sql", stderr) == "java.lang.OutOfMemoryError: Java heap space"
    assert memory_failure("AnalysisException: table not found", "") is None
