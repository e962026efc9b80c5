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
    from bench.measure.rounds import degradation_rate

    assert degradation_rate([1.0, 1.5, 1.5, 3.0]) == pytest.approx((0.5 + 0.0 + 1.0) / 3)
    assert degradation_rate([2.0]) == 0.0


def _samples(config_id, write, read, compaction=()):
    from bench.report.confidence import CostSamples

    return CostSamples(config_id, list(write), {"q": list(read)}, list(compaction))


def test_overlapping_rounds_are_too_close_to_call():
    """Two configurations whose update rounds overlap almost entirely: no honest winner at any ratio."""
    from bench.report.confidence import simulate
    from bench.report.costmodel import Profile

    a = _samples("a", [5.0, 7.1, 11.9, 16.8, 6.0], [1.0, 1.1, 0.9])
    b = _samples("b", [6.0, 8.0, 12.5, 15.0, 7.0], [1.05, 0.95, 1.0])
    verdicts, breaks, _ = simulate({"a": a, "b": b}, [Profile("p", 1, 10, "test")], [("a", "b")], resamples=500)
    assert not verdicts[0].decided and verdicts[0].text().startswith("too close to call at this scale: ")
    assert set(verdicts[0].text().split(": ")[1].split(" or ")) == {"a", "b"}


def test_separated_rounds_name_the_winner_and_bound_the_break_even():
    """cow: W 10 s, R 1 s; mor: W 2 s, R 1.5 s, C 20 s -> break-even at 12 reads per write (see above)."""
    from bench.report.confidence import simulate
    from bench.report.costmodel import Profile

    cow = _samples("cow", [9.9, 10.0, 10.1], [0.99, 1.0, 1.01])
    mor = _samples("mor", [1.98, 2.0, 2.02], [1.49, 1.5, 1.51], [19.8, 20.0, 20.2])
    profiles = [Profile("write-heavy", 1, 10, "t"), Profile("read-heavy", 1000, 10, "t")]
    verdicts, breaks, curves = simulate({"cow": cow, "mor": mor}, profiles, [("cow", "mor")], resamples=500,
                                        ratios=[1.0, 100.0])
    assert [v.text() for v in verdicts] == ["mor", "cow"] and all(v.decided for v in verdicts)
    (pair,) = breaks
    assert pair.point == pytest.approx(12.0) and pair.crossing_share == 1.0
    assert 10.0 < pair.ci95[0] <= 12.0 <= pair.ci95[1] < 14.5
    assert curves["cow"].shape == (500, 2)
    assert pair.interval_text() == f"{pair.ci95[0]:,.1f} – {pair.ci95[1]:,.1f}"


def test_an_interval_of_a_minority_of_crossings_says_so():
    """Medians that never cross: an interval over the 8% of resamples that do is labelled as such, not as the break-even's."""
    from bench.report.confidence import PairBreakEven

    assert PairBreakEven(("a", "b"), None, (0.0, 5.0), 0.08).interval_text() == "(8% of resamples cross, at 0.0 – 5.0)"
    assert PairBreakEven(("a", "b"), None, None, 0.0).interval_text() == "–"


def test_uncertainty_of_a_single_figure():
    from bench.core.uncertainty import describe, half_width

    tight = describe([10.0, 10.1, 9.9, 10.0, 10.05])
    assert tight["median"] == 10.0 and tight["ci95"][0] <= 10.0 <= tight["ci95"][1] and tight["cv"] < 0.01
    assert half_width(tight) < 0.01
    noisy = describe([7.1, 11.9, 16.8])
    assert noisy["cv"] > 0.10 and noisy["ci95"] == [7.1, 16.8]
    one = describe([3.0])  # one round has no spread: no interval, never a zero-width one
    assert one["median"] == 3.0 and one["ci95"] is None and one["n"] == 1 and half_width(one) is None


def test_claims_are_decided_on_intervals():
    """The 10:1 copy-on-write claim: clearly cheaper -> holds; overlapping -> inconclusive, with intervals printed."""
    import pandas as pd

    from bench.report import claims, confidence

    def claim(cow_write, mor_write):
        samples = {"iceberg-cow": _samples("iceberg-cow", cow_write, [1.0, 1.01, 0.99]),
                   "iceberg-mor": _samples("iceberg-mor", mor_write, [1.2, 1.21, 1.19])}
        costs = {c: s.point() for c, s in samples.items()}
        return claims.check(pd.DataFrame(), costs, {}, None, samples)[0]

    clear = claim([1.0, 1.1, 0.9], [8.0, 8.2, 7.9])  # CoW 1 + 10 = 11 s vs MoR 8 + 12 = 20 s
    assert clear.verdict == claims.HOLDS and "[" in clear.measured and "100% of resamples" in clear.measured
    close = claim([5.0, 7.1, 11.9, 16.8], [4.0, 9.0, 13.0, 15.5])  # the rounds overlap: no decision
    assert close.verdict == claims.INCONCLUSIVE
    wrong = claim([30.0, 31.0, 29.0], [2.0, 2.1, 1.9])
    assert wrong.verdict == claims.FAILS
    assert confidence.DECISIVE == 0.9
