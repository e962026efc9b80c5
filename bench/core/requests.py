"""Object-store requests by kind, counted around measured operations and reads.

The run registers a counter (``bench/servers/objectstore.py`` reads the server's metrics); without one (local disk, or
an endpoint with no metrics) nothing is counted and records carry no ``requests``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

_counter: Callable[[], Counter | None] | None = None


def register(counter: Callable[[], Counter | None] | None) -> None:
    global _counter
    _counter = counter


def snapshot() -> Counter | None:
    return _counter() if _counter is not None else None


def since(before: Counter | None) -> dict[str, int] | None:
    """Requests by kind served since ``before`` (None when nothing is counted)."""
    if before is None:
        return None
    after = snapshot()
    if after is None:
        return None
    delta = {kind: after[kind] - before.get(kind, 0) for kind in after if after[kind] - before.get(kind, 0)}
    return dict(sorted(delta.items())) | {"total": sum(delta.values())}
