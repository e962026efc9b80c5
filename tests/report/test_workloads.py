"""The choice for a workload: a cycle priced per write along reads per write, and the map's honesty (no JVM)."""

from __future__ import annotations

from bench.report import workloads
from bench.report.workloads import TOO_CLOSE, TOO_FEW, WorkloadSamples, decision_map
from bench.results.contract import Origin

HERE = Origin("run-a", "host-a", "abc")


def _cycle(config_id, write, read, n=8, compaction=0.0, origin=HERE, scenario="dinner_peak"):
    jitter = [1.0, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97, 1.0][:n]
    return WorkloadSamples(scenario, config_id, "pruned", [write * j for j in jitter], [read * j for j in jitter],
                           compaction, 1000, origin)


def test_writes_cheap_wins_few_reads_reads_cheap_wins_many_and_the_crossing_is_too_close():
    cow = _cycle("iceberg-cow", write=10.0, read=1.0)  # writes dear, reads cheap
    mor = _cycle("iceberg-mor", write=2.0, read=1.5, compaction=8.0)  # per write 2 + 1.5 r + 1
    assert cow.per_write(0) == 10.0 and mor.per_write(0) == 3.0 and cow.total_s == sum(cow.writes_s) + sum(cow.reads_s)
    frame = decision_map([cow, mor], ratios=(0.01, 14.0, 10_000.0))  # they cross at r = 14
    assert list(frame.cheapest) == ["iceberg-mor", TOO_CLOSE, "iceberg-cow"]
    assert frame.share.iloc[0] == 1.0 and "iceberg-cow" in workloads.sentence(frame)


def test_cycles_of_other_hosts_are_never_set_against_each_other_and_few_steps_give_no_verdict():
    cow = _cycle("iceberg-cow", write=10.0, read=1.0)
    elsewhere = _cycle("iceberg-mor", write=2.0, read=1.5, origin=Origin("run-b", "host-b", "abc"))
    assert decision_map([cow, elsewhere]).empty  # one configuration per host: nothing to compare
    short = decision_map([_cycle("iceberg-cow", 10.0, 1.0, n=3), _cycle("iceberg-mor", 2.0, 1.5, n=3)], ratios=(0.01,))
    assert list(short.cheapest) == [TOO_FEW] and short.likeliest.iloc[0] == "iceberg-mor"


def test_the_seeds_workloads_are_read_off_the_map_at_their_own_reads_per_write():
    cow = _cycle("iceberg-cow", write=10.0, read=1.0, scenario="monthly_settlements")
    mor = _cycle("iceberg-mor", write=2.0, read=1.5, scenario="monthly_settlements")
    [row] = workloads.at_seed_ratios(decision_map([cow, mor])).to_dict("records")
    assert row["workload"].startswith("monthly settlements") and row["cheapest"] == "iceberg-cow" and row["claim"] == "holds"
    assert float(row["at reads per write"].replace(",", "")) > 1000


def test_each_sweep_point_is_a_strip_of_its_own_ordered_by_the_share_of_files_it_touches():
    """Two shapes of update: on few files copy-on-write's rewrite is cheap, on many it is not; each point is priced
    apart (never pooled with another shape), has no cycle of its own to mark, and draws in order of its share."""
    def point(config_id, write, read, share):
        s = _cycle(config_id, write, read, scenario="update_sweep")
        return WorkloadSamples(s.scenario, s.config_id, s.route, s.writes_s, s.reads_s, 0.0, 1000, HERE,
                               label=f"{share:.1%} of files", cycle=False, order=share)
    points = [point("iceberg-cow", 1.0, 1.0, 0.01), point("iceberg-mor", 2.0, 1.1, 0.01),
              point("iceberg-cow", 30.0, 1.0, 0.9), point("iceberg-mor", 3.0, 1.3, 0.9)]
    frame = decision_map(points, ratios=(0.01,))
    assert list(zip(frame.workload, frame.cheapest)) == [("1.0% of files", "iceberg-cow"), ("90.0% of files", "iceberg-mor")]
    assert frame.measured_reads_per_write.isna().all()
    from bench.report import charts
    assert charts.decision_map(frame, {}, "shape")[:4] == b"\x89PNG"


def test_a_users_table_lands_on_the_sweep_point_nearest_its_share_and_is_starred_on_the_map(tmp_path):
    """A table whose update touches 80% of its files reads the 90% strip, one touching 0.05% the 1% strip with a
    warning (20x off); a route the sweep did not measure says so instead of borrowing another's answer."""
    def point(config_id, write, read, share):
        s = _cycle(config_id, write, read, scenario="update_sweep")
        return WorkloadSamples(s.scenario, s.config_id, s.route, s.writes_s, s.reads_s, 0.0, 1000, HERE,
                               label=f"{share:.1%} of files", cycle=False, order=share)
    frame = decision_map([point("iceberg-cow", 1.0, 1.0, 0.01), point("iceberg-mor", 2.0, 1.1, 0.01),
                          point("iceberg-cow", 30.0, 1.0, 0.9), point("iceberg-mor", 3.0, 1.3, 0.9)], ratios=(0.01, 1.0))
    wide, thin, other = workloads.Placed("wide", 0.02, 0.8, "pruned"), workloads.Placed("thin", 1.0, 0.0005, "pruned"), \
        workloads.Placed("by-index", 1.0, 0.8, "index")
    placed = workloads.place(frame, [wide, thin, other]).set_index("table")
    assert placed.loc["wide", "cheapest"] == "iceberg-mor" and placed.loc["wide", "strip"] == "90.0% of files"
    assert placed.loc["thin", "cheapest"] == "iceberg-cow" and "20x off its share" in placed.loc["thin", "nearest measured point"]
    assert placed.loc["by-index", "cheapest"] == "–" and "no sweep point measured by the index route" in \
        placed.loc["by-index", "nearest measured point"]
    from bench.report import charts
    assert charts.decision_map(frame, {}, "shape", [("90.0% of files", 0.02, "wide")])[:4] == b"\x89PNG"
