"""How often to compact: the writes per compaction that minimise the cost per write, from a degradation record."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.report.cadence import cadence, costs
from bench.results.contract import Record


def _degradation(reads: list[float], compaction_s: float = 2.0) -> Record:
    series = [{"batch": i, "update_s": 0.5, "read_s": r, "read": {"seconds": [r * 0.99, r, r * 1.01]}}
              for i, r in enumerate(reads[1:], 1)]
    info = {"scenario": "degradation", "operation": "sequence", "config_id": "iceberg-mor", "read_before_s": reads[0],
            "series": series, "recovery": {"compaction_s": compaction_s, "read_after_compaction_s": reads[0]}}
    return Record("test_degradation[iceberg-mor]", "x", {"median": 1.0}, info)


def test_the_cost_per_write_adds_the_reads_between_compactions_and_a_share_of_the_compaction():
    assert costs(0.5, [1.0, 1.5, 2.0], 2.0, 1.0) == [3.5, 2.75, 0.5 + 1.5 + 2.0 / 3]


def test_reads_that_slow_down_with_every_write_ask_for_a_compaction_between():
    found = cadence(_degradation([1.0, 1.5, 2.0, 2.5, 3.0, 3.5]), reads_per_write=1.0)
    assert found is not None and found.best_k == 3 and not found.at_edge
    assert found.share > 0.9 and found.verdict == "compact every 3 writes"


def test_with_almost_no_reads_the_answer_is_the_longest_measured_and_says_it_is_the_edge():
    found = cadence(_degradation([1.0, 1.5, 2.0, 2.5, 3.0, 3.5]), reads_per_write=0.01)
    assert found is not None and found.best_k == 5 and found.at_edge
    assert "only 5 writes were measured" in found.verdict


def test_without_a_compaction_there_is_no_cadence():
    record = _degradation([1.0, 1.5])
    record.info["recovery"] = {"skipped": "copy-on-write"}
    assert cadence(record, 1.0) is None


def _checked(costs_by_k: dict[int, list[float]], recommended: int | None):
    from bench.report.cadence import Checked

    measured = {k: (sorted(c)[len(c) // 2], min(c), max(c)) for k, c in costs_by_k.items()}
    return Checked("iceberg-mor", 1.0, measured, {}, recommended)


def test_the_check_says_the_recommendation_holds_where_its_cadence_measured_cheapest():
    assert _checked({1: [3.0, 3.1], 2: [2.0, 2.1], 3: [2.6, 2.7]}, 2).verdict == \
        "the recommendation holds: every 2 writes measured cheapest"


def test_the_check_says_it_missed_where_another_cadence_measured_cheaper_beyond_its_cycles():
    assert _checked({1: [3.0, 3.1], 2: [2.5, 2.6], 3: [2.0, 2.1]}, 2).verdict == \
        "the recommendation missed: every 3 writes measured cheapest, every 2 writes was recommended"


def test_the_check_is_too_close_to_call_where_the_cycles_overlap():
    verdict = _checked({1: [3.0, 3.1], 2: [2.2, 2.6], 3: [2.0, 2.3]}, 2).verdict
    assert verdict.startswith("too close to call at this scale: every 3 writes measured cheapest")


def test_the_check_reads_its_records_and_prices_the_same_cadences_on_the_degradation_curve():
    from bench.report.cadence import checks
    from bench.results.contract import Run

    def point(k: int, cycle_costs: list[float]) -> dict:
        cycles = [{"cycle": i, "update_s": [0.5] * k, "read_s": [1.0] * k, "reads": [], "compaction_s": 2.0,
                   "cost_per_write_s": c} for i, c in enumerate(cycle_costs, 1)]
        info = {"scenario": "compaction_cadence", "operation": "sequence", "config_id": "iceberg-mor",
                "writes_per_compaction": k, "reads_per_write": 1, "query": "status_totals", "cycles": cycles,
                "read_after_s": 1.0, "cost_per_write_s": sorted(cycle_costs)[len(cycle_costs) // 2]}
        return {"name": f"test_compaction_cadence[every{k}-iceberg-mor]", "stats": {"median": 1.0}, "extra_info": info}

    degradation = _degradation([1.0, 1.5, 2.0, 2.5, 3.0, 3.5])
    data = {"benchmarks": [point(2, [2.7, 2.8]), point(3, [2.7, 2.75]), point(4, [2.9, 3.0]),
                           {"name": degradation.name, "stats": degradation.stats, "extra_info": degradation.info}]}
    found = checks(Run(Path("x/benchmark.json"), data))
    assert len(found) == 1 and found[0].recommended == 3 and found[0].cheapest == 3
    assert found[0].predicted == {k: pytest.approx(v) for k, v in zip((2, 3, 4), costs(0.5, [1.0, 1.5, 2.0, 2.5], 2.0, 1.0)[1:])}
    assert found[0].verdict == ("the recommendation holds: every 3 writes measured cheapest; every 2 writes within its "
                                "cycles' range (too close to call between them)")


def test_writes_that_slow_as_the_logs_grow_are_priced_state_by_state():
    """Each write costs what it cost after as many un-compacted writes: slowing writes favour compacting sooner."""
    assert costs([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], 3.0, 1.0) == [4.0, 3.0, 3.0]
    flat = cadence(_degradation([1.0, 1.1, 1.2, 1.3, 1.4, 1.5]), reads_per_write=1.0)
    record = _degradation([1.0, 1.1, 1.2, 1.3, 1.4, 1.5])
    for i, step in enumerate(record.info["series"]):
        step["update_s"] = 0.5 + i  # each write a second slower than the one before
    slowing = cadence(record, reads_per_write=1.0)
    assert flat is not None and slowing is not None and slowing.best_k < flat.best_k


def test_the_check_says_which_neighbours_it_cannot_tell_from_the_recommendation():
    verdict = _checked({2: [3.0, 3.1], 3: [2.0, 2.2], 4: [2.1, 2.5]}, 3).verdict
    assert verdict == ("the recommendation holds: every 3 writes measured cheapest; every 4 writes within its cycles' range "
                       "(too close to call between them)")
