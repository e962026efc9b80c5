"""The "Several writers" section and its claims read only what the contract declares, and say what was measured."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from bench.core import failures
from bench.core.uncertainty import describe
from bench.report.sections import writers
from bench.results.contract import SPECS, Record, header, record
from bench.results.schema import WritersBatch, parse


def _race(config_id, control, kind, conflicts, violations, overlap="shared_files", writers_n=2, rates=(0.4, 0.5, 0.6),
          evidence=(), kinds=None):
    """``kinds``: the failures by kind (``bench.core.failures``); default: every failure a write conflict."""
    rates = list(rates)
    check = {"ok": not violations, "evidence": violations, "violations": len(violations)}
    fields = {"writers": writers_n, "overlap": overlap, "kind": kind, "control": control, "coordination": {},
              "per_writer": [], "batches": [], "batches_attempted": 4, "batches_committed": 4 - (conflicts > 2),
              "batches_failed": int(conflicts > 2), "commit_attempts": 4 + conflicts, "conflicts": conflicts,
              "conflict_rate": conflicts / (4 + conflicts), "retries": conflicts,
              "conflict_classes": {"org.x.ValidationException": conflicts} if conflicts else {}, "rows_committed": 16,
              "committed_rows_per_s": 0.5, "race_wall_s": 30.0, "startup_s": 10.0, "services": [],
              "services_committed": 3, "services_failed": 1, "writer_errors": [],
              "invariants": {"engines": {"spark": {"read": "reads", "checks": {"each_acknowledged_batch_once": {
                  **check, "increments_lost_to_the_merge_rule": 0}}}}, "history": {}},
              "violations": violations, "keys_touched": 16, "keys_deleted": 2, "writers_started": writers_n,
              "races": 3, "committed_rows_per_s_by_race": rates, "conflicts_by_race": [conflicts, 0, 0],
              "committed_rows_per_s_uncertainty": describe(rates), "evidence": list(evidence),
              "failure_kinds": {failures.WRITE_CONFLICT: conflicts} if kinds is None and conflicts else (kinds or {})}
    head = header("several_writers", "race", config_id, config_id.split("-")[0], config_id.split("-")[1], "tiny", 42, [])
    return Record("race", "race", {}, record("several_writers", "race", head, fields))


def _run(*races, outcomes=()):
    return SimpleNamespace(records=lambda scenario=None, **_: [r for r in races if r.info["scenario"] == scenario],
                           outcomes=list(outcomes))


def test_every_field_the_section_reads_is_declared():
    assert ("several_writers", "race") in SPECS
    frame = writers.races(_run(_race("iceberg-mor", "default", "processes", 2, [])))
    assert list(frame.configuration) == ["iceberg-mor"] and frame.loc[0, "invariants"] == "hold"


def test_the_table_says_why_attempts_failed_and_where_an_older_run_did_not_record_it():
    race = _race("iceberg-mor", "default", "processes", 3, [])
    older = writers.races(_run(race))
    assert older.loc[0, "why attempts failed"] == "not recorded (an older run)"
    race.info["failure_causes"] = {"another commit added rows its statement matches": 2,
                                   "its starting snapshot was expired before it committed": 1}
    frame = writers.races(_run(race))
    assert frame.loc[0, "why attempts failed"] == ("another commit added rows its statement matches x2; "
                                                   "its starting snapshot was expired before it committed x1")
    assert writers.races(_run(_race("iceberg-mor", "default", "processes", 0, []))).loc[0, "why attempts failed"] == "–"


def test_claims_say_not_measurable_without_races_and_name_lost_updates_when_commits_succeed():
    assert {c["verdict"] for c in writers.claims(_run())} == {"not measurable at this scale"}
    run = _run(_race("hudi-mor", "default", "processes", 1, []), _race("hudi-mor", "nbcc", "processes", 0, ["key 1: lost"]),
               _race("iceberg-mor", "default", "processes", 2, []))
    claims = {c["claim"]: c for c in writers.claims(run)}
    same_file_group = claims[writers.CLAIMS[3]]
    assert same_file_group["verdict"].startswith("not reproduced here under OCC; under NBCC both commit")
    assert "acknowledged updates were lost" in same_file_group["verdict"]
    assert claims[writers.CLAIMS[0]]["verdict"] == "not measurable at this scale"
    assert claims[writers.CLAIMS[2]]["verdict"] == ("holds for Hudi's writers (none failed by its service); but 2 of 8 "
                                                   "of Hudi's own service runs failed beside them")


def test_throughput_per_race_feeds_the_curve_and_the_table_gives_each_points_interval(tmp_path):
    run = _run(_race("iceberg-mor", "default", "processes", 0, [], writers_n=1, rates=(1.0, 1.2, 1.1)),
               _race("iceberg-mor", "default", "processes", 2, [], writers_n=2, rates=(1.5, 1.9, 1.7)))
    curve = writers.per_race(run)
    assert len(curve) == 6 and sorted(curve[curve.writers == 2].rows_per_s) == [1.5, 1.7, 1.9]
    frame = writers.races(run)
    low, high = describe([1.5, 1.9, 1.7])["ci95"]
    # three races make a range, named as one, not a 95% interval
    assert frame.loc[1, "rows/s per race, median (interval)"] == f"1.70 (range {low:.2f}–{high:.2f}, 3 races)"
    assert "throughput against writers" in writers.section(run, tmp_path)
    assert (tmp_path / "charts" / "writers_throughput.png").stat().st_size > 0


def test_claim_one_says_whether_copy_on_write_writers_fight_at_the_most_writers_measured():
    """50 writers are beyond this machine; the claim's mechanism is still measured: the share of commit attempts lost
    to conflicts at the largest writer count, Iceberg copy-on-write against Hudi."""
    fighting = _run(_race("iceberg-cow", "default", "processes", 4, [], writers_n=4),
                    _race("hudi-mor", "nbcc", "processes", 0, [], writers_n=4),
                    _race("iceberg-cow", "default", "processes", 0, [], writers_n=1))
    claim = next(c for c in writers.claims(fighting) if c["claim"] == writers.CLAIMS[0])
    assert claim["verdict"] == ("not measurable at this scale (50+ writers); at 4 writers, on the overlaps both raced, "
                                "iceberg-cow lost 50% of its commit attempts to other writers' commits against hudi-mor "
                                "(nbcc) 0% (shared_files): the mechanism shows here (against hudi-mor (nbcc))")
    assert "iceberg-cow (default, shared_files): write conflicts / commit attempts 0/4 at 1, 4/8 at 4" in claim["measured"]
    calm = _run(_race("iceberg-cow", "default", "processes", 0, [], writers_n=4),
                _race("hudi-mor", "default", "processes", 1, [], writers_n=4))
    claim = next(c for c in writers.claims(calm) if c["claim"] == writers.CLAIMS[0])
    assert claim["verdict"].endswith("the mechanism does not show here (against hudi-mor (default))")


def test_claim_one_compares_on_the_overlaps_both_configurations_raced():
    """Disjoint files lose few attempts: Iceberg copy-on-write's share over shared and disjoint files against Hudi's
    over shared files alone would compare the mixes of overlaps, not the formats."""
    run = _run(_race("iceberg-cow", "default", "processes", 4, [], writers_n=4),
               _race("iceberg-cow", "default", "processes", 0, [], writers_n=4, overlap="disjoint_files"),
               _race("hudi-cow", "default", "processes", 3, [], writers_n=4))
    claim = next(c for c in writers.claims(run) if c["claim"] == writers.CLAIMS[0])
    assert "iceberg-cow lost 50% of its commit attempts to other writers' commits against hudi-cow (default) 43% " \
           "(shared_files)" in claim["verdict"]
    assert claim["verdict"].endswith("the mechanism shows here (against hudi-cow (default))")


def test_claim_one_compares_each_hudi_table_type_apart_and_says_when_no_overlap_was_raced_by_both():
    """Hudi copy-on-write and merge-on-read under OCC rewrite different files: pooled as one "default" the share
    would compare a mix of table types; and a Hudi race on no overlap Iceberg raced gives no comparison, said so."""
    run = _run(_race("iceberg-cow", "default", "processes", 4, [], writers_n=4),
               _race("hudi-cow", "default", "processes", 3, [], writers_n=4),
               _race("hudi-mor", "default", "processes", 0, [], writers_n=4))
    claim = next(c for c in writers.claims(run) if c["claim"] == writers.CLAIMS[0])
    assert "against hudi-cow (default) 43% (shared_files)" in claim["verdict"]
    assert "against hudi-mor (default) 0% (shared_files)" in claim["verdict"]
    assert claim["verdict"].endswith("(against hudi-mor (default))")
    apart = _run(_race("iceberg-cow", "default", "processes", 4, [], writers_n=4),
                 _race("hudi-cow", "default", "processes", 3, [], writers_n=4, overlap="disjoint_files"))
    claim = next(c for c in writers.claims(apart) if c["claim"] == writers.CLAIMS[0])
    assert claim["verdict"].endswith("iceberg-cow (shared_files) and Hudi (disjoint_files) raced no overlap in common: "
                                     "no comparison")


def test_claim_two_names_the_writer_counts_where_nbcc_never_failed_or_retried():
    run = _run(_race("hudi-mor", "nbcc", "processes", 0, [], overlap="same_keys", writers_n=2),
               _race("hudi-mor", "nbcc", "processes", 3, [], overlap="same_keys", writers_n=4))
    claim = next(c for c in writers.claims(run) if c["claim"] == writers.CLAIMS[1])
    assert claim["verdict"] == ("does not hold at 4 writers; without a failure another writer may have caused at 2 writers; "
                                "waiting: not measured")


def test_claim_two_is_decided_on_failures_other_writers_caused_not_the_table_service_s():
    """NBCC writers whose attempts the table service failed did not fail each other: the claim holds between writers,
    and the service's failures are named beside it; one write conflict planted among them turns the verdict."""
    service_only = _race("hudi-mor", "nbcc", "processes", 3, [], overlap="same_keys",
                         kinds={failures.TABLE_SERVICE: 2, failures.HEARTBEAT_EXPIRY: 1})
    claim = next(c for c in writers.claims(_run(service_only)) if c["claim"] == writers.CLAIMS[1])
    assert claim["verdict"] == ("holds between writers: no attempt failed on another writer's commit; waiting: not "
                                "measured")
    assert "0 write conflicts, 0 by another writer or the service, 3 of other kinds" in claim["measured"]
    planted = _race("hudi-mor", "nbcc", "processes", 3, [], overlap="same_keys",
                    kinds={failures.TABLE_SERVICE: 2, failures.WRITE_CONFLICT: 1})
    claim = next(c for c in writers.claims(_run(planted)) if c["claim"] == writers.CLAIMS[1])
    assert claim["verdict"] == "does not hold; waiting: not measured"
    either = _race("hudi-mor", "nbcc", "processes", 1, [], overlap="same_keys", kinds={failures.WRITER_OR_SERVICE: 1})
    assert next(c for c in writers.claims(_run(either)) if c["claim"] == writers.CLAIMS[1])["verdict"].startswith("does not hold")


