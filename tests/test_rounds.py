"""Adaptive rounds: more rounds until the median is known to the target precision, never past the maximum."""

from __future__ import annotations

from bench.measure.rounds import RoundsPlan, adaptive_pedantic


class ScriptedBenchmark:
    """pytest-benchmark's fixture as far as adaptive_pedantic uses it, timing a scripted series of durations."""

    def __init__(self, durations: list[float]) -> None:
        self.durations, self.now, self.setups = iter(durations), 0.0, 0
        self.stats = type("Meta", (), {})()
        self.stats.stats = type("Stats", (), {"data": [], "update": lambda s, d: s.data.append(d)})()
        self.stats.stats.data = []

    def _timer(self) -> float:
        return self.now

    def target(self) -> None:
        self.now += next(self.durations)

    def setup(self):
        self.setups += 1
        return (), {}

    def pedantic(self, target, setup, rounds, iterations):
        for _ in range(rounds):
            args, kwargs = setup()
            start = self._timer()
            target(*args, **kwargs)
            self.stats.stats.update(self._timer() - start)


def test_quiet_rounds_stop_at_the_minimum():
    bench = ScriptedBenchmark([10.0, 10.1, 9.9, 10.0, 10.0, 10.0])
    plan = adaptive_pedantic(bench, bench.target, bench.setup, RoundsPlan(3, 6, 0.10))
    assert plan["rounds"] == 3 == bench.setups and plan["target_met"] and plan["ci_half_width"] < 0.10


def test_noisy_rounds_continue_until_the_interval_is_tight_or_the_maximum():
    noisy = [7.1, 11.9, 16.8, 10.0, 10.2, 9.9, 10.1, 10.0, 10.05, 9.95]
    bench = ScriptedBenchmark(noisy)
    plan = adaptive_pedantic(bench, bench.target, bench.setup, RoundsPlan(3, 10, 0.10))
    assert 3 < plan["rounds"] <= 10 and plan["target_met"]
    capped = ScriptedBenchmark([1.0, 5.0, 9.0, 1.0, 9.0, 1.0])
    plan = adaptive_pedantic(capped, capped.target, capped.setup, RoundsPlan(3, 5, 0.10))
    assert plan["rounds"] == 5 and not plan["target_met"]  # the maximum wins, and the record says so
