"""Resident memory of a process as the kernel counts it: its high-water mark, and resetting that mark."""

from __future__ import annotations

import resource
import sys
from pathlib import Path

_own_folded = 0  # this process's highest mark before its last reset: a reset never loses the run's own peak


def reset_peak(pid: int | str = "self") -> bool:
    """Reset the resident-memory high-water mark of ``pid`` to its current resident memory (Linux 4.0+); False
    where it cannot (another system, or a process this one may not touch). This process's mark is folded into
    ``own_peak`` first."""
    global _own_folded
    if pid == "self":
        _own_folded = max(_own_folded, peak() or 0)
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak(pid: int | str = "self") -> int | None:
    """The resident-memory high-water mark of ``pid`` in bytes (``VmHWM``), None where /proc has none."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def lifetime_peak(who: int = resource.RUSAGE_SELF) -> int:
    """The peak resident memory of this process since it started (``RUSAGE_SELF``), or of the largest child it has
    reaped (``RUSAGE_CHILDREN``): ``ru_maxrss``, kilobytes on Linux, bytes on macOS."""
    value = resource.getrusage(who).ru_maxrss
    return value if sys.platform == "darwin" else value * 1024


def own_peak() -> int:
    """This process's peak resident memory since ``restart_own_peak`` (across every reset in between), or since it
    started where the mark cannot be reset."""
    current = peak()
    return max(_own_folded, current) if current is not None else lifetime_peak()


def restart_own_peak() -> None:
    """Count this process's peak from now (a run starts: a process may hold several runs)."""
    global _own_folded
    reset_peak()
    _own_folded = 0


def jvm_size_bytes(size: str) -> int | None:
    """A JVM memory size (``6g``, ``1536m``, ``2048k``, plain bytes) in bytes; None where it is not one."""
    import re

    match = re.fullmatch(r"(\d+)([kmgt]?)b?", size.strip().lower())
    return int(match.group(1)) * 1024 ** " kmgt".index(match.group(2) or " ") if match else None
