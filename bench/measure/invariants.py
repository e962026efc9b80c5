"""What must hold after several writers raced on one table (the projects' own concurrency tests assert the same).

Each check returns ``{"ok": bool, "evidence": [...]}``: a violation names the key, the batch or the commit, so a
failed check is a finding to read, never a crash and never a retry that hides it. Pure Python: the scenario reads
the rows (on every engine) and the history, this module judges them.

Two merge rules: ``serializable`` (Iceberg, Delta, Hudi OCC: a batch that committed saw every batch committed
before it, so each committed batch's increment is in the row exactly once and the row's tag is a batch that no
other committed batch on that key followed), and ``event_time`` (Hudi NBCC: writers never wait or fail, versions
of a key are merged by the ordering field, so concurrent read-modify-writes keep one of them: the tag must be a
committed batch's, and the increments lost are counted as the rule's cost, not as a violation).
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import Any

from bench.formats.base import HistoryEntry

SERIALIZABLE, EVENT_TIME = "serializable", "event_time"
Row = tuple[Decimal, str | None]  # (amount, notes)
MAX_EVIDENCE = 10


def verdict(evidence: list[str]) -> dict[str, Any]:
    return {"ok": not evidence, "evidence": evidence[:MAX_EVIDENCE], "violations": len(evidence)}


def _by_key(batches: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    touched: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for b in batches:
        for k in b["keys"]:
            touched[int(k)].append(b)
    return touched


def attach_commits(batches: list[dict[str, Any]], history: list[HistoryEntry]) -> bool:
    """Give each batch the labelled commits its attempts made (``commits``: label, began_at, completed_at, what each
    wrote), where the format labels its commits (``TableFormat.label_commits``); False where none is labelled."""
    by_batch: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in history:
        if e.label and e.state == "COMPLETED":
            by_batch[e.label.split("#")[0]].append({"label": e.label, "id": e.id, "began_at": e.began_at,
                                                     "completed_at": e.completed_at, "files_written": e.files_written,
                                                     "rows_changed": e.rows_changed,
                                                     "file_groups": list(e.file_groups) if e.file_groups is not None else None})
    for b in batches:
        b["commits"] = by_batch.get(b["tag"], [])
    return bool(by_batch)


def check_labelled_commits(batches: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each acknowledged batch made exactly one commit, and a batch told it failed made none (a failed attempt whose
    commit landed anyway is applied again by its retry)."""
    evidence = []
    for b in batches:
        made = [c["label"] for c in b.get("commits", [])]
        if b.get("committed") and len(made) != 1:
            evidence.append(f"{b['tag']}: acknowledged, {len(made)} commits in the history ({', '.join(made) or 'none'})")
        elif not b.get("committed") and made:
            evidence.append(f"{b['tag']}: told it failed, yet committed ({', '.join(made)})")
        elif made and int(made[0].split("#")[1]) != b.get("attempts"):  # acknowledged; its one commit an earlier attempt's
            attempt = int(made[0].split("#")[1])
            why = b["failures"][attempt - 1]
            evidence.append(f"{b['tag']}: attempt {attempt} failed ({why.get('root_cause') or why['class']}) yet its commit landed")
    return {"each_commit_acknowledged_once": verdict(evidence), "each_commit_changed_its_batch": verdict(partial_commits(batches))}


def partial_commits(batches: list[dict[str, Any]]) -> list[str]:
    """Acknowledged batches whose commit reports other than one changed row per key (Hudi's ``numUpdateWrites``, Delta's
    ``numUpdatedRows``): an empty or partial commit caught as the commit itself recorded it, with its instant. Silent
    where the format reports no row count."""
    return [f"{b['tag']}'s commit {c['id']} reports {c['rows_changed']} rows changed; its batch has {len(b['keys'])} keys"
            for b in batches if b.get("committed") for c in b.get("commits", [])[-1:]
            if c.get("rows_changed") is not None and c["rows_changed"] != len(b["keys"])]


def _race_start(batches: list[dict[str, Any]]) -> float:
    return min((b.get("started_at") or b.get("attempt_started_at") or 0.0) for b in batches)


def _seconds(at: float | None, zero: float) -> str:
    return "?" if at is None else f"{at - zero:.1f} s"


