"""The configuration matrix: config ids -> format family and mode, adapters imported lazily.

May import: bench.exceptions, bench.core. One file per family behind base.TableFormat; pyspark only inside methods.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bench.exceptions import BadOption

if TYPE_CHECKING:
    from bench.formats.base import TableFormat


@dataclass(frozen=True)
class Config:
    id: str
    family: str
    mode: str
    description: str
    merges_on_read: bool  # writes deletes/logs beside the data, so compaction has work to do


CONFIGS: dict[str, Config] = {c.id: c for c in (
    Config("iceberg-cow", "iceberg", "cow", "Iceberg v2, copy-on-write updates, deletes and merges", False),
    Config("iceberg-mor", "iceberg", "mor", "Iceberg v2, merge-on-read: position delete files", True),
    Config("iceberg-dv", "iceberg", "dv", "Iceberg v3, merge-on-read: deletion vectors in Puffin files", True),
    Config("hudi-cow", "hudi", "cow", "Hudi COPY_ON_WRITE", False),
    Config("hudi-mor", "hudi", "mor", "Hudi MERGE_ON_READ (snapshot and read-optimized reads, explicit compaction)", True),
    Config("delta-cow", "delta", "cow", "Delta, deletion vectors off (copy-on-write)", False),
    Config("delta-dv", "delta", "dv", "Delta, deletion vectors on", True),
)}

FAMILIES: dict[str, str] = {"iceberg": "bench.formats.iceberg", "hudi": "bench.formats.hudi", "delta": "bench.formats.delta"}


def select_configs(spec: str) -> list[Config]:
    """Parse ``--formats``: ``all``, family names and/or config ids, comma-separated, in matrix order.

    Raises:
        BadOption: a name that is neither a family nor a configuration id.
    """
    wanted: set[str] = set()
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part == "all":
            wanted.update(CONFIGS)
        elif part in FAMILIES:
            wanted.update(c.id for c in CONFIGS.values() if c.family == part)
        elif part in CONFIGS:
            wanted.add(part)
        else:
            raise BadOption(f"unknown format or configuration {part!r}; choose from all, "
                            f"{', '.join(FAMILIES)}, {', '.join(CONFIGS)}")
    if not wanted:
        raise BadOption("--formats selects no configuration")
    return [c for c in CONFIGS.values() if c.id in wanted]


def adapter_class(family: str) -> type[TableFormat]:
    module = importlib.import_module(FAMILIES[family])
    return module.ADAPTER


def make_adapter(config_id: str, warehouse: Path, target_file_bytes: int, route: str = "join") -> TableFormat:
    config = CONFIGS[config_id]
    return adapter_class(config.family)(config.id, config.mode, warehouse, target_file_bytes, route)