def test_claim_three_counts_the_service_s_failures_not_the_writers_conflicts():
    """Iceberg writers failing each other is not maintenance fighting writers; an attempt the service failed is."""
    hudi = _race("hudi-mor", "default", "processes", 2, [], kinds={failures.WRITE_CONFLICT: 2})
    writers_only = _race("iceberg-mor", "default", "processes", 2, [], kinds={failures.WRITE_CONFLICT: 2})
    writers_only.info["services_failed"] = 0
    verdict = next(c for c in writers.claims(_run(hudi, writers_only)) if c["claim"] == writers.CLAIMS[2])["verdict"]
    assert verdict == "does not hold"
    fought = _race("iceberg-mor", "default", "processes", 2, [], kinds={failures.TABLE_SERVICE: 2})
    fought.info["services_failed"] = 0
    hudi.info["services_failed"] = 0
    verdict = next(c for c in writers.claims(_run(hudi, fought)) if c["claim"] == writers.CLAIMS[2])["verdict"]
    assert verdict == "holds"
    hudi_fought = _race("hudi-mor", "default", "processes", 1, [], kinds={failures.TABLE_SERVICE: 1})
    verdict = next(c for c in writers.claims(_run(hudi_fought, fought)) if c["claim"] == writers.CLAIMS[2])["verdict"]
    assert verdict == "does not hold"


