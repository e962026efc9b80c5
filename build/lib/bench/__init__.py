"""cowmor: copy-on-write vs merge-on-read vs deletion vectors, measured on real Iceberg, Hudi and Delta."""

from __future__ import annotations

__version__ = "0.1.0"
