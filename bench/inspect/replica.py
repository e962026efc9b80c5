"""A synthetic replica of a profiled table: the payments generator's scale parameters that reproduce its layout.

What decides the trade-off is kept: partitions (settlement days), files per partition, rows per file (so the file
size), rows per update. Where the machine cannot hold the whole table, ``fraction`` scales the partitions (and the
rows an update changes with them) and keeps the file size and the files per partition; the fraction is recorded,
and a prediction for the whole table bridges only it. The generator's keys are clustered (each file a range of its
own): a table whose key is not is replicated at its best case, and the replica says so.
"""

from __future__ import annotations

from typing import Any

from bench.exceptions import BadOption


def replica_params(profile: dict[str, Any], fraction: float = 1.0) -> dict[str, int]:
    """``--param`` values for a replica of ``profile`` at ``fraction`` of its partitions.

    Raises:
        BadOption: a fraction outside (0, 1], or a profile without files, rows or an update size.
    """
    if not 0 < fraction <= 1:
        raise BadOption(f"--fraction {fraction:g}: between 0 (excluded) and 1")
    files, rows = profile.get("data_files") or 0, profile.get("rows")
    keys = profile.get("keys_per_update") or (profile.get("workload") or {}).get("rows_changed_per_update")
    if not files or not rows or not keys:
        raise BadOption("the profile lacks data files, rows or rows per update (inspect with --keys-per-update)")
    partitions = max(1, int(profile.get("partitions") or 1))
    days = max(1, round(partitions * fraction))
    per_day = max(1, round(files / partitions))
    per_file = max(1, round(rows / files))
    changed = max(1, min(round(keys * days / partitions), days * per_day * per_file))
    return {"days": days, "files_per_day": per_day, "rows_per_file": per_file, "hotfix_rows": changed}


def notes(profile: dict[str, Any], params: dict[str, int]) -> list[str]:
    """What the replica does not reproduce, in words."""
    out = []
    touched = profile.get("files_touched_by_random_keys")
    # the replica's update touches at most one file per key; the table's, at the replica's fraction of its partitions
    share = params["days"] / max(1, int(profile.get("partitions") or 1))
    clustered = min(params["hotfix_rows"], params["days"] * params["files_per_day"])
    if touched is not None and touched * share > 1.5 * clustered:
        out.append(f"the table's key is less clustered than the replica's: {touched:,.0f} files hold a random update's "
                   f"keys there ({touched * share:,.0f} at the replica's share of its partitions), at most {clustered:,} "
                   "here; the replica is the best case for copy-on-write")
    return out
