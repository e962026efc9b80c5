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


def _arm(name: str, durations: list[float], log: list[str], clock: list[float], fail_at: int | None = None):
    from bench.measure.rounds import Arm, Rounds

    series = iter(durations)

    def target():
        if fail_at is not None and len(arm.seconds) == fail_at:
            raise RuntimeError(f"{name} broke")
        log.append(name)
        clock[0] += next(series)

    arm = Arm(name, lambda: ((), {}), target, Rounds(), {})
    return arm


def test_configurations_take_their_rounds_in_turn_and_one_that_fails_drops_out_alone():
    """A B C A B C …: every arm's round k before any arm's round k + 1; quiet arms stop at the minimum together, a
    noisy one keeps all of them going (a drift then reaches each); a failing arm keeps its error, the others go on."""
    from bench.measure.rounds import take_turns

    log, clock = [], [0.0]
    quiet = [_arm(n, [10.0] * 9, log, clock) for n in "ab"]
    take_turns(quiet, RoundsPlan(3, 9, 0.05), timer=lambda: clock[0])
    assert log == list("ababab") and [a.seconds for a in quiet] == [[10.0] * 3] * 2
    log.clear()
    noisy = [_arm("a", [10.0] * 9, log, clock), _arm("b", [5.0, 20.0, 5.0, 20.0, 5.0, 20.0, 5.0], log, clock)]
    take_turns(noisy, RoundsPlan(3, 5, 0.05), timer=lambda: clock[0])
    assert log == list("ababababab") and len(noisy[0].seconds) == 5
    log.clear()
    broken = [_arm("a", [10.0] * 9, log, clock), _arm("b", [10.0] * 9, log, clock, fail_at=1), _arm("c", [10.0] * 9, log, clock)]
    take_turns(broken, RoundsPlan(3, 3, 0.05), timer=lambda: clock[0])
    assert log == list("abcacac") and str(broken[1].error) == "b broke" and broken[1].seconds == [10.0]


def test_rounds_taken_in_turn_are_handed_to_each_tests_benchmark_as_its_own():
    from bench.measure.rounds import Arm, Rounds, replay

    class Fixture:
        disabled, _mode = False, None

        def _make_stats(self, iterations):
            self.stats = type("Stats", (), {"data": [], "update": lambda s, d: s.data.append(d)})()
            return self.stats

    arm = Arm("b", lambda: ((), {}), lambda: None, Rounds(), {}, seconds=[4.0, 4.1, 3.9, 4.0, 4.05], partners=["a", "b"])
    fixture = Fixture()
    plan = replay(fixture, arm, RoundsPlan(5, 5, 0.1))
    assert fixture.stats.data == arm.seconds and fixture._mode == "benchmark.pedantic(...)"
    assert plan["interleaved_with"] == ["a", "b"] and plan["rounds"] == 5 and plan["target_met"] is True
