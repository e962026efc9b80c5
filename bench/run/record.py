"""The run's record on disk: what it ran on (versions, machine, command, commit; the session adds the
configuration matrix and every setting) and atomic JSON writes into results/<run-id>/."""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.exceptions import MissingArtifact
from bench.servers import artifacts

PACKAGES = ("pyspark", "pyiceberg", "pytest-benchmark", "pandas", "pyarrow", "seaborn", "delta-spark",
            "snowpark-connect-deps-iceberg", "duckdb", "duckdb-ext-iceberg", "duckdb-ext-delta", "duckdb-ext-avro", "hudi")


def host() -> dict[str, Any]:
    """What the run ran on and with, whatever it measured: Python and the packages' versions, the machine, the
    command as the shell gave it (a reference run's manifest names it) and the harness's commit."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {"python": platform.python_version(), "packages": versions,
            "machine": {"platform": platform.platform(), "machine": platform.machine(), "cpus": os.cpu_count(),
                        "memory_bytes": _memory_bytes(), "node": platform.node(), "cpu_model": cpu_model(),
                        "host_id": host_id()},
            "command": shlex.join(getattr(sys, "orig_argv", sys.argv)), "harness_commit": _git_commit()}


def family_status(families: list[str], resolve: Callable[[str], Any]) -> dict[str, Any]:
    """Each format family's jars as the run resolved them (``resolve``), or why it skipped, with the artifacts it names."""
    formats: dict[str, Any] = {}
    for family in families:
        try:
            formats[family] = {"status": "available", **resolve(family).as_dict()}
        except MissingArtifact as err:
            formats[family] = {"status": "skipped", "reason": str(err)}
        formats[family]["artifacts"] = [a.coordinate for a in artifacts.FAMILY_ARTIFACTS[family]]
    return formats


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


def host_id() -> str | None:
    """This host in this boot: the OS install's machine id with the kernel's boot id (``/etc/machine-id``,
    ``/proc/sys/kernel/random/boot_id``). Virtual machines of one image share a hostname and often a CPU model, so
    neither names a host; two runs with one ``host_id`` ran on one machine without a reboot between them, and only
    their times may be divided (``bench.report.locate.ratios``). None where the OS keeps neither."""
    parts = []
    for path in ("/etc/machine-id", "/proc/sys/kernel/random/boot_id"):
        try:
            parts.append(Path(path).read_text().strip().replace("-", "")[:12])
        except OSError:
            pass
    return "-".join(parts) if len(parts) == 2 else None


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