def test_claim_three_counts_every_lost_service_run_and_names_hudis_own():
    """A service run lost is counted as a number, whatever its size (a string match once saw 1-3 lost runs and not 4),
    and Hudi's own lost runs qualify a verdict that holds for its writers."""
    hudi = _race("hudi-mor", "nbcc", "processes", 0, [])
    many_lost = _race("iceberg-mor", "default", "processes", 2, [], kinds={failures.WRITE_CONFLICT: 2})
    many_lost.info["services_failed"] = 4
    claim = next(c for c in writers.claims(_run(hudi, many_lost)) if c["claim"] == writers.CLAIMS[2])
    assert claim["verdict"] == "holds for Hudi's writers (none failed by its service); but 1 of 4 of Hudi's own service runs failed beside them"
    assert "iceberg: 0 batches failed, 0 attempts failed by the table service, service runs ok / lost 3 / 4" in claim["measured"]
    hudi.info["services_failed"] = 0
    claim = next(c for c in writers.claims(_run(hudi, many_lost)) if c["claim"] == writers.CLAIMS[2])
    assert claim["verdict"] == "holds"


def test_an_older_race_without_kinds_counts_every_failure_as_a_write_conflict_and_says_so():
    older = _race("hudi-mor", "nbcc", "processes", 2, [], overlap="same_keys")
    del older.info["failure_kinds"]
    claim = next(c for c in writers.claims(_run(older)) if c["claim"] == writers.CLAIMS[1])
    assert claim["verdict"].startswith("does not hold")
    assert claim["measured"].endswith("(older races without kinds: every failure counted as a write conflict)")
    assert writers.races(_run(older)).loc[0, "failed attempts by kind"] == "not recorded (an older run)"


