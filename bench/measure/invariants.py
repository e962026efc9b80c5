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
            once.append(f"key {key}: {applied} increments, {len(committed)} committed batches ({', '.join(sorted(tags)) or 'none'})")
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


def check_history(history: list[HistoryEntry], before: int, committed_batches: int) -> dict[str, dict[str, Any]]:
    """The commits after the first ``before`` entries: as many writer commits as acknowledged batches, every parent
    present (no gap), no writer's instant left unfinished (Hudi, after the final clean's lazy rollback)."""
    ids = {e.id for e in history}
    gaps = [f"commit {e.id} follows {e.parent}, which the history lacks" for e in history[1:]
            if e.parent is not None and e.parent not in ids]
    after = history[before:]
    writes = [e for e in after if e.by_writer and e.state == "COMPLETED"]
    count = [] if len(writes) == committed_batches else \
        [f"{len(writes)} writer commits in the history, {committed_batches} batches acknowledged"]
    orphans = [f"{e.operation} {e.id} left {e.state}" for e in after if e.state != "COMPLETED" and e.operation in
               ("commit", "deltacommit")]
    return {"history_without_gaps": verdict(gaps + orphans), "commits_match_acknowledged": verdict(count)}


def violations(checks: dict[str, dict[str, Any]]) -> list[str]:
    """Every failed check, one line each."""
    return [f"{name}: {'; '.join(c['evidence'])}" for name, c in checks.items() if not c["ok"]]
