"""Constructed recorded runs for the tests that need no Spark: the shape is the results contract's, the figures are
made up (and say so in their run ids); real runs are in the tiny run the Spark tests make."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.results.contract import SCHEMA_VERSION, header

QUERIES = ("revenue_7d", "total", "lookup")
DEFAULT_MATRIX = {"iceberg-cow": ("iceberg", "cow", False), "iceberg-mor": ("iceberg", "mor", True)}


def _reads(base: float, engines: tuple[str, ...]) -> dict[str, Any]:
    out = {}
    for i, q in enumerate(QUERIES):
        per = {e: {"seconds": [base + i * 0.01 + k * 0.001 for k in range(3)], "min": base, "median": base + i * 0.01 + 0.001,
                   "max": base + i * 0.01 + 0.002, "n": 3, "rows": 4, "answer_ok": True, "version": e}
               for e in engines}
        out[q] = {**per[engines[0]], "mode": "snapshot", "engines": per}
    return out


def record(config_id: str, family: str, mode: str, operation: str, seconds: list[float], cow: bool,
           engines: tuple[str, ...] = ("spark",)) -> dict[str, Any]:
    """One payments-hotfix record (update or compaction) with every field the contract asks for."""
    written = 300_000 if cow else 60_000
    info = {**header("payments_hotfix", operation, config_id, family, mode, "tiny", 42, []),
            "filesystem": {"bytes_added": written, "files_added": 8, "bytes_removed": 0, "files_removed": 0,
                           "data": {"bytes_added": written if cow else 50_000, "files_added": 8},
                           "delete": {"bytes_added": 0 if cow else 10_000, "files_added": 0 if cow else 9}},
            "metadata": {"bytes_added": written, "rows_changed": 12, "data_files_removed": 8 if cow else 0,
                         "delete_files_added": 0 if cow else 9},
            "rounds": [{"start_listing": "x"} for _ in seconds], "answers_verified": True, "row_count": 28_800,
            "rows_changed_verified": 12, "rounds_plan": {"min_rounds": len(seconds), "rounds": len(seconds)},
            "live_files_before": {"data_files": 36, "delete_files": 0},
            "live_files_after": {"data_files": 36, "delete_files": 0 if cow or operation == "compaction" else 9}}
    if operation == "update":
        info |= {"rows_targeted": 12, "write_amplification": written / 1_200, "rows_changed_reported": 12,
                 "logical_bytes": 1_200, "reads_before": _reads(1.0, engines), "reads_after": _reads(1.0 if cow else 1.3, engines),
                 "base": {"rows": 28_800, "files": 36, "days": 12, "files_per_day": 3, "rows_per_file": 800},
                 "route": "join", "locate_full_scan": None, "table_data_files": 36, "files_touched": 8}
    else:
        info |= {"reads_after_compaction": _reads(1.0, engines)}
    name = f"test_hotfix_{operation}[{config_id}]"
    stats = {"min": min(seconds), "max": max(seconds), "median": sorted(seconds)[len(seconds) // 2], "mean": sum(seconds) / len(seconds),
             "iqr": 0.0, "stddev": 0.0, "rounds": len(seconds), "data": seconds}
    return {"name": name, "fullname": f"scenarios/test_payments_hotfix.py::{name}", "group": None, "stats": stats,
            "extra_info": info}


def write_run(folder: Path, run_id: str, matrix: dict[str, tuple[str, str, bool]] | None = None,
              operations: tuple[str, ...] = ("update", "compaction"), engines: tuple[str, ...] = ("spark",),
              outcome: str = "passed", speed: float = 1.0, storage: dict[str, Any] | None = None,
              spark_conf: dict[str, str] | None = None, workspace: str = "/work/.cowmor-work") -> Path:
    """A complete run folder: benchmark.json, environment.json and outcomes.json (on an object store with
    ``storage``: every operation then carries made-up request counts; ``spark_conf``: Spark's recorded settings)."""
    matrix = matrix or DEFAULT_MATRIX
    benchmarks, outcomes = [], []
    for config_id, (family, mode, mor) in matrix.items():
        for operation in operations:
            if operation == "compaction" and not mor:
                continue
            base = (2.0 if not mor else 1.5) * speed
            benchmarks.append(record(config_id, family, mode, operation, [base, base * 1.05, base * 0.97], not mor, engines))
            if storage:
                benchmarks[-1]["extra_info"]["requests"] = {"GET": 40, "PUT": 12, "LIST": 6, "DELETE": 0, "total": 58}
            outcomes.append({"nodeid": benchmarks[-1]["fullname"], "test": f"test_hotfix_{operation}",
                             "config_id": config_id, "outcome": outcome, "when": "call", "duration_s": 1.0})
    environment = {"schema_version": SCHEMA_VERSION, "run_id": run_id, "created": "2026-11-24T00:00:00+00:00",
                   "scale": {"name": "tiny", "rows": 28_800, "files": 36}, "seed": 42,
                   "configs": {c: {"family": f, "mode": m, "merges_on_read": mor, "description": f"{f} {m}", "settings": []}
                               for c, (f, m, mor) in matrix.items()},
                   "formats": {f: {"status": "available", "artifacts": [f"org.example:{f}:1.0"]} for f, _, _ in matrix.values()},
                   "engines": {e: {"status": "available", "version": e} for e in engines},
                   "storage": storage or {"kind": "local disk"}, "workspace": workspace,
                   "spark": {"master": "local[*]", "conf": spark_conf or {"spark.driver.memory": "2g"}}}
    run_dir = folder / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    data = {"machine_info": {}, "commit_info": {}, "benchmarks": benchmarks, "datetime": "2026-11-24T00:00:00",
            "version": "5.1.0", "cowmor": {"environment": environment, "outcomes": outcomes}}
    (run_dir / "benchmark.json").write_text(json.dumps(data))
    (run_dir / "environment.json").write_text(json.dumps(environment))
    (run_dir / "outcomes.json").write_text(json.dumps(outcomes))
    return run_dir
