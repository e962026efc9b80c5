"""The memory an operation needs: a bisection over a ladder of driver memories, and why an attempt failed.

An attempt is the operation in a Spark application given one rung's memory. Needing memory is taken to be monotone
(what completes with 2 GB completes with 3 GB), so the search tries the top rung first, then bisects between the
highest rung that failed and the lowest that completed: about log2(rungs) attempts, never one below a rung that
failed nor above one that completed.
"""

from __future__ import annotations

import re
from typing import Any

LADDER_MB = (512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768)
OUT_OF_MEMORY = re.compile(r"java\.lang\.OutOfMemoryError[^\n]*|GC overhead limit exceeded|Java heap space|"
                           r"Container killed .* memory|exit code 137|SparkOutOfMemoryError[^\n]*")


def ladder(low_mb: int, high_mb: int) -> list[int]:
    """The rungs between ``low_mb`` and ``high_mb`` (MB), both included where they are rungs; at least ``high_mb``."""
    rungs = [m for m in LADDER_MB if low_mb <= m <= high_mb]
    return rungs if rungs and rungs[-1] == high_mb else [*rungs, high_mb]


def next_rung(rungs: list[int], completed: dict[int, bool]) -> int | None:
    """The next rung to try given the attempts so far (rung -> completed), or None when the answer is known."""
    if not completed:
        return rungs[-1]
    ok = [i for i, m in enumerate(rungs) if completed.get(m) is True]
    failed = [i for i, m in enumerate(rungs) if completed.get(m) is False]
    high = min(ok) if ok else None
    low = max(failed) if failed else -1
    if high is None:  # the top failed: the operation needs more than the ladder offers
        return None
    if high - low <= 1:
        return None
    return rungs[(low + high) // 2]


def verdict(rungs: list[int], attempts: list[dict[str, Any]]) -> dict[str, Any]:
    """The smallest rung that completed and the largest that failed (None where no attempt did), and whether the
    failures were for memory: what the record and the report state."""
    ok = [a["driver_memory_mb"] for a in attempts if a["completed"]]
    failed = [a for a in attempts if not a["completed"]]
    smallest = min(ok) if ok else None
    return {"needed_mb": smallest, "largest_failed_mb": max((a["driver_memory_mb"] for a in failed), default=None),
            "more_than_ladder": smallest is None and bool(failed), "ladder_mb": rungs,
            "failed_for_memory": sum(1 for a in failed if a.get("out_of_memory")),
            "failed_otherwise": sum(1 for a in failed if not a.get("out_of_memory"))}


def memory_failure(*texts: str) -> str | None:
    """The JVM's own words where a failure was for memory (an OutOfMemoryError, heap space, a killed container), else
    None: the message of the exception first, then what the JVM printed."""
    for text in texts:
        found = OUT_OF_MEMORY.search(text or "")
        if found:
            return found.group(0).strip()[:300]
    return None