def test_each_broken_invariant_is_listed_with_its_evidence(tmp_path):
    lost = "race 1: spark: each_acknowledged_batch_once: key 7: 1 increments, 2 committed batches (w0b0, w1b0); " + "x" * 700
    kept = "results/r/evidence/hudi-mor-default-processes-x1"
    run = _run(_race("hudi-mor", "default", "processes", 1, [lost], evidence=[kept]),
               _race("iceberg-mor", "default", "processes", 2, []))
    broken = writers.violations(run)
    assert list(broken.configuration) == ["hudi-mor"]
    assert broken.loc[0, "evidence"].startswith("race 1: spark: each_acknowledged_batch_once: key 7") and \
        broken.loc[0, "evidence"].endswith("…") and len(broken.loc[0, "evidence"]) == writers.EVIDENCE_CHARS + 1
    html = writers.section(run, tmp_path)
    assert "key 7: 1 increments" in html and f"kept for a post-mortem (history, commit metadata, data and log files): {kept}." in html
    assert writers.violations(_run(_race("iceberg-mor", "default", "processes", 2, []))).empty


def test_the_claims_give_the_failed_attempts_by_cause():
    nbcc = _race("hudi-mor", "nbcc", "processes", 3, [], overlap="same_keys", kinds={failures.TABLE_SERVICE: 3})
    nbcc.info["failure_causes"] = {"another application ran the same clean instant": 3}
    older = _race("hudi-mor", "nbcc", "processes", 2, [], overlap="same_keys", writers_n=4, kinds={failures.OTHER: 2})
    ice = _race("iceberg-mor", "default", "processes", 1, [], kinds={failures.HARNESS_EXPIRY: 1})
    ice.info["failure_causes"] = {"its starting snapshot was expired before it committed": 1}
    found = {c["claim"]: c for c in writers.claims(_run(nbcc, older, ice))}
    assert found[writers.CLAIMS[1]]["measured"].endswith(
        "failed attempts by cause: another application ran the same clean instant x3; 2 without a recorded cause (older "
        "runs); writers clean: –")
    assert "iceberg: 0 batches failed, 0 attempts failed by the table service, service runs ok / lost 3 / 1, failed attempts " \
           "by cause: its starting snapshot was " \
           "expired before it committed x1" in found[writers.CLAIMS[2]]["measured"]


