"""Spark sessions: one Spark application (one JVM) per format family, so classpaths never mix."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bench.core import resident
from bench.exceptions import JavaNotFound
from bench.measure.memory import POLLING_INTERVAL as MEMORY_POLLING_INTERVAL
from bench.run import stopping
from bench.servers.daemons import LOG4J2

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MIN_JAVA, MAX_JAVA = 11, 17  # Spark 3.5 supports Java 8/11/17; this harness is verified on 17
JAVA_HINT = "install OpenJDK 17 (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless; macOS: brew install openjdk@17) and set JAVA_HOME"


def java_version() -> int:
    """Major version of the ``java`` Spark will use (JAVA_HOME first, then PATH).

    Raises:
        JavaNotFound: no java, or one older than 11.
    """
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home and (Path(home) / "bin" / "java").exists() else shutil.which("java")
    if not java:
        raise JavaNotFound(f"Java not found (cowmor runs Spark 3.5, which needs Java {MIN_JAVA}-{MAX_JAVA}): {JAVA_HINT}")
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not match:
        raise JavaNotFound(f"cannot read the version of {java} ({out.strip()[:80]!r}): {JAVA_HINT}")
    major = int(match.group(1))
    major = int(match.group(2)) if major == 1 else major
    if major < MIN_JAVA:
        raise JavaNotFound(f"Java {major} at {java} is too old for Spark 3.5 (need {MIN_JAVA}-{MAX_JAVA}): {JAVA_HINT}")
    return major


@dataclass(frozen=True)
class SparkOptions:
    """Settings shared by every family's application (fairness: the same everywhere)."""

    master: str = "local[*]"
    driver_memory: str = "2g"
    shuffle_partitions: int = 8
    extra_conf: tuple[tuple[str, str], ...] = ()

    def base_conf(self, family: str) -> dict[str, str]:
        conf = {
            "spark.master": self.master,
            "spark.app.name": f"cowmor-{family}",
            "spark.driver.memory": self.driver_memory,
            "spark.sql.shuffle.partitions": str(self.shuffle_partitions),
            # Delta replays its log with a shuffle of its own (default 50 partitions, sized for clusters): the same
            # shared count applies to it, or each first read after a commit pays ~3x on a laptop (README, fairness)
            "spark.databricks.delta.snapshotPartitions": str(self.shuffle_partitions),
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.parquet.compression.codec": "snappy",
            "spark.sql.adaptive.enabled": "true",
            # peak memory per operation: executors sample their metrics this often (every task's end carries its peak)
            "spark.executor.metrics.pollingInterval": MEMORY_POLLING_INTERVAL,
            "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{LOG4J2}",
            "spark.executor.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{LOG4J2}",
        }
        for key, value in self.extra_conf:  # a user's JVM options come after cowmor's logging, not instead of it
            conf[key] = f"{conf[key]} {value}" if key in JAVA_OPTION_KEYS else value
        return conf


def memory_mb(size: str) -> float | None:
    """A JVM memory size in MB, None where it is not one: ``2g`` and ``2048m`` are the same application."""
    found = resident.jvm_size_bytes(size)
    return found / 2**20 if found is not None else None


JAVA_OPTION_KEYS = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")
LIST_KEYS = ("spark.jars", "spark.jars.packages", "spark.jars.repositories", "spark.sql.extensions")


def merge_conf(user: dict[str, str], family: dict[str, str]) -> dict[str, str]:
    """The family's settings win, except comma-separated lists, which are joined (user's jars + the family's)."""
    merged = user | family
    for key in LIST_KEYS:
        if key in user and key in family and user[key] != family[key]:
            merged[key] = ",".join(dict.fromkeys(filter(None, (user[key] + "," + family[key]).split(","))))
    return merged


@dataclass
class SparkApps:
    """Hands out the Spark session of a family, stopping the previous family's JVM first."""

    options: SparkOptions
    family: str | None = None
    session: SparkSession | None = None
    conf: dict[str, str] = field(default_factory=dict)

    def running(self, family: str, driver_memory: str | None = None) -> bool:
        """The family's application is up, with ``driver_memory`` (default: the run's): started, and its JVM alive
        (one that ran out of memory or was killed is stopped by ``get`` and started again, so one test's crash does
        not take the rest of the run with it)."""
        if self.family != family or self.session is None or \
                memory_mb(self.conf.get("spark.driver.memory", "")) != memory_mb(driver_memory or self.options.driver_memory):
            return False
        try:
            return not self.session.sparkContext._jsc.sc().isStopped()
        except Exception:  # noqa: BLE001 - any error reaching the JVM means it is gone
            return False

    def get(self, family: str, family_conf: dict[str, str], driver_memory: str | None = None) -> SparkSession:
        """The family's session; with ``driver_memory``, an application given that much instead of the run's."""
        if self.running(family, driver_memory):
            assert self.session is not None
            return self.session
        self.stop()
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1") if self.options.master.startswith("local") else None
        # Python workers run this interpreter, not whatever python3 comes first on PATH (pyspark's default);
        # a cluster whose nodes keep Python elsewhere sets spark.pyspark.python, which takes precedence
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        from pyspark.sql import SparkSession

        conf = merge_conf(self.options.base_conf(family), family_conf)
        if driver_memory:
            conf["spark.driver.memory"] = driver_memory
        builder = SparkSession.builder
        for key, value in conf.items():
            builder = builder.config(key, value)
        self.session = builder.getOrCreate()
        stopping.reclaim_sigint()  # pyspark's context took Ctrl-C for itself: the run must still stop on it
        self.session.sparkContext.setLogLevel("ERROR")
        self.family, self.conf = family, conf
        return self.session

    def stop(self) -> None:
        """Stop the session and its JVM, so the next family starts with a clean classpath."""
        if self.session is None:
            return
        from py4j.protocol import Py4JError
        from pyspark import SparkContext

        try:
            self.session.stop()
        except (Py4JError, OSError):  # the JVM is already gone (a signal, a crash): what is left is cleaned up below
            pass
        gateway = SparkContext._gateway
        if gateway is not None:
            proc = getattr(gateway, "proc", None)
            gateway.shutdown()
            if proc is not None:
                proc.stdin.close()  # the JVM exits on EOF of its stdin
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
        # pyspark's process-wide handles: a context that died without stop() finishing stays "active", and the next
        # getOrCreate would hand it out again (no JVM behind it)
        SparkContext._gateway = None
        SparkContext._jvm = None
        SparkContext._active_spark_context = None
        from pyspark.sql import SparkSession
        SparkSession._instantiatedSession = None
        SparkSession._activeSession = None
        self.session, self.family = None, None

    def versions(self) -> dict[str, str]:
        """The running JVM's versions; none where it is gone (a signal stopped it): the run's record is still written."""
        if self.session is None:
            return {}
        from py4j.protocol import Py4JError

        try:
            jvm = self.session.sparkContext._jvm
            return {"spark": self.session.version, "java": jvm.java.lang.System.getProperty("java.version"),
                    "scala": jvm.scala.util.Properties.versionNumberString()}
        except (Py4JError, OSError):
            return {}


if __name__ == "__main__":  # `python -m bench.run.spark`: the Makefile's one-line Java check
    import sys

    try:
        print(f"java {java_version()}: ok")
    except JavaNotFound as err:
        print(f"cowmor: {err}", file=sys.stderr)
        sys.exit(1)
