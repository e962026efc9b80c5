"""Sizes as people read them, for progress lines and report tables alike."""

from __future__ import annotations

import math


def human_bytes(n: float | None) -> str:
    """``1.3 MB``; ``-`` for a size not known (None or NaN)."""
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return "-"
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"