def lost_update_timing(committed: list[dict[str, Any]], zero: float, lost: int) -> list[str]:
    """Why ``lost`` increments of one key's acknowledged read-modify-writes are missing, one line per increment
    accounted for: a commit that wrote no file lost its own; else an earlier batch's, by the first later commit that
    could not have read it: its statement began before that commit completed while its transaction began after it
    (a conflict check that looks only at commits completed since the transaction began cannot see it), or both
    transactions overlapped and both committed; of two commits alone, the later statement that began after the
    earlier commit read the table from before it. What no pair accounts for is counted, never explained."""
    lines = empty_commits(committed)[:lost]
    timed = sorted(((b, b["commits"][-1]) for b in committed if b.get("commits") and b["commits"][-1]["completed_at"]
                    and b["commits"][-1].get("files_written") != 0), key=lambda p: p[1]["completed_at"])
    for a, ca in timed:
        if len(lines) >= lost:
            break
        for b, cb in timed:
            if a is b or cb["began_at"] is None or cb["completed_at"] < ca["completed_at"]:
                continue
            if b["attempt_started_at"] < ca["completed_at"] <= cb["began_at"]:
                lines.append(f"{a['tag']}'s increment: {b['tag']}'s statement began at "
                             f"{_seconds(b['attempt_started_at'], zero)}, before {a['tag']} committed "
                             f"({_seconds(ca['completed_at'], zero)}), but its transaction began at "
                             f"{_seconds(cb['began_at'], zero)}, after that commit")
                break
            if ca["began_at"] is not None and cb["began_at"] < ca["completed_at"]:
                lines.append(f"{a['tag']}'s increment: {a['tag']} ({_seconds(ca['began_at'], zero)} to "
                             f"{_seconds(ca['completed_at'], zero)}) and {b['tag']} ({_seconds(cb['began_at'], zero)} "
                             f"to {_seconds(cb['completed_at'], zero)}) overlapped and both committed")
                break
    if len(lines) < lost and len(timed) == 2 and timed[1][0]["attempt_started_at"] >= timed[0][1]["completed_at"]:
        (a, ca), (b, _) = timed  # the one pair that can account for it: the later statement missed the earlier commit
        lines.append(f"{a['tag']}'s increment: {b['tag']}'s statement (attempt {b.get('attempts', '?')}) began at "
                     f"{_seconds(b['attempt_started_at'], zero)}, after {a['tag']} committed "
                     f"({_seconds(ca['completed_at'], zero)}): it read the table as it was before that commit")
    if len(lines) < lost:
        lines.append(f"{lost - len(lines)} increment{'s' if lost - len(lines) != 1 else ''} lost that no overlap of "
                     "two statements and no empty commit accounts for")
    return lines


def empty_commits(committed: list[dict[str, Any]]) -> list[str]:
    """Acknowledged batches whose one commit wrote no file: the statement found none of its rows (Hudi's SQL UPDATE
    reports no row count, so the writer cannot tell), and with no file group written no conflict check can see it."""
    return [f"{b['tag']}'s commit {c['id']} wrote no file: its statement found none of its {len(b['keys'])} rows"
            for b in committed for c in b.get("commits", [])[-1:] if c.get("files_written") == 0]


