"""Where a run's wall time goes: measured operations and reads versus setup, resets, data, JVM starts.

Each category is charged only its own time: entering a category while another is open pauses the outer
one, so nested work (a reset inside a setup, a read inside a sequence) is never counted twice.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

OPERATIONS, READS, SECOND_READS, SETUP, RESET, DATA, JVM, WARM_UP = (
    "measured operations", "measured reads", "second-engine reads", "table setup", "table resets", "data generation",
    "JVM starts", "warm-up")
CATEGORIES = (OPERATIONS, READS, SECOND_READS, SETUP, RESET, DATA, JVM, WARM_UP)
MEASURED = (OPERATIONS, READS, SECOND_READS)
OTHER = "everything else"


class Ledger:
    def __init__(self, clock=time.perf_counter) -> None:
        self.clock = clock
        self.restart()

    def restart(self) -> None:
        """Begin a new run (a pytest session starts one; several can share a process)."""
        self.started = self.clock()
        self.seconds: dict[str, float] = dict.fromkeys(CATEGORIES, 0.0)
        self._stack: list[list] = []  # [category, start, time spent in nested categories]

    @contextlib.contextmanager
    def spend(self, category: str) -> Iterator[None]:
        if category not in self.seconds:
            raise ValueError(f"unknown ledger category {category!r}; known: {', '.join(CATEGORIES)}")
        frame = [category, self.clock(), 0.0]
        self._stack.append(frame)
        try:
            yield
        finally:
            self._stack.pop()
            elapsed = self.clock() - frame[1]
            self.seconds[category] += elapsed - frame[2]
            if self._stack:
                self._stack[-1][2] += elapsed

    def elapsed(self) -> float:
        return self.clock() - self.started

    def breakdown(self) -> dict[str, float | dict[str, float]]:
        """Seconds per category, the rest as ``everything else``, the wall time and the measured share."""
        wall = self.elapsed()
        spent = {k: round(v, 3) for k, v in self.seconds.items()}
        spent[OTHER] = round(max(0.0, wall - sum(self.seconds.values())), 3)
        measured = sum(self.seconds[k] for k in MEASURED)
        return {"wall_s": round(wall, 3), "seconds": spent, "measured_share": round(measured / wall, 4) if wall else 0.0}


def describe(breakdown: dict) -> str:
    """One line: wall time, measured share, then each category's seconds and share."""
    wall = breakdown["wall_s"] or 1e-9
    parts = [f"{name} {s:.0f}s ({s / wall:.0%})" for name, s in breakdown["seconds"].items() if s >= 0.5]
    return (f"wall {breakdown['wall_s']:.0f}s, measured {breakdown['measured_share']:.0%} — " + ", ".join(parts))


LEDGER = Ledger()  # the run's ledger: the pytest plugin restarts, records and prints it
