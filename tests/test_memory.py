"""Peak memory: the pure summary of Spark's stage peaks and the processes' marks, and the kernel's marks themselves."""

from __future__ import annotations

import os
import sys

import pytest

from bench.core import resident
from bench.measure.memory import OPERATION, PROCESS, largest, summarize

MACHINE = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def test_the_largest_stage_peak_is_the_operations_and_off_heap_execution_counts_as_execution():
    stages = [{"JVMHeapMemory": 300, "OnHeapExecutionMemory": 10, "OffHeapExecutionMemory": 5, "OnHeapStorageMemory": 1},
              {"JVMHeapMemory": 200, "OnHeapExecutionMemory": 40, "OffHeapExecutionMemory": 0, "OnHeapStorageMemory": 7}]
    out = summarize(stages, driver_heap=900, jvm_rss=2000, python_rss=50, python_scope=OPERATION)
    assert out["executor_heap_peak_bytes"] == 300 and out["execution_memory_peak_bytes"] == 40
    assert out["storage_memory_peak_bytes"] == 7 and out["stages"] == 2
    assert (out["driver_heap_peak_bytes"], out["jvm_rss_peak_bytes"], out["python_rss_peak_bytes"]) == (900, 2000, 50)


def test_a_stage_that_ended_before_the_first_poll_counts_as_unsampled_not_as_an_empty_heap():
    stages = [{"JVMHeapMemory": 0, "OnHeapExecutionMemory": 0, "OnHeapStorageMemory": 0},
              {"JVMHeapMemory": 80, "OnHeapExecutionMemory": 0, "OnHeapStorageMemory": 2}]
    out = summarize(stages, driver_heap=1, jvm_rss=1, python_rss=1, python_scope=OPERATION)
    assert out["executor_heap_peak_bytes"] == 80 and out["stages"] == 2 and out["stages_sampled"] == 1
    unsampled = summarize(stages[:1], driver_heap=1, jvm_rss=1, python_rss=1, python_scope=OPERATION)
    assert unsampled["executor_heap_peak_bytes"] is None and unsampled["execution_memory_peak_bytes"] is None


def test_an_operation_without_spark_stages_has_no_executor_figures_rather_than_zero():
    out = summarize([], driver_heap=None, jvm_rss=None, python_rss=50, python_scope=PROCESS)
    assert out["executor_heap_peak_bytes"] is None and out["execution_memory_peak_bytes"] is None
    assert out["python_rss_scope"] == PROCESS


def test_a_sequence_peaks_at_its_largest_operation_and_says_when_a_python_figure_covers_the_process():
    a = summarize([{"JVMHeapMemory": 5, "OnHeapExecutionMemory": 1, "OnHeapStorageMemory": 0}], 10, None, 3, OPERATION)
    b = summarize([], 20, None, 9, PROCESS)
    both = largest([a, None, b])
    assert both["executor_heap_peak_bytes"] == 5 and both["driver_heap_peak_bytes"] == 20
    assert both["python_rss_peak_bytes"] == 9 and both["python_rss_scope"] == PROCESS and both["stages"] == 1
    assert largest([None]) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's resident high-water mark is Linux's")
def test_the_runs_own_peak_survives_every_reset_of_the_mark_and_is_bounded_by_the_machine():
    resident.restart_own_peak()
    block = bytearray(64 << 20)  # touched: resident
    for i in range(0, len(block), 4096):
        block[i] = 1
    held = resident.peak()
    del block
    assert resident.reset_peak()
    after_reset = resident.peak()
    own = resident.own_peak()
    assert held is not None and after_reset is not None
    # the reset lowered the mark, the run's own peak kept it (the kernel batches its page counts: to within 1 MiB)
    assert own >= held - (1 << 20) and held - (32 << 20) > after_reset
    assert 0 < own < MACHINE
