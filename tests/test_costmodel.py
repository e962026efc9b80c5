"""The cost model's arithmetic on inputs whose answers are known by hand."""

from __future__ import annotations

import pytest

from bench.exceptions import BadOption
from bench.report.costmodel import Costs, break_even, cheaper_above, parse_profile, recommend

COW = Costs("cow", write_s=10.0, read_s=1.0)
MOR = Costs("mor", write_s=2.0, read_s=1.5, compaction_s=20.0)


def test_total_cost():
    assert COW.total(reads_per_write=4, writes_per_compaction=10) == 14.0
    assert MOR.total(reads_per_write=4, writes_per_compaction=10) == 2 + 6 + 2


def test_break_even_by_hand():
    # 10 + r = 2 + 1.5 r + 20/10  ->  r = 12
    assert break_even(COW, MOR, 10) == pytest.approx(12.0)
    assert break_even(MOR, COW, 10) == pytest.approx(12.0)
    assert cheaper_above(COW, MOR) == "cow"
    # with compaction after every write: 10 + r = 2 + 1.5 r + 20 -> r = -24: MoR never cheaper
    assert break_even(COW, MOR, 1) is None


def test_equal_read_cost_never_crosses():
    assert break_even(Costs("a", 1, 1), Costs("b", 2, 1), 1) is None


def test_recommendation_switches_at_break_even():
    assert recommend([COW, MOR], parse_profile("few:reads_per_write=11")) [0][0] == "mor"
    assert recommend([COW, MOR], parse_profile("many:reads_per_write=13"))[0][0] == "cow"


def test_profile_parsing():
    p = parse_profile("lake:reads_per_write=250000,writes_per_compaction=200")
    assert (p.name, p.reads_per_write, p.writes_per_compaction) == ("lake", 250000, 200)
    assert parse_profile("reads_per_write=5").name == "custom"
    for bad in ("x:reads=1", "x:reads_per_write=-1", "x:reads_per_write=abc", "x:writes_per_compaction=3"):
        with pytest.raises(BadOption):
            parse_profile(bad)


def test_degradation_rate_by_hand():
    from bench.measure import degradation_rate

    assert degradation_rate([1.0, 1.5, 1.5, 3.0]) == pytest.approx((0.5 + 0.0 + 1.0) / 3)
    assert degradation_rate([2.0]) == 0.0