def check_rows(base: dict[int, Row], final: dict[int, Row], batches: list[dict[str, Any]], deleted: set[int],
               rule: str = SERIALIZABLE) -> dict[str, dict[str, Any]]:
    """Every key the race touched, against the acknowledged batches: each one's increment counted exactly once, the
    row's tag a batch that committed (and, serializable, one no other committed batch on the key followed)."""
    touched = _by_key(batches)
    once, last, lost = [], [], 0
    for key, on_key in sorted(touched.items()):
        if key not in final:
            once.append(f"key {key}: missing after the race (batches {', '.join(b['tag'] for b in on_key)})")
            continue
        committed = [b for b in on_key if b.get("committed")]
        change = final[key][0] - base[key][0]
        applied = int(change) if change == int(change) else change  # whole increments print as "2", not "2.00"
        tags = {b["tag"] for b in committed}
        if rule == SERIALIZABLE and applied != len(committed):
            phantom = sorted(b["tag"] for b in on_key if len(b.get("commits", [])) > (1 if b.get("committed") else 0))
            timing = ([f"commits of {', '.join(phantom)} beyond what the writers were told (see each_commit_acknowledged_once): "
                       "the count cannot tell a lost update from one applied twice"] if phantom else
                      lost_update_timing(committed, _race_start(batches), len(committed) - int(applied))
                      if applied < len(committed) else [])
            once.append(f"key {key}: {applied} increments, {len(committed)} committed batches ({', '.join(sorted(tags)) or 'none'})"
                        + "".join(f"; {line}" for line in timing))
        elif rule == EVENT_TIME and not (min(1, len(committed)) <= applied <= len(committed)):
            once.append(f"key {key}: {applied} increments, {len(committed)} committed batches")
        elif rule == EVENT_TIME:
            lost += len(committed) - int(applied)
        note = final[key][1]
        failed = {b["tag"] for b in on_key if not b.get("committed")}
        if not committed:
            if note != base[key][1]:
                by = " (a batch that failed)" if note in failed else ""
                last.append(f"key {key}: carries {note!r}, written by no committed batch{by}")
            continue
        allowed = tags if rule == EVENT_TIME else {b["tag"] for b in committed if not any(
            o["attempt_started_at"] > b["ended_at"] for o in committed if o is not b)}
        if note not in allowed:
            why = "a batch that failed" if note in failed else "not the last committed batch"
            last.append(f"key {key}: carries {note!r} ({why}); expected one of {sorted(allowed)}")
    out = {"each_acknowledged_batch_once": verdict(once), "last_writer_wins": verdict(last)}
    out["each_acknowledged_batch_once"]["increments_lost_to_the_merge_rule"] = lost if rule == EVENT_TIME else 0
    out["no_deleted_key"] = verdict([f"deleted key {k} is back" for k in sorted(deleted & set(final))])
    return out


def check_counts(row_count: int, distinct_keys: int, expected_rows: int) -> dict[str, dict[str, Any]]:
    """No key twice, no row lost or added (the race only updates)."""
    dup = [] if row_count == distinct_keys else [f"{row_count - distinct_keys} rows share a key with another row"]
    rows = [] if row_count == expected_rows else [f"{row_count} rows, expected {expected_rows}"]
    return {"no_duplicate_key": verdict(dup), "row_count": verdict(rows)}


def check_whole_table(expected: dict[str, list[int]], read: dict[str, list[int]]) -> dict[str, dict[str, Any]]:
    """Every row the race did not touch, every column, and every column a batch does not change of the rows it did,
    as the generated data has them (``measure/digest.py``: rows and an order-independent digest of each part)."""
    parts = {"untouched": "rows outside the race", "touched": "the race's rows, columns no batch changes"}
    evidence = []
    for part, words in parts.items():
        (rows, total), (want_rows, want_total) = read[part], expected[part]
        if rows != want_rows:
            evidence.append(f"{words}: {rows} rows, the generated data has {want_rows}")
        elif total != want_total:
            evidence.append(f"{words}: {rows} rows as many as the generated data's, but their digest differs "
                            f"({total:x} against {want_total:x}): a value changed")
    return {"every_other_value_unchanged": verdict(evidence)}


def check_history(history: list[HistoryEntry], before: set[str], committed_batches: int) -> dict[str, dict[str, Any]]:
    """The commits not in ``before`` (the history when the race began): as many writer commits as acknowledged
    batches, every parent present (no gap; the oldest entry's parent may have been expired), no writer's instant left
    unfinished (Hudi, after the final clean's lazy rollback)."""
    ids = {e.id for e in history}
    gaps = [f"commit {e.id} follows {e.parent}, which the history lacks" for e in history[1:]
            if e.parent is not None and e.parent not in ids]
    after = [e for e in history if e.id not in before]
    writes = [e for e in after if e.by_writer and e.state == "COMPLETED"]
    count = [] if len(writes) == committed_batches else \
        [f"{len(writes)} writer commits in the history, {committed_batches} batches acknowledged"]
    orphans = [f"{e.operation} {e.id} left {e.state}" for e in after if e.state != "COMPLETED" and e.operation in
               ("commit", "deltacommit")]
    return {"history_without_gaps": verdict(gaps + orphans), "commits_match_acknowledged": verdict(count)}


def violations(checks: dict[str, dict[str, Any]]) -> list[str]:
    """Every failed check, one line each."""
    return [f"{name}: {'; '.join(c['evidence'])}" for name, c in checks.items() if not c["ok"]]
