"""The read engines: every dashboard read runs on each, and each answer is checked on its own.

Spark writes every table and always reads; other engines read the same tables independently (a format
writer that ignores its own delete files would agree with itself, not with a second reader).

May import: bench.exceptions, bench.core, bench.formats.
"""

from __future__ import annotations

import importlib

from bench.exceptions import BadOption

PRIMARY = "spark"
ENGINES: dict[str, str] = {"spark": "bench.engines.spark", "duckdb": "bench.engines.duckdb"}


def select_engines(spec: str) -> list[str]:
    """Parse ``--engines``: ``all`` or engine names, comma-separated; Spark is always first (it writes the tables).

    Raises:
        BadOption: an unknown engine name.
    """
    wanted: set[str] = {PRIMARY}
    for part in (p.strip() for p in spec.split(",")):
        if part == "all":
            wanted.update(ENGINES)
        elif part in ENGINES:
            wanted.add(part)
        elif part:
            raise BadOption(f"unknown engine {part!r}; choose from all, {', '.join(ENGINES)}")
    return [name for name in ENGINES if name in wanted]


def engine_module(name: str):
    return importlib.import_module(ENGINES[name])