def test_the_table_says_whether_hudis_writers_clean_after_their_commits():
    default, service_only, iceberg = (_race("hudi-mor", "nbcc", "processes", 0, []), _race("hudi-mor", "nbcc", "processes", 0, []),
                                      _race("iceberg-mor", "default", "processes", 0, []))
    default.info["coordination"] = {"settings": [{"scope": "concurrency", "key": "hoodie.clean.automatic", "value": "true"}]}
    service_only.info["coordination"] = {"settings": [{"scope": "concurrency", "key": "hoodie.clean.automatic", "value": "false"}]}
    frame = writers.races(_run(default, service_only, iceberg))
    assert list(frame["writers clean"]) == ["yes", "no (the table service only)", "–"]


def test_the_table_names_each_race_s_set_up_and_an_older_race_s_as_the_stress_it_was():
    realistic, older = _race("hudi-mor", "default", "processes", 0, []), _race("hudi-mor", "default", "processes", 0, [])
    realistic.info["coordination"] = {"setup": {"name": "realistic", "service": True, "service_every_commits": 5}}
    named = _race("iceberg-dv", "default", "processes", 0, [])
    named.info["coordination"] = {"setup": {"name": "realistic", "service": True, "service_every_commits": 5,
                                            "names_partition": True, "retry": "blind"}}
    hudi_heartbeat = _race("hudi-mor", "default", "processes", 0, [])
    hudi_heartbeat.info["coordination"] = {"setup": {"name": "stress", "service": True, "heartbeat_ms": None}}
    frame = writers.races(_run(realistic, older, named, hudi_heartbeat))
    assert list(frame["set-up"]) == [
        "realistic (service every 5 commits)", "stress (recorded before set-ups were named)",
        "realistic (service every 5 commits, the statement names its days, blind retry)",
        "stress (service back to back, Hudi's own heartbeat)"]


def test_claim_two_gives_the_nbcc_commits_lock_waits_where_they_were_measured():
    nbcc = _race("hudi-mor", "nbcc", "processes", 0, [], overlap="same_keys")
    nbcc.info["lock_wait_per_commit_s"] = {"commits": 4, "median": 0.02, "max": 1.5}
    claim = next(c for c in writers.claims(_run(nbcc)) if c["claim"] == writers.CLAIMS[1])
    assert claim["verdict"].endswith("waiting: the commits' median wait for the lock, per grid point, up to 0.02 s "
                                     "(the longest 1.50 s; 4 commits in 1 grid point)")
    more = _race("hudi-mor", "nbcc", "processes", 0, [], overlap="same_keys", writers_n=4)
    more.info["lock_wait_per_commit_s"] = {"commits": 16, "median": 3.0, "max": 9.0}
    claim = next(c for c in writers.claims(_run(nbcc, more)) if c["claim"] == writers.CLAIMS[1])
    # each point's median, never one pooled over points the records do not hold the waits of
    assert claim["verdict"].endswith("up to 3.00 s (the longest 9.00 s; 20 commits in 2 grid points)")
    assert writers.races(_run(nbcc)).loc[0, "lock wait per commit, median / max (s)"] == "0.02 / 1.50"


def test_an_engine_that_could_not_read_a_race_is_named_and_the_claim_says_so():
    race = _race("hudi-mor", "nbcc", "processes", 0, [], overlap="same_keys")
    race.info["invariants"]["engines"]["duckdb"] = {"read": "unsupported: HudiError: no such file group"}
    frame = writers.races(_run(race))
    assert frame.loc[0, "engines checked"] == "spark"
    assert frame.loc[0, "engines that could not read"] == "duckdb (unsupported: HudiError: no such file group)"
    claim = next(c for c in writers.claims(_run(race)) if c["claim"] == writers.CLAIMS[1])
    assert claim["measured"].endswith("(duckdb could not read 1 of these races: their invariants were checked on the "
                                      "other engines only)")


def test_the_findings_chart_draws_committed_and_failed_against_writers_where_more_than_one_count_was_raced(tmp_path):
    from bench.report.findings import _writers

    one = writers.races(_run(_race("iceberg-mor", "default", "processes", 2, [], writers_n=2)))
    assert _writers(one, tmp_path, "x") == ""  # one writer count: no curve to draw
    frame = writers.races(_run(*(_race("iceberg-mor", "default", "processes", n - 1, [], writers_n=n) for n in (1, 2, 4, 8))))
    assert "committed batches and failed attempts against writers" in _writers(frame, tmp_path, "x")
    assert (tmp_path / "charts" / "writers-x.png").stat().st_size > 0


