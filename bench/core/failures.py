"""What kind of failure a writer's failed commit attempt was: the several-writers claims are decided on it.

A format's exception words name who caused a failure only sometimes: Iceberg's "starting snapshot was expired" is
the race's own expiry, Hudi's "overlapping write with a concurrent deltacommit" another writer, but Iceberg's
"missing data files" or Delta's ``ConcurrentDeleteReadException`` can be another writer's copy-on-write rewrite as
well as the table service's compaction. So a kind comes from the words where they decide it (``TableFormat``'s
``failure_causes``), else from what committed while the attempt ran: another writer's commit only (a write
conflict), the table service only (a collision with the service), both (either one), neither (other).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

WRITE_CONFLICT = "write conflict"  # another writer's commit
TABLE_SERVICE = "table service"  # compaction, clean, rewrite or OPTIMIZE (the service's, or a writer's own clean)
HARNESS_EXPIRY = "the race's own snapshot expiry"  # the set-up's retention, not another writer
HEARTBEAT_EXPIRY = "heartbeat expired"  # Hudi: the writer's own heartbeat lapsed, its instant was given up
RAISED_AFTER_COMMIT = "raised after its commit landed"  # the checked retry found the attempt's commit
WRITER_OR_SERVICE = "another writer or the table service"  # both committed while it ran; the words do not say which
OTHER = "other"
NOT_RECORDED = "not recorded"  # a run recorded before attempts carried their times
CHECKED, BLIND = "checked", "blind"  # how a failed batch is retried: after looking for its commit, or without
KINDS = (WRITE_CONFLICT, TABLE_SERVICE, HARNESS_EXPIRY, HEARTBEAT_EXPIRY, RAISED_AFTER_COMMIT, WRITER_OR_SERVICE, OTHER,
         NOT_RECORDED)


def kind(failure: dict[str, Any], worded: str | None, writer: int, batches: list[dict[str, Any]],
         services: list[dict[str, Any]]) -> str:
    """The kind of one failed attempt of ``writer``: raised after its commit if its commit landed, else what the
    format's words say (``worded``), else what committed while it ran: another writer's committed attempt, or a
    table-service run that committed, overlapping the attempt's ``started_at``..``ended_at`` (epoch s)."""
    if failure.get("landed"):
        return RAISED_AFTER_COMMIT
    if worded:
        return worded
    start, end = failure.get("started_at"), failure.get("ended_at")
    if start is None or end is None:
        return NOT_RECORDED
    writers = any(b["writer"] != writer and b.get("committed") and _overlaps(b.get("attempt_started_at"), b.get("ended_at"), start, end)
                  for b in batches)
    service = any(s.get("committed") and _overlaps(s.get("started_at"), s.get("ended_at"), start, end) for s in services)
    if writers and service:
        return WRITER_OR_SERVICE
    return WRITE_CONFLICT if writers else TABLE_SERVICE if service else OTHER


def _overlaps(began: float | None, ended: float | None, start: float, end: float) -> bool:
    return began is not None and ended is not None and began <= end and ended >= start


def counted(batches: list[dict[str, Any]], by: str = "kind") -> dict[str, int]:
    """The batches' failed attempts counted by kind (or by another field the race set on each, e.g. ``cause``), most
    first; an attempt without it counts as not recorded."""
    return dict(Counter(f.get(by, NOT_RECORDED) for b in batches for f in b["failures"]).most_common())
