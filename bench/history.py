"""The run history: one tidy CSV under results/, one row per (run, benchmark, metric), for trends.

Appending is atomic (write a temporary file, then rename) and idempotent (a run already present is
replaced, not duplicated).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from bench.report.load import Run

COLUMNS = ["run_id", "date", "scale", "spark", "iceberg", "delta", "hudi", "pyspark", "config_id", "scenario",
           "operation", "param", "benchmark", "metric", "value"]
METRICS = {"median_s": ("stats", "median"), "min_s": ("stats", "min"), "max_s": ("stats", "max")}
EXTRA = {"bytes_written": ("filesystem", "bytes_added"), "files_written": ("filesystem", "files_added"),
         "write_amplification": ("write_amplification",), "rows_changed_verified": ("rows_changed_verified",)}


def rows(run: Run) -> pd.DataFrame:
    env = run.environment
    formats = env.get("formats") or {}
    version = {f: next((p.rsplit(":", 1)[-1] for p in (formats.get(f) or {}).get("artifacts", [])), None)
               for f in ("iceberg", "delta", "hudi")}
    common = {"run_id": run.run_id, "date": env.get("created"), "scale": run.scale,
              "spark": (env.get("jvm") or {}).get("spark"), "pyspark": (env.get("packages") or {}).get("pyspark"), **version}
    out = []
    for b in run.benchmarks:
        x = b.get("extra_info") or {}
        ident = {"config_id": x.get("config_id"), "scenario": x.get("scenario"), "operation": x.get("operation"),
                 "param": x.get("param"), "benchmark": b["name"]}
        for metric, path in list(METRICS.items()) + list(EXTRA.items()):
            source = b if path[0] == "stats" else x
            value = source
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, (int, float)):
                out.append({**common, **ident, "metric": metric, "value": float(value)})
    return pd.DataFrame(out, columns=COLUMNS)


def append(history: Path, run: Run) -> pd.DataFrame:
    """Add ``run`` to the history file (replacing an earlier copy of the same run) and return the whole history."""
    history = Path(history)
    old = pd.read_csv(history) if history.exists() else pd.DataFrame(columns=COLUMNS)
    kept = old[old.run_id != run.run_id]
    new = pd.concat([kept, rows(run)], ignore_index=True) if not kept.empty else rows(run)
    history.parent.mkdir(parents=True, exist_ok=True)
    tmp = history.with_name(f".{history.name}.tmp")
    new.to_csv(tmp, index=False)
    os.replace(tmp, history)  # atomic: readers see the old file or the new one, never half of one
    return new
