"""Where a run's wall time goes: measured operations and reads versus setup, resets, data, JVM starts.

Each category is charged only its own time: entering a category while another is open pauses the outer
one, so nested work (a reset inside a setup, a read inside a sequence) is never counted twice. Beside the wall
time, the CPU the run used (this process and the JVMs and servers it started and has reaped): a run whose CPU
is near cores x wall is bound by the machine, and running more beside it only stretches both.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import resource
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from bench.core import resident

F = TypeVar("F", bound=Callable[..., Any])


def cpu_seconds() -> float:
    """User + system CPU of this process, of its children that have exited (a stopped JVM, a writer), and of its
    descendants still running (the Spark JVM until the run stops it: without them a run's time line said 0.2 cores
    busy while pytest's, taken after the JVM stopped, said 1.7)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + live_descendants_cpu()


def live_descendants_cpu(root: int | None = None) -> float:
    """CPU seconds of ``root``'s (this process's) descendants that are still running, and of the children they have
    reaped, from /proc (0 where there is none)."""
    root = os.getpid() if root is None else root
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return 0.0
    for entry in entries:
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone since the listing
        parents[int(entry)] = int(fields[1])
        ticks[int(entry)] = sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
    below, frontier = set(), [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in below:
                below.add(pid)
                frontier.append(pid)
    return sum(ticks[pid] for pid in below) / os.sysconf("SC_CLK_TCK")

OPERATIONS, READS, SECOND_READS, SETUP, RESET, DATA, JVM, WARM_UP, PROBES, RACES = (
    "measured operations", "measured reads", "second-engine reads", "table setup", "table resets", "data generation",
    "JVM starts", "warm-up", "probes and answer checks", "several writers' races")
CATEGORIES = (OPERATIONS, READS, SECOND_READS, SETUP, RESET, DATA, JVM, WARM_UP, PROBES, RACES)
MEASURED = (OPERATIONS, READS, SECOND_READS)
OTHER = "everything else"


class Ledger:
    def __init__(self, clock: Callable[[], float] = time.perf_counter, cpu: Callable[[], float] = cpu_seconds) -> None:
        self.clock, self.cpu = clock, cpu
        self.restart()

    def restart(self) -> None:
        """Begin a new run (a pytest session starts one; several can share a process)."""
        self.started, self.cpu_started = self.clock(), self.cpu()
        self.cpu_seen = 0.0
        resident.restart_own_peak()
        self.seconds: dict[str, float] = dict.fromkeys(CATEGORIES, 0.0)
        self._stack: list[list] = []  # [category, start, time spent in nested categories]

    @contextlib.contextmanager
    def spend(self, category: str) -> Iterator[None]:
        if category not in self.seconds:
            raise ValueError(f"unknown ledger category {category!r}; known: {', '.join(CATEGORIES)}")
        frame: list = [category, self.clock(), 0.0]
        self._stack.append(frame)
        try:
            yield
        finally:
            self._stack.pop()
            elapsed = self.clock() - frame[1]
            self.seconds[category] += elapsed - frame[2]
            if self._stack:
                self._stack[-1][2] += elapsed

    def charged(self, category: str) -> Callable[[F], F]:
        """A function whose every call is charged to ``category`` (``spend`` as a decorator)."""
        def wrap(fn: F) -> F:
            @functools.wraps(fn)
            def run(*args: Any, **kwargs: Any) -> Any:
                with self.spend(category):
                    return fn(*args, **kwargs)
            return cast(F, run)
        return wrap

    def elapsed(self) -> float:
        return self.clock() - self.started

    def breakdown(self) -> TimeBreakdown:
        """Seconds per category, the rest as ``everything else``, the wall time and the measured share."""
        wall = self.elapsed()
        spent = {k: round(v, 3) for k, v in self.seconds.items()}
        spent[OTHER] = round(max(0.0, wall - sum(self.seconds.values())), 3)
        measured = sum(self.seconds[k] for k in MEASURED)
        return TimeBreakdown(round(wall, 3), spent, round(measured / wall, 4) if wall else 0.0,
                             round(self.cpu_so_far(), 3), resident.own_peak())

    def cpu_so_far(self) -> float:
        """The run's CPU, never less than an earlier reading said: a writer application stopped with its process
        group leaves its JVM to no parent that waits for it, and that JVM's CPU, counted while it ran, would vanish
        from a later reading (a writers run's recorded breakdown said 1,538 s, its terminal line after 540 s)."""
        self.cpu_seen = max(self.cpu_seen, self.cpu() - self.cpu_started)
        return self.cpu_seen


@dataclass(frozen=True)
class TimeBreakdown:
    """Where a run's time went, as ``time_breakdown.json`` holds it (written by the run, read back by the report)."""

    wall_s: float = 0.0
    seconds: dict[str, float] = field(default_factory=dict)
    measured_share: float = 0.0
    cpu_s: float | None = None  # runs recorded before the CPU was kept lack it
    python_rss_peak_bytes: int | None = None

    def as_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def describe(breakdown: TimeBreakdown) -> str:
    """One line: wall time, measured share, then each category's seconds and share."""
    wall = breakdown.wall_s or 1e-9
    parts = [f"{name} {s:.0f}s ({s / wall:.0%})" for name, s in breakdown.seconds.items() if s >= 0.5]
    cpu = f" (CPU {breakdown.cpu_s:.0f}s: {breakdown.cpu_s / wall:.1f} cores busy)" if breakdown.cpu_s else ""
    rss = f", Python peak RSS {breakdown.python_rss_peak_bytes / 2**30:.2f} GB" if breakdown.python_rss_peak_bytes else ""
    return f"wall {breakdown.wall_s:.0f}s{cpu}{rss}, measured {breakdown.measured_share:.0%} — " + ", ".join(parts)


LEDGER = Ledger()  # the run's ledger: the pytest plugin restarts, records and prints it