def test_the_grid_figure_gives_one_row_per_point_with_its_failures_by_kind_and_the_claims_their_verdicts():
    from bench.report import figures

    run = _run(_race("iceberg-mor", "default", "processes", 0, [], writers_n=1),
               _race("iceberg-mor", "default", "processes", 3, ["key 7: 2 increments for 1 batch"], writers_n=2,
                     kinds={failures.WRITE_CONFLICT: 2, failures.TABLE_SERVICE: 1}))
    grid = figures.writers_grid(run)
    assert list(grid["writers"]) == [1, 2] and list(grid["invariants"]) == ["hold", "1 violated"]
    assert grid.loc[1, "failed attempts by kind"] == "write conflict x2; table service x1"
    assert grid.loc[1, "batches committed"] == 3 and grid.loc[1, "of"] == 4
    broken = figures.writers_violations(run)
    assert list(broken.columns) == ["configuration", "control", "set-up", "writers", "overlap", "evidence"]
    assert broken.loc[0, "evidence"] == "key 7: 2 increments for 1 batch" and broken.loc[0, "writers"] == 2
    assert list(figures.writers_violations(_run(run.records("several_writers")[0])).invariants) == [
        "every invariant held in every race"]
    claims = figures.writers_claims(run)
    assert list(claims.columns) == ["claim", "verdict", "measured"] and len(claims) == 4
    assert figures.writers_grid(_run()).empty


def test_a_grid_point_whose_test_failed_before_it_recorded_a_race_is_listed_with_its_reason():
    """A point that recorded nothing (here the fresh table could not be dropped) is in the grid as not measured, with
    the error; a point that recorded its races and failed on its invariants is listed once, from its record."""
    from bench.report import figures

    def outcome(name, reason, writers_n):
        return {"nodeid": f"scenarios/test_several_writers.py::{name}", "test": "test_several_writers",
                "config_id": "hudi-cow", "outcome": "failed", "reason": reason,
                "params": {"writers": str(writers_n), "overlap": "same_keys", "kind": "processes", "control": "default",
                           "config_id": "hudi-cow"}}
    run = _run(_race("hudi-cow", "default", "processes", 2, ["key 1: 1 increments, 2 committed batches"],
                     overlap="same_keys", writers_n=2),
               outcomes=[outcome("race", "AssertionError: invariants violated", 2),
                         outcome("test_several_writers[8w-same_keys-processes-default-hudi-cow]",
                                 "OSError: [Errno 39] Directory not empty: '/w/payments_writers_pruned'\nTraceback", 8)])
    grid = figures.writers_grid(run)
    assert list(grid["writers"]) == [2, 8] and list(grid["races"]) == [3, 0]
    assert list(grid["invariants"]) == ["1 violated", "not measured: OSError: [Errno 39] Directory not empty: "
                                                      "'/w/payments_writers_pruned'"]
    assert grid.loc[1, "batches committed"] == "–" and grid.loc[1, "configuration"] == "hudi-cow"


def test_the_controls_figure_sets_a_point_s_set_ups_side_by_side_and_counts_commits_that_changed_no_row():
    from bench.report import figures

    def raced(setup, rows_changed):
        race = _race("hudi-mor", "nbcc", "processes", 0, [], writers_n=2)
        race.info["coordination"] = {"setup": {"name": "realistic", "service": True, "service_every_commits": 5, **setup}}
        race.info["batches"] = [{"committed": True, "commits": [{"rows_changed": n}]} for n in rows_changed]
        return race

    alone = _race("iceberg-dv", "default", "processes", 0, [], writers_n=2)  # one set-up only: not a control
    run = _run(raced({}, [8, 0, 8]), raced({"route": "join"}, [8, 8, 8]), alone)
    controls = figures.writers_controls(run)
    assert list(controls["set-up"]) == ["realistic (service every 5 commits)",
                                        "realistic (service every 5 commits, rows found by a MERGE from a keys view)"]
    assert list(controls["acknowledged, changed no row"]) == ["1", "0"]
    assert list(figures.writers_grid(_run(alone))["configuration"]) == ["iceberg-dv"]
    assert list(figures.writers_controls(_run(alone)).columns) == ["controls"]


