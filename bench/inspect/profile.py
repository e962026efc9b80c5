"""A table's profile from its facts: the shape and workload cowmor's other commands take (pure, for unit tests).

Shape: data files, bytes, the file-size distribution, partitions, rows; how the key spreads over files (each file's
min/max) and how many files a random key set of a given size would touch. Workload: commits per day by operation,
rows and files changed per row-level commit, outstanding delete files or logs, compactions and how many writes lie
between them. A field the metadata cannot give is None, with a note saying why.
"""

from __future__ import annotations

import bisect
import statistics
from collections import Counter
from typing import Any

import numpy as np

from bench.inspect import TableFacts

PROFILE_VERSION = 1
ROW_LEVEL = ("UPDATE", "DELETE", "MERGE", "UPSERT", "OVERWRITE")  # an operation naming one of these changes rows
DAY_MS = 86_400_000


def size_distribution(sizes: list[int]) -> dict[str, float] | None:
    if not sizes:
        return None
    q = np.percentile(sizes, [0, 25, 50, 75, 100])
    return {"min": float(q[0]), "p25": float(q[1]), "median": float(q[2]), "p75": float(q[3]), "max": float(q[4]),
            "mean": float(np.mean(sizes))}


def files_touched_by_random_keys(ranges: list[tuple[float, float]], keys: int, seed: int = 0, trials: int = 20) -> float | None:
    """The mean number of files whose [min, max] holds at least one of ``keys`` keys drawn uniformly over the table's
    key range: what an update of that many scattered keys must at least read and, on copy-on-write, rewrite."""
    ranges = [(float(lo), float(hi)) for lo, hi in ranges if lo is not None and hi is not None]
    if not ranges or keys <= 0:
        return None
    low, high = min(lo for lo, _ in ranges), max(hi for _, hi in ranges)
    rng = np.random.default_rng(seed)
    starts = sorted(range(len(ranges)), key=lambda i: ranges[i][0])
    begin = [ranges[i][0] for i in starts]
    counts = []
    for _ in range(trials):
        touched: set[int] = set()
        for k in rng.uniform(low, high, keys):
            # files whose range starts at or below k and ends at or above it
            for j in range(bisect.bisect_right(begin, k) - 1, -1, -1):
                i = starts[j]
                if ranges[i][1] >= k:
                    touched.add(i)
                if len(touched) == len(ranges):
                    break
        counts.append(len(touched))
    return float(statistics.fmean(counts))


def workload(facts: TableFacts) -> dict[str, Any]:
    commits = sorted(facts.commits, key=lambda c: c.at_ms)
    if not commits:
        return {"commits": 0, "note": "the table has no history: its workload is unknown"}
    span_days = max((commits[-1].at_ms - commits[0].at_ms) / DAY_MS, 1 / 24)
    row_level = [c for c in commits if any(w in c.operation.upper() for w in ROW_LEVEL) and not c.compaction]
    # one compaction may take several commits in a row (Iceberg's rewrite of data files, then of position deletes)
    compactions = [i for i, c in enumerate(commits) if c.compaction and not (i and commits[i - 1].compaction)]
    between = [sum(1 for c in commits[a + 1:b] if not c.compaction) for a, b in zip(compactions, compactions[1:])]
    changed = [c.rows_changed for c in row_level if c.rows_changed is not None]
    added = [c.files_added for c in row_level if c.files_added is not None]
    return {"commits": len(commits), "first_ms": commits[0].at_ms, "last_ms": commits[-1].at_ms,
            "days": round(span_days, 3),
            "commits_per_day_by_operation": {op: round(n / span_days, 3) for op, n in Counter(c.operation for c in commits).items()},
            "row_level_commits": len(row_level), "updates_per_day": round(len(row_level) / span_days, 3),
            "rows_changed_per_update": statistics.median(changed) if changed else None,
            "files_written_per_update": statistics.median(added) if added else None,
            "compactions": len(compactions),
            "writes_per_compaction": statistics.median(between) if between else None}


def profile(facts: TableFacts, keys_per_update: int | None = None, reads_per_day: float | None = None) -> dict[str, Any]:
    """The profile: shape, key spread, workload, and what is asked rather than read."""
    sizes = [f.bytes for f in facts.files]
    rows = [f.rows for f in facts.files]
    parts = {f.partition for f in facts.files}
    load = workload(facts)
    keys = keys_per_update or (int(load["rows_changed_per_update"]) if load.get("rows_changed_per_update") else None)
    ranges = [(f.key_min, f.key_max) for f in facts.files]
    spread = files_touched_by_random_keys(ranges, keys) if keys else None
    notes = list(facts.notes)
    if reads_per_day is None:
        notes.append("reads per day: no metadata records reads; give --reads-per-day")
    if spread is None and keys:
        notes.append("files a random key set touches: unknown without per-file key statistics")
    if keys is None:
        notes.append("rows an update changes: no row-level commit in the history says; give --keys-per-update")
    return {"profile_version": PROFILE_VERSION, "format": facts.format, "location": facts.location, "key": facts.key,
            "data_files": len(facts.files), "bytes": int(sum(sizes)),
            "rows": int(sum(rows)) if rows and all(r is not None for r in rows) else None,
            "file_bytes": size_distribution(sizes), "partition_columns": facts.partition_columns,
            "partitions": len(parts) if facts.partition_columns else 1,
            "files_per_partition": round(len(facts.files) / max(len(parts), 1), 3) if facts.files else None,
            "keys_per_update": keys, "files_touched_by_random_keys": spread,
            "outstanding_deletes": facts.outstanding_deletes, "workload": load, "reads_per_day": reads_per_day,
            "notes": notes}


def text(p: dict[str, Any]) -> str:
    """The profile as a few aligned lines for the terminal."""
    mb = (p.get("file_bytes") or {})
    load = p["workload"]
    rows = [("table", f"{p['format']} at {p['location']}"), ("key", p.get("key") or "unknown (give --key)"),
            ("data files", f"{p['data_files']:,} in {p['partitions']:,} partitions ({p['files_per_partition']} per partition)"
                           if p["data_files"] else "none: an empty table"),
            ("bytes", f"{p['bytes'] / 2**20:,.1f} MB" + (f", {p['rows']:,} rows" if p.get("rows") is not None else "")),
            ("file size MB", " / ".join(f"{k} {v / 2**20:.2f}" for k, v in mb.items()) if mb else "no files"),
            ("update of", f"{p['keys_per_update']:,} random keys touches ~{p['files_touched_by_random_keys']:,.0f} files"
             if p.get("files_touched_by_random_keys") is not None else "key spread unknown"),
            ("outstanding", f"{p['outstanding_deletes']:,} delete files / deletion vectors / logs"),
            ("history", f"{load['commits']:,} commits over {load.get('days', 0)} days; per day "
             + ", ".join(f"{op} {n}" for op, n in (load.get("commits_per_day_by_operation") or {}).items())
             if load["commits"] else load.get("note", "")),
            ("per update", f"{load.get('rows_changed_per_update')} rows changed, {load.get('files_written_per_update')} files written"
                           if load.get("rows_changed_per_update") is not None else
                           "no row-level commit records its rows (give --keys-per-update)"),
            ("compaction", f"{load.get('compactions', 0)} compactions, every {load.get('writes_per_compaction')} writes"
                           if load.get("writes_per_compaction") else f"{load.get('compactions', 0)} compactions: no cadence "
                           "to read from the history"),
            ("reads per day", str(p["reads_per_day"]) if p.get("reads_per_day") is not None else "not known (--reads-per-day)")]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows + [("note", n) for n in p["notes"]])
