"""How often to compact: the writes per compaction that minimise the cost per write, from a degradation record."""

from __future__ import annotations

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