def _committed(writer, race, began, completed, groups):
    return parse(WritersBatch, {"writer": writer, "race": race, "committed": True,
                                "commits": [{"began_at": began, "completed_at": completed, "file_groups": groups}]})


def test_file_groups_two_writers_wrote_at_once_are_counted_from_the_commits_write_stats():
    race = _race("hudi-mor", "nbcc", "processes", 0, [], writers_n=2).view(writers.WritersRace)
    at_once = [_committed(0, 1, 10.0, 20.0, ["d=1/a", "d=1/b"]), _committed(1, 1, 15.0, 25.0, ["d=1/a"]),
               _committed(1, 2, 15.0, 25.0, ["d=1/b"]),  # another race: not at once with race 1's
               _committed(0, 1, 30.0, 40.0, ["d=1/b"])]  # the same writer later: not two writers
    assert writers.overlapping_file_groups(dataclasses.replace(race, batches=at_once)) == 1
    one_after_another = [_committed(0, 1, 10.0, 20.0, ["d=1/a"]), _committed(1, 1, 21.0, 25.0, ["d=1/a"])]
    assert writers.overlapping_file_groups(dataclasses.replace(race, batches=one_after_another)) == 0
    not_recorded = parse(WritersBatch, {"committed": True, "commits": [{}]})
    assert writers.overlapping_file_groups(dataclasses.replace(race, batches=[not_recorded])) is None


def test_claim_four_is_not_shown_where_nbcc_writers_never_wrote_one_file_group_at_once():
    nbcc = _race("hudi-mor", "nbcc", "processes", 0, [], writers_n=2)
    nbcc.info["batches"] = [_committed(0, 1, 10.0, 20.0, ["d=1/a"]), _committed(1, 1, 21.0, 25.0, ["d=1/a"])]
    claim = next(c for c in writers.claims(_run(nbcc)) if c["claim"] == writers.CLAIMS[3])
    assert claim["verdict"] == "not shown: no two writers' commits overlapped on one file group"
    assert "NBCC: 0 file groups written by two writers' commits that overlapped in time" in claim["measured"]
    assert "in the 1 of 1 grid points of any set-up that recorded them" in claim["measured"]
    nbcc.info["batches"] = [_committed(0, 1, 10.0, 20.0, ["d=1/a"]), _committed(1, 1, 15.0, 25.0, ["d=1/a"])]
    claim = next(c for c in writers.claims(_run(nbcc)) if c["claim"] == writers.CLAIMS[3])
    assert claim["verdict"] == "holds" and "NBCC: 1 file groups" in claim["measured"]


def test_the_claims_are_decided_without_the_controls_races():
    realistic = _race("iceberg-mor", "default", "processes", 6, [], overlap="disjoint_files", writers_n=8)
    realistic.info["coordination"] = {"setup": {"name": "realistic", "service": True, "service_every_commits": 5}}
    named = _race("iceberg-mor", "default", "processes", 0, [], overlap="disjoint_files", writers_n=8)
    named.info["coordination"] = {"setup": {"name": "realistic", "service": True, "service_every_commits": 5,
                                            "names_partition": True}}
    nbcc = _race("hudi-mor", "nbcc", "processes", 0, ["key 7: 0 increments, 1 committed batches"], writers_n=8)
    joined = _race("hudi-mor", "nbcc", "processes", 0, [], writers_n=8)
    joined.info["coordination"] = {"setup": {"name": "realistic", "service": True, "route": "join"}}
    for x, control in ((realistic, False), (named, True), (nbcc, False), (joined, True)):
        assert writers.is_control(x.view(writers.WritersRace)) is control
    claims = {c["claim"]: c for c in writers.claims(_run(realistic, named, nbcc, joined))}
    assert "invariants broken in 1 of 1 grid points (3 races)" in claims[writers.CLAIMS[3]]["measured"]
    stress_own_heartbeat = _race("hudi-mor", "nbcc", "processes", 0, [])
    stress_own_heartbeat.info["coordination"] = {"setup": {"name": "stress", "service": True, "heartbeat_ms": None}}
    assert writers.is_control(stress_own_heartbeat.view(writers.WritersRace))
