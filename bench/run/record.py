"""The run's record on disk: the environment (versions, machine, the configuration matrix, every setting) and
atomic JSON writes into results/<run-id>/."""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.exceptions import MissingArtifact
from bench.results.contract import SCHEMA_VERSION
from bench.run import artifacts

if TYPE_CHECKING:
    from bench.run.session import BenchSession

PACKAGES = ("pyspark", "pyiceberg", "pytest-benchmark", "pandas", "pyarrow", "seaborn", "delta-spark",
            "snowpark-connect-deps-iceberg", "duckdb", "duckdb-ext-iceberg", "duckdb-ext-delta", "duckdb-ext-avro", "hudi")


def environment(session: BenchSession) -> dict[str, Any]:
    """Versions, machine, scale, seed and every Spark/table setting: recorded with the results."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    families = sorted({c.family for c in session.configs})
    formats: dict[str, Any] = {}
    for family in families:
        try:
            formats[family] = {"status": "available", **session.resolution(family).as_dict()}
        except MissingArtifact as err:
            formats[family] = {"status": "skipped", "reason": str(err)}
        formats[family]["artifacts"] = [a.coordinate for a in artifacts.FAMILY_ARTIFACTS[family]]
    configs = {}
    for config in session.configs:
        fmt = session.adapter(config.id)
        configs[config.id] = {"family": config.family, "mode": config.mode, "description": config.description,
                              "merges_on_read": config.merges_on_read,
                              "settings": [vars(s) for s in fmt.settings()]}
    return {
        "schema_version": SCHEMA_VERSION, "run_id": session.run_id,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "scale": session.scale.as_dict(), "seed": session.seed, "rounds_plan": vars(session.rounds_plan),
        "python": platform.python_version(), "java": session.java, "jvm": session.apps.versions() or None,
        "packages": versions, "formats": formats, "configs": configs, "engines": session.readers.record(),
        "spark": {"master": session.spark_options.master, "conf": session.spark_options.base_conf("<family>")},
        "machine": {"platform": platform.platform(), "machine": platform.machine(), "cpus": os.cpu_count(),
                    "memory_bytes": _memory_bytes(), "node": platform.node(), "cpu_model": cpu_model()},
        # the command that made the run, as the shell gave it (a reference run's manifest names it)
        "command": shlex.join(getattr(sys, "orig_argv", sys.argv)),
        "workspace": str(session.workspace.root), "harness_commit": _git_commit(),
        "storage": session.object_store.record() if session.object_store else {"kind": "local disk"},
        "interrupted": session.interrupted,
        "like": session.like or None,  # --like: the profiled table this run replicates, at which fraction
        # several writers' catalog and lock (Iceberg's JDBC catalog, Hudi's ZooKeeper), where the run used them; the
        # single-writer scenarios keep Iceberg's Hadoop catalog and Hudi's in-process lock
        "coordination": session.coordination.record() if session.coordination else {},
    }


def write_json(run_dir: Path, name: str, payload: Any) -> Path:
    """Write ``run_dir/name`` whole or not at all (a unique temporary file renamed into place)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / name
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=run_dir)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(json.dumps(payload, indent=2, default=str))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def cpu_model() -> str | None:
    """The CPU's model name (``/proc/cpuinfo``; elsewhere what ``platform`` knows, or None)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                              cwd=Path(__file__).parent).stdout.strip() or None
    except OSError:
        return None

