"""How long a Hudi writer waited for its lock, read from the lines its lock provider logs.

``BaseZookeeperBasedLockProvider`` (1.1.1) logs "ACQUIRING lock atZkBasePath = …, lock key = …" before it blocks on
ZooKeeper and "ACQUIRED lock …" once it holds the lock; a writer takes the lock when it starts an instant and
again when it commits. A writer application's log (``bench/writers/log4j2-writer.properties``) starts each line with
the wall clock in milliseconds, so each wait is placed on the race's own clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINE = re.compile(r"^(?P<millis>\d{13}) \S+ INFO \w+: (?P<what>ACQUIRING|ACQUIRED) lock atZkBasePath = \S+, lock key = (?P<key>\S+)")


@dataclass(frozen=True)
class LockWait:
    key: str
    asked_at: float  # epoch s
    held_at: float  # epoch s

    @property
    def seconds(self) -> float:
        return self.held_at - self.asked_at


def lock_waits(log: str) -> list[LockWait]:
    """Every lock acquisition in one writer application's log, in order (a request without its grant is left out:
    the application stopped or failed while it waited)."""
    waits, asked = [], {}
    for line in log.splitlines():
        match = LINE.match(line)
        if not match:
            continue
        at, key = int(match["millis"]) / 1000, match["key"]
        if match["what"] == "ACQUIRING":
            asked[key] = at
        elif key in asked:
            waits.append(LockWait(key, asked.pop(key), at))
    return waits

