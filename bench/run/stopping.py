"""A stop signal ends a run cleanly: Ctrl-C, a CI timeout or a closed terminal is recorded as why the run stopped and
raised as KeyboardInterrupt, so pytest ends the session and pytest-benchmark saves what finished.

pyspark's SparkContext makes SIGINT its own when it starts (it cancels the running jobs, then raises
KeyboardInterrupt, which py4j turns into an error of the test); left so, Ctrl-C failed one test and the run went on
to the next. ``reclaim_sigint`` after every start puts the record first and lets pyspark cancel its jobs after.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")
_record: Callable[[str], None] | None = None


def install(record: Callable[[str], None]) -> None:
    """SIGINT, SIGTERM and SIGHUP call ``record`` with the signal's name, then raise KeyboardInterrupt (SIGTERM and
    SIGHUP would otherwise end the process at once: no benchmark.json, servers left to their parent-death signal)."""
    global _record
    if threading.current_thread() is not threading.main_thread():
        return
    _record = record
    for name in STOP_SIGNALS:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _stop)


def _recorded(signum: int) -> str:
    """Record the stop (its signal's name) and return the words the run stops with."""
    name = signal.Signals(signum).name
    if _record is not None:
        _record(name)
    return f"cowmor: stopped by {name}"


def _stop(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(_recorded(signum))


def reclaim_sigint() -> None:
    """Take SIGINT back from a library that made it its own since ``install`` (pyspark's SparkContext): the stop is
    recorded first, then the library's handler runs (pyspark cancels its jobs), then KeyboardInterrupt."""
    if _record is None or threading.current_thread() is not threading.main_thread():
        return
    theirs = signal.getsignal(signal.SIGINT)
    if theirs is _stop or getattr(theirs, "cowmor_reclaimed", False):
        return

    def stop_then_theirs(signum: int, frame: Any) -> None:
        words = _recorded(signum)
        if callable(theirs):
            try:
                theirs(signum, frame)
            except Exception:  # noqa: BLE001 - a stopped context's cancel fails; the run stops all the same
                pass
        raise KeyboardInterrupt(words)

    stop_then_theirs.cowmor_reclaimed = True  # type: ignore[attr-defined]
    signal.signal(signal.SIGINT, stop_then_theirs)
