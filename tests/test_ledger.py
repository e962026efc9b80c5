"""Where a run's time goes: nested categories never count twice; the rest is 'everything else'."""

from __future__ import annotations

import pytest

from bench.core.ledger import DATA, OPERATIONS, OTHER, PROBES, RACES, READS, RESET, Ledger, describe
from bench.run.plugin import progress_prefix


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_nested_time_is_charged_to_the_inner_category_only():
    clock, cpu = FakeClock(), FakeClock()
    ledger = Ledger(clock, cpu)
    with ledger.spend(OPERATIONS):
        clock.now += 2
        with ledger.spend(READS):
            clock.now += 3
        clock.now += 1
    with ledger.spend(RESET):
        clock.now += 0.5
    clock.now += 1.5  # outside any category
    cpu.now += 12
    b = ledger.breakdown()
    assert b.seconds[OPERATIONS] == 3 and b.seconds[READS] == 3 and b.seconds[RESET] == 0.5
    assert b.seconds[OTHER] == 1.5 and b.wall_s == 8
    assert b.measured_share == 0.75
    assert sum(b.seconds.values()) == pytest.approx(b.wall_s)
    assert b.cpu_s == 12
    assert describe(b).startswith("wall 8s (CPU 12s: 1.5 cores busy), Python peak RSS ")
    assert "measured 75% — measured operations 3s (38%)" in describe(b)


def test_a_charged_function_is_charged_on_every_call_and_still_returns_and_raises():
    clock = FakeClock()
    ledger = Ledger(clock, FakeClock())

    @ledger.charged(PROBES)
    def probe(seconds: float) -> float:
        clock.now += seconds
        if seconds < 0:
            raise ValueError("no")
        return seconds

    with ledger.spend(RACES):  # a probe inside a race: the race is charged only its own time
        clock.now += 1
        assert probe(2) == 2
    with pytest.raises(ValueError):
        probe(-0.5)
    assert probe.__name__ == "probe"
    b = ledger.breakdown()
    assert b.seconds[PROBES] == 1.5 and b.seconds[RACES] == 1 and b.seconds[OTHER] == 0


def test_restart_and_unknown_category():
    clock, cpu = FakeClock(), FakeClock()
    ledger = Ledger(clock, cpu)
    with ledger.spend(DATA):
        clock.now += 4
    cpu.now += 9
    ledger.restart()
    assert ledger.breakdown().seconds[DATA] == 0 and ledger.breakdown().wall_s == 0
    assert ledger.breakdown().cpu_s == 0
    with pytest.raises(ValueError, match="unknown ledger category"):
        with ledger.spend("coffee"):
            pass


def test_progress_prefix_estimates_time_left_once_a_test_finished():
    assert progress_prefix(65, 0, 10) == "[1:05]"
    assert progress_prefix(120, 2, 10) == "[2:00, ~8:00 left]"
    assert progress_prefix(3700, 1, 2) == "[1:01:40, ~1:01:40 left]"
    assert progress_prefix(30, 5, 5) == "[0:30]"
    # a seed run: one test of five finished at 20:11; at 30:40 the second has spent 10:29 of its share
    assert progress_prefix(1840, 1, 5, finished_at=1211) == "[30:40, ~1:10:15 left]"


def test_cpu_counts_this_process_and_the_children_it_reaped():
    import subprocess
    import sys

    from bench.core.ledger import cpu_seconds

    before = cpu_seconds()
    subprocess.run([sys.executable, "-c", "x = 0\nfor i in range(3_000_000): x += i"], check=True)
    assert cpu_seconds() > before  # the child's CPU is the run's once it has been waited for


def test_the_time_left_weighs_a_scenario_s_grid_points_by_its_module_s_weight():
    from types import SimpleNamespace

    from bench.run.plugin import scenario_weight

    module = SimpleNamespace(WEIGHT=lambda params: 1 + 4 ** params["size_step"] / 8)
    big = SimpleNamespace(module=module, callspec=SimpleNamespace(params={"size_step": 4, "config_id": "iceberg-cow"}))
    plain = SimpleNamespace(module=SimpleNamespace(), callspec=SimpleNamespace(params={"config_id": "iceberg-cow"}))
    assert scenario_weight(big) == 33.0
    assert scenario_weight(plain) == 1.0
    # the first step done (weight 1.125 of 1.125 + 33): far more than 1 of 2 tests' time is left
    assert progress_prefix(10, 1.125, 34.125) == "[0:10, ~4:53 left]"


def test_the_cpu_of_a_child_still_running_is_counted():
    """A run's time line is written while its Spark JVM still runs: that JVM's CPU is part of the run's."""
    import subprocess
    import sys

    from bench.core.ledger import live_descendants_cpu

    spin = "import time, sys\nwhile time.process_time() < 0.3: pass\nprint('spun', flush=True)\nsys.stdin.read()"
    child = subprocess.Popen([sys.executable, "-c", spin], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "spun"
        assert live_descendants_cpu() >= 0.29
    finally:
        child.stdin.close()
        child.wait()


def test_the_run_s_cpu_never_shrinks_when_a_descendant_it_counted_vanishes():
    """A descendant's CPU counted while it ran stays the run's after a later reading can no longer see it."""
    readings = iter([0.0, 900.0, 200.0, 950.0])
    ledger = Ledger(clock=lambda: 10.0, cpu=lambda: next(readings))
    assert ledger.breakdown().cpu_s == 900.0
    assert ledger.breakdown().cpu_s == 900.0  # the reading fell to 200: the JVM it counted was killed unreaped
    assert ledger.breakdown().cpu_s == 950.0
