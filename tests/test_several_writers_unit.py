"""The several-writers scenario's pure parts: who writes which keys, and the invariants judged after a race."""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from bench.formats.base import HistoryEntry
from bench.measure import invariants
from bench.workload.contention import DISJOINT_FILES, SAME_KEYS, SHARED_FILES, plan
from bench.workload.datagen import FIRST_DAY
from bench.workload.scales import get_scale
from bench.writers.several import named_days

FILES = [[day * 1000 + f * 100 + k for k in range(40)] for day in range(4) for f in range(2)]  # 4 days x 2 files


def _files_of(keys):
    return {k // 100 for k in keys}


def test_disjoint_files_never_share_a_file_and_shared_files_never_share_a_key():
    disjoint = plan(FILES, 2, 2, 3, 4, 2, DISJOINT_FILES)
    files = [set().union(*(_files_of(b) for b in w)) for w in disjoint.batches]
    assert files[0] and files[1] and not files[0] & files[1]
    shared = plan(FILES, 2, 2, 3, 4, 2, SHARED_FILES)
    keys = [set().union(*map(set, w)) for w in shared.batches]
    assert not keys[0] & keys[1]
    assert [_files_of(b) for b in shared.batches[0]] == [_files_of(b) for b in shared.batches[1]]
    same = plan(FILES, 2, 2, 3, 4, 2, SAME_KEYS)
    assert same.batches[0] == same.batches[1]


@pytest.mark.parametrize("overlap", [DISJOINT_FILES, SHARED_FILES, SAME_KEYS])
def test_each_batch_knows_the_days_its_keys_sit_in(overlap):
    c = plan(FILES, 2, 2, 3, 4, 2, overlap)
    assert c.days == [[sorted({k // 1000 for k in batch}) for batch in writer] for writer in c.batches]
    if overlap == DISJOINT_FILES:  # day d is writer d mod 2's
        assert all(d % 2 == w for w, writer in enumerate(c.days) for days in writer for d in days)
    named = named_days(c)
    assert named[0][0][0] == (FIRST_DAY + dt.timedelta(days=c.days[0][0][0])).isoformat()


@pytest.mark.parametrize("overlap", [DISJOINT_FILES, SHARED_FILES, SAME_KEYS])
def test_deleted_keys_are_never_updated_and_sit_in_shared_files(overlap):
    c = plan(FILES, 2, 2, 3, 4, 2, overlap)
    assert c.deleted and not set(c.deleted) & set(c.touched)
    assert _files_of(c.deleted) <= _files_of(c.batches[0][0])


def test_plan_refuses_files_too_small_for_the_keys_asked():
    with pytest.raises(ValueError, match="too small"):
        plan(FILES, 2, 8, 10, 4, 2, SHARED_FILES)


def _batch(tag, keys, committed, start, end):
    return {"tag": tag, "keys": keys, "committed": committed, "attempt_started_at": start, "ended_at": end,
            "failures": [] if committed else [{"class": "X"}]}


BASE = {1: (Decimal("10.00"), None), 2: (Decimal("20.00"), None), 3: (Decimal("30.00"), None)}


def test_a_clean_serializable_race_passes_every_check():
    batches = [_batch("w0b0", [1, 2], True, 0, 1), _batch("w1b0", [2], True, 2, 3), _batch("w1b1", [3], False, 4, 5)]
    final = {1: (Decimal("11.00"), "w0b0"), 2: (Decimal("22.00"), "w1b0"), 3: (Decimal("30.00"), None)}
    checks = invariants.check_rows(BASE, final, batches, set())
    assert invariants.violations(checks) == []


def test_a_lost_update_a_failed_batch_visible_and_a_resurrected_key_are_each_caught_with_evidence():
    batches = [_batch("w0b0", [1, 2], True, 0, 1), _batch("w1b0", [2], True, 2, 3), _batch("w1b1", [3], False, 4, 5)]
    final = {1: (Decimal("11.00"), "w0b0"), 2: (Decimal("21.00"), "w0b0"), 3: (Decimal("31.00"), "w1b1"),
             9: (Decimal("1.00"), None)}
    checks = invariants.check_rows(BASE, final, batches, {9})
    assert not checks["each_acknowledged_batch_once"]["ok"]
    assert any("key 2: 1 increments, 2 committed" in e for e in checks["each_acknowledged_batch_once"]["evidence"])
    assert any("key 3" in e and "failed" in e for e in checks["last_writer_wins"]["evidence"])
    assert any("key 2" in e and "not the last" in e for e in checks["last_writer_wins"]["evidence"])
    assert checks["no_deleted_key"]["evidence"] == ["deleted key 9 is back"]


def test_event_time_merging_counts_lost_increments_instead_of_failing():
    batches = [_batch("w0b0", [1], True, 0, 2), _batch("w1b0", [1], True, 1, 3)]  # overlapping in time
    final = {1: (Decimal("11.00"), "w1b0"), 2: BASE[2], 3: BASE[3]}
    serializable = invariants.check_rows(BASE, final, batches, set())
    assert not serializable["each_acknowledged_batch_once"]["ok"]
    merged = invariants.check_rows(BASE, final, batches, set(), invariants.EVENT_TIME)
    assert invariants.violations(merged) == []
    assert merged["each_acknowledged_batch_once"]["increments_lost_to_the_merge_rule"] == 1


def test_counts_and_history_catch_duplicates_gaps_orphans_and_missing_commits():
    counts = invariants.check_counts(10, 9, 10)
    assert not counts["no_duplicate_key"]["ok"] and counts["row_count"]["ok"]
    history = [HistoryEntry("1", None, "append", True), HistoryEntry("2", "1", "overwrite", True),
               HistoryEntry("4", "3", "overwrite", True), HistoryEntry("5", None, "deltacommit", True, "INFLIGHT")]
    checks = invariants.check_history(history, {"1"}, 3)
    assert checks["history_without_gaps"]["evidence"] == ["commit 4 follows 3, which the history lacks",
                                                          "deltacommit 5 left INFLIGHT"]
    assert not checks["commits_match_acknowledged"]["ok"]
    assert invariants.check_history(history[:2], {"1"}, 1)["commits_match_acknowledged"]["ok"]


def test_history_after_the_service_expired_the_snapshots_from_before_the_race():
    """Iceberg's service expires the table as it was made: the race's commits are counted by id, not by position,
    and the oldest remaining snapshot's expired parent is not a gap; a gap inside the race still is."""
    before = {"1", "2"}  # made, then the pre-race delete
    history = [HistoryEntry("3", "2", "overwrite", True), HistoryEntry("4", "3", "replace", False),
               HistoryEntry("5", "4", "overwrite", True)]
    checks = invariants.check_history(history, before, 2)
    assert checks["history_without_gaps"]["ok"] and checks["commits_match_acknowledged"]["ok"]
    assert not invariants.check_history(history, before, 3)["commits_match_acknowledged"]["ok"]
    gap = invariants.check_history([history[0], HistoryEntry("5", "4", "overwrite", True)], before, 2)
    assert gap["history_without_gaps"]["evidence"] == ["commit 5 follows 4, which the history lacks"]


def test_a_writer_application_is_told_the_tables_bucket_count(tmp_path):
    """Found by the invariants: writer applications built Hudi's NBCC adapter with Hudi's default 4 buckets on a table
    of 3 per day; their sessions pruned file groups by hash % 4 and each first UPDATE silently changed fewer rows."""
    from bench.formats import make_adapter
    from bench.formats.base import PRUNED, Coordinator, TableRef
    from bench.writers.race import writer_spec
    from bench.writers.writer_process import writer_adapter

    fmt = make_adapter("hudi-mor", tmp_path, 1 << 20, PRUNED)
    fmt.shape_like(3)
    coordinator = Coordinator(None, ("127.0.0.1", 2181))
    fmt.several_writers(coordinator, "nbcc")
    run_settings = {s.key: s.value for s in fmt.table_settings()}
    table = TableRef("payments", str(tmp_path / "payments"), key="txn_id", partition_by="settled_date",
                     ordering="created_at")
    rebuilt, _ = writer_adapter({**writer_spec(fmt, coordinator, table), "control": "nbcc"})
    writer_settings = {s.key: s.value for s in rebuilt.table_settings()}  # what its session sets before each write
    assert rebuilt.buckets == fmt.buckets == 3
    assert writer_settings["hoodie.bucket.index.num.buckets"] == run_settings["hoodie.bucket.index.num.buckets"] == "3"


@pytest.mark.parametrize("inline_clean", [False, True])
def test_hudi_writers_leave_the_clean_to_the_table_service_unless_told(tmp_path, inline_clean):
    """Writers' concurrent lazy cleans raced to roll back the same failed instant, and the loser's statement failed
    after its own commit (HUDI-8143 advises one table service): by default only the service cleans. The writer
    application's session must get the same value before each write, where the table's write settings are set again."""
    from bench.formats import make_adapter
    from bench.formats.base import DEFAULT_CONTROL, PRUNED, Coordinator, TableRef
    from bench.writers.race import writer_spec
    from bench.writers.writer_process import writer_adapter

    single = make_adapter("hudi-mor", tmp_path, 1 << 20, PRUNED)
    assert {s.key: s.value for s in single.table_settings()}["hoodie.clean.automatic"] == "true"  # one writer: Hudi's default
    fmt = make_adapter("hudi-mor", tmp_path, 1 << 20, PRUNED)
    coordinator = Coordinator(None, ("127.0.0.1", 2181))
    raced = {s.key: s.value for s in fmt.several_writers(coordinator, DEFAULT_CONTROL, inline_clean)}
    table = TableRef("payments", str(tmp_path / "payments"), key="txn_id", partition_by="settled_date", ordering="created_at")
    rebuilt, settings = writer_adapter(writer_spec(fmt, coordinator, table))
    expected = "true" if inline_clean else "false"
    assert raced["hoodie.clean.automatic"] == {s.key: s.value for s in settings}["hoodie.clean.automatic"] == expected
    assert {s.key: s.value for s in rebuilt.table_settings()}["hoodie.clean.automatic"] == expected


def _labelled(label, began, completed):
    return HistoryEntry(label, None, "deltacommit", True, label=label, began_at=began, completed_at=completed)


def test_labelled_commits_name_the_read_that_predates_its_transaction():
    """The later batch's statement began before the earlier commit completed, its transaction after: a lost update
    the timeline explains (a conflict check that starts at the transaction cannot see the earlier commit)."""
    batches = [{**_batch("w0b0", [2], True, 100.0, 111.6), "started_at": 100.0, "attempts": 1},
               {**_batch("w1b0", [2], True, 100.0, 154.2), "started_at": 100.0, "attempts": 1}]
    history = [HistoryEntry("0", None, "commit", True), _labelled("w0b0#1", 103.0, 111.5),
               _labelled("w1b0#1", 120.0, 154.0)]
    assert invariants.attach_commits(batches, history)
    final = {1: BASE[1], 2: (Decimal("21.00"), "w1b0"), 3: BASE[3]}
    evidence = invariants.check_rows(BASE, final, batches, set())["each_acknowledged_batch_once"]["evidence"]
    assert evidence == ["key 2: 1 increments, 2 committed batches (w0b0, w1b0); w0b0's increment: w1b0's statement "
                        "began at 0.0 s, before "
                        "w0b0 committed (11.5 s), but its transaction began at 20.0 s, after that commit"]
    assert invariants.check_labelled_commits(batches)["each_commit_acknowledged_once"]["ok"]


def _key_2_evidence(batches, commits, amount):
    """The once-check's evidence for key 2 after ``batches`` made the labelled ``commits``, the row at ``amount``."""
    invariants.attach_commits(batches, [_labelled(label, began, done) for label, began, done in commits])
    final = {1: BASE[1], 2: (Decimal(amount), "w1b0"), 3: BASE[3]}
    return invariants.check_rows(BASE, final, batches, set())["each_acknowledged_batch_once"]["evidence"][0]


def test_overlapping_transactions_that_both_commit_are_named_as_such():
    batches = [{**_batch("w0b0", [2], True, 100.0, 112.0), "attempts": 1},
               {**_batch("w1b0", [2], True, 101.0, 113.0), "attempts": 1}]
    evidence = _key_2_evidence(batches, [("w0b0#1", 102.0, 111.0), ("w1b0#1", 104.0, 112.5)], "21.00")
    assert evidence.endswith("w0b0 (2.0 s to 11.0 s) and w1b0 (4.0 s to 12.5 s) overlapped and both committed")


def test_a_statement_that_began_after_the_other_commit_and_still_missed_it_read_a_stale_table():
    batches = [{**_batch("w0b0", [2], True, 100.0, 111.0), "attempts": 1},
               {**_batch("w1b0", [2], True, 112.0, 130.0), "attempts": 2}]
    evidence = _key_2_evidence(batches, [("w0b0#1", 102.0, 111.0), ("w1b0#2", 115.0, 129.0)], "21.00")
    assert evidence.endswith("; w0b0's increment: w1b0's statement (attempt 2) began at 12.0 s, after w0b0 committed (11.0 s): it read the "
                             "table as it was before that commit")


def test_each_lost_increment_is_named_by_one_pair_and_what_no_pair_explains_is_only_counted():
    """Four writers, two increments lost: one pair in OCC's window accounts for one, nothing for the other; the
    sequential pairs that lost nothing are not printed as stale reads (the old explainer named every one of them)."""
    batches = [{**_batch(f"w{i}b0", [2], True, 100.0 + 20 * i, 111.0 + 20 * i), "attempts": 1} for i in range(3)]
    batches.append({**_batch("w3b0", [2], True, 135.0, 190.0), "attempts": 1})
    commits = [(f"w{i}b0#1", 102.0 + 20 * i, 110.0 + 20 * i) for i in range(3)] + [("w3b0#1", 160.0, 189.0)]
    invariants.attach_commits(batches, [_labelled(label, began, done) for label, began, done in commits])
    final = {1: BASE[1], 2: (BASE[2][0] + 2, "w3b0"), 3: BASE[3]}
    evidence = invariants.check_rows(BASE, final, batches, set())["each_acknowledged_batch_once"]["evidence"][0]
    assert evidence == ("key 2: 2 increments, 4 committed batches (w0b0, w1b0, w2b0, w3b0); w2b0's increment: w3b0's "
                        "statement began at 35.0 s, before w2b0 committed (50.0 s), but its transaction began at 60.0 s, "
                        "after that commit; 1 increment lost that no overlap of two statements and no empty commit "
                        "accounts for")


def test_a_key_with_commits_the_writers_were_not_told_of_gets_no_timing_story():
    batches = [{**_batch("w0b0", [2], True, 100.0, 111.0), "attempts": 1},
               {**_batch("w1b0", [2], False, 112.0, 130.0), "attempts": 3}]
    evidence = _key_2_evidence(batches, [("w0b0#1", 102.0, 111.0), ("w1b0#1", 115.0, 129.0)], "22.00")
    assert evidence == ("key 2: 2 increments, 1 committed batches (w0b0); commits of w1b0 beyond what the writers were "
                        "told (see each_commit_acknowledged_once): the count cannot tell a lost update from one applied twice")


def test_a_batch_that_committed_twice_or_failed_yet_landed_is_caught():
    retried = {**_batch("w0b0", [1], True, 0, 1), "attempts": 2, "failures": [{"class": "X", "root_cause": "FileAlreadyExists"}]}
    failed = {**_batch("w1b0", [2], False, 0, 1), "attempts": 3}
    once = {**_batch("w1b1", [3], True, 0, 1), "attempts": 1}
    history = [_labelled("w0b0#1", 0, 1), _labelled("w0b0#2", 1, 2), _labelled("w1b0#3", 0, 1), _labelled("w1b1#1", 0, 1)]
    assert invariants.attach_commits([retried, failed, once], history)
    check = invariants.check_labelled_commits([retried, failed, once])["each_commit_acknowledged_once"]
    assert check["evidence"] == ["w0b0: acknowledged, 2 commits in the history (w0b0#1, w0b0#2)",
                                 "w1b0: told it failed, yet committed (w1b0#3)"]
    landed = {**retried, "commits": [{"label": "w0b0#1"}]}
    assert invariants.check_labelled_commits([landed])["each_commit_acknowledged_once"]["evidence"] == [
        "w0b0: attempt 1 failed (FileAlreadyExists) yet its commit landed"]
    assert not invariants.attach_commits([once], [HistoryEntry("1", None, "append", True)])


def test_a_table_that_broke_an_invariant_is_kept_in_the_run_folder(tmp_path, monkeypatch):
    """Before the next race makes the table afresh, a violating race's table is copied whole into the run's folder
    (its history and the log files a post-mortem reads); a table above the cap leaves only its file list."""
    import json
    from types import SimpleNamespace

    from bench.writers import several

    table = tmp_path / "warehouse" / "payments_writers_pruned"
    (table / ".hoodie" / "timeline").mkdir(parents=True)
    (table / ".hoodie" / "timeline" / "20261126_1.deltacommit").write_text("{}")
    (table / "settled_date=2026-01-01").mkdir()
    (table / "settled_date=2026-01-01" / ".f1_20261126_1.log.1_0-1-1").write_bytes(b"x" * 10)
    lab = SimpleNamespace(session=SimpleNamespace(run_dir=tmp_path / "run"))
    shared = several.SeveralWriters(lab, SimpleNamespace(config_id="hudi-mor"), "processes", "default", None, [])
    kept = Path(shared.keep_evidence(SimpleNamespace(location=str(table))))
    assert kept.parent == tmp_path / "run" / "evidence" and kept.name.startswith("hudi-mor-default-processes-")
    assert (kept / "table" / "settled_date=2026-01-01" / ".f1_20261126_1.log.1_0-1-1").read_bytes() == b"x" * 10
    assert json.loads((kept / "files.json").read_text())[".hoodie/timeline/20261126_1.deltacommit"] == 2
    monkeypatch.setattr(several, "EVIDENCE_MAX_BYTES", 5)
    listed_only = Path(shared.keep_evidence(SimpleNamespace(location=str(table))))
    assert listed_only != kept and (listed_only / "files.json").exists() and not (listed_only / "table").exists()


def test_an_acknowledged_commit_that_wrote_no_file_is_named():
    """Seen at `small` (Hudi OCC, 2 writers, shared files): a batch's UPDATE ran while a compaction of its file groups
    was in flight, found none of its rows and committed an empty deltacommit, which the writer was told succeeded."""
    batches = [{**_batch("w1b2", [2, 3], True, 100.0, 110.0), "started_at": 100.0, "attempts": 1}]
    history = [HistoryEntry("0", None, "commit", True),
               HistoryEntry("20261127054502210", None, "deltacommit", True, label="w1b2#1", began_at=104.2,
                            completed_at=105.6, files_written=0)]
    invariants.attach_commits(batches, history)
    evidence = invariants.check_rows(BASE, dict(BASE), batches, set())["each_acknowledged_batch_once"]["evidence"]
    assert evidence == [f"key {k}: 0 increments, 1 committed batches (w1b2); w1b2's commit 20261127054502210 wrote no "
                        "file: its statement found none of its 2 rows" for k in (2, 3)]
    history[1] = dataclasses.replace(history[1], files_written=2)  # a commit that wrote its files: no such line
    invariants.attach_commits(batches, history)
    assert "wrote no file" not in invariants.check_rows(BASE, dict(BASE), batches, set())["each_acknowledged_batch_once"]["evidence"][0]


def test_each_failed_attempt_is_counted_by_the_cause_its_format_words(monkeypatch):
    """The race's failures get their cause from the adapter; the record counts them, most first, beside the classes
    (Iceberg's IllegalArgumentException is the table service's expiry, not another writer)."""
    from types import SimpleNamespace

    from bench.formats import make_adapter
    from bench.writers import several
    from bench.writers.race import RaceResult

    expired = {"class": "IllegalArgumentException", "root_cause": None, "message": "Snapshot 1 is not an ancestor of 2"}
    conflict = {"class": "org.apache.iceberg.exceptions.ValidationException", "root_cause": None,
                "message": "Found conflicting files that can contain records matching ref(name=\"txn_id\") in (1)"}
    # writer 0's two failures ran while writer 1's commit landed: write conflicts by their timing
    conflict.update(started_at=100.0, ended_at=103.0)
    batches = [{"writer": 0, "keys": [1], "attempts": 3, "committed": True, "seconds": 1.0, "failures": [dict(conflict), dict(conflict)]},
               {"writer": 1, "keys": [2], "attempts": 2, "committed": True, "seconds": 1.0, "failures": [dict(expired)],
                "attempt_started_at": 101.0, "ended_at": 102.0}]
    monkeypatch.setattr(several, "race", lambda *a, **k: RaceResult(batches, [], 10.0, 1.0))
    lab = SimpleNamespace(spark=None, session=SimpleNamespace(writer_pool=None, scale=get_scale("tiny")))
    shared = several.SeveralWriters(lab, make_adapter("iceberg-mor", Path("/w"), 1 << 27), "processes", "default", None, [])
    said: list[str] = []
    result = shared.race(None, SimpleNamespace(batches=[]), said.append)
    assert said == ["iceberg-mor: 2 of 2 batches committed in 10 s, failed attempts: another commit added rows its "
                    "statement matches x2; its starting snapshot was expired before it committed x1 (by kind: write conflict x2; "
                    "the race's own snapshot expiry x1)"]
    summary = several.summarize(result, 2)
    assert summary["failure_causes"] == {"another commit added rows its statement matches": 2,
                                         "its starting snapshot was expired before it committed": 1}
    assert summary["failure_kinds"] == {"write conflict": 2, "the race's own snapshot expiry": 1}
    assert summary["conflicts"] == 3 and summary["conflict_classes"]["IllegalArgumentException"] == 1


def test_a_commit_that_reports_fewer_rows_than_its_batch_has_keys_is_caught_with_its_instant():
    """A planted partial commit (Hudi's numUpdateWrites 3 for a batch of 4 keys) breaks the check; the same commit
    reporting 4 rows, or a format that reports no row count, passes it."""
    batch = {"tag": "w0b1", "keys": [1, 2, 3, 4], "committed": True, "attempts": 1, "failures": []}
    history = [HistoryEntry("20261128194150998", None, "deltacommit", True, label="w0b1#1", rows_changed=3)]
    invariants.attach_commits([batch], history)
    check = invariants.check_labelled_commits([batch])["each_commit_changed_its_batch"]
    assert check["evidence"] == ["w0b1's commit 20261128194150998 reports 3 rows changed; its batch has 4 keys"]
    for reported in (4, None):
        invariants.attach_commits([batch], [dataclasses.replace(history[0], rows_changed=reported)])
        assert invariants.check_labelled_commits([batch])["each_commit_changed_its_batch"]["ok"]
