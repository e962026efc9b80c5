"""Where each format family's jars come from: a folder you name, the official jars `make jars` fetched from Maven
Central, a PyPI package, the Ivy cache, or Spark's own Maven resolution (in that order)."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import socket
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from bench.exceptions import BadArtifact, MissingArtifact

JARS_DIR_ENV = "COWMOR_JARS_DIR"
MAVEN_JARS_ENV = "COWMOR_MAVEN_JARS_DIR"  # where `make jars` put the official artifacts (default: MAVEN_JARS_DIR)
SPARK_LINE = "3.5"
SCALA_LINE = "2.12"  # pyspark 3.5's own line; a jar for another line fails at the first call into it
OFFLINE_ENV = "COWMOR_OFFLINE"  # "1": never try Maven (no network probe)
MAVEN_CENTRAL = "https://repo1.maven.org/maven2/"


@dataclass(frozen=True)
class Artifact:
    group: str
    name: str
    version: str

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.name}:{self.version}"

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.version}.jar"


ICEBERG_VERSION, DELTA_VERSION, HUDI_VERSION = "1.10.2", "3.3.2", "1.1.1"

FAMILY_ARTIFACTS: dict[str, tuple[Artifact, ...]] = {
    "iceberg": (Artifact("org.apache.iceberg", "iceberg-spark-runtime-3.5_2.12", ICEBERG_VERSION),),
    "delta": (Artifact("io.delta", "delta-spark_2.12", DELTA_VERSION), Artifact("io.delta", "delta-storage", DELTA_VERSION)),
    "hudi": (Artifact("org.apache.hudi", "hudi-spark3.5-bundle_2.12", HUDI_VERSION),),
}

# Beside the formats, the jars a run may need that Spark does not ship: Hadoop's S3A connector for pyspark's own
# Hadoop 3.3.4 client with the AWS SDK bundle that hadoop-aws 3.3.4 declares, and the PostgreSQL JDBC driver for
# Iceberg's JDBC catalog (several writers).
SUPPORT_ARTIFACTS: tuple[Artifact, ...] = (
    Artifact("org.apache.hadoop", "hadoop-aws", "3.3.4"),
    Artifact("com.amazonaws", "aws-java-sdk-bundle", "1.12.262"),
    Artifact("org.postgresql", "postgresql", "42.7.14"),
)

# The official artifacts per Spark line, fetched by `make jars` (tools/fetch_jars.py). Spark 4.0 / Scala 2.13 is
# listed so its jars are fetched and checked; the harness runs the 3.5 line.
SPARK_LINE_ARTIFACTS: dict[str, tuple[Artifact, ...]] = {
    "3.5": (*(a for family in FAMILY_ARTIFACTS.values() for a in family), *SUPPORT_ARTIFACTS),
    "4.0": (Artifact("org.apache.iceberg", "iceberg-spark-runtime-4.0_2.13", ICEBERG_VERSION),
            Artifact("io.delta", "delta-spark_2.13", "4.0.1"), Artifact("io.delta", "delta-storage", "4.0.1"),
            Artifact("org.apache.hudi", "hudi-spark4.0-bundle_2.13", HUDI_VERSION), *SUPPORT_ARTIFACTS),
}
MAVEN_JARS_DIR = Path(__file__).resolve().parents[2] / ".cowmor-jars" / "maven"


def maven_jars_dir(line: str = SPARK_LINE) -> Path:
    """The folder `make jars` fills with the official artifacts of one Spark line."""
    root = Path(os.environ[MAVEN_JARS_ENV]) if os.environ.get(MAVEN_JARS_ENV) else MAVEN_JARS_DIR
    return root / f"spark-{line}"

# PyPI packages that ship a family's jars (package module -> folder inside it). The pin matters:
# snowpark-connect-deps-iceberg 1.0.3 ships a stripped runtime jar (see shared/DESIGN.md).
PYPI_JAR_PACKAGES: dict[str, tuple[str, str, str]] = {
    "iceberg": ("snowpark_connect_deps_iceberg", "jars", "snowpark-connect-deps-iceberg==1.0.2"),
}


@dataclass(frozen=True)
class Resolution:
    """How a family's jars reach Spark: local jar paths (``spark.jars``) or Maven coordinates (``spark.jars.packages``)."""

    family: str
    source: str
    jars: tuple[Path, ...] = ()
    packages: tuple[str, ...] = ()
    repositories: tuple[str, ...] = field(default=())

    def spark_conf(self) -> dict[str, str]:
        conf: dict[str, str] = {}
        if self.jars:
            conf["spark.jars"] = ",".join(str(p) for p in self.jars)
        if self.packages:
            conf["spark.jars.packages"] = ",".join(self.packages)
        if self.repositories:
            conf["spark.jars.repositories"] = ",".join(self.repositories)
        return conf

    def as_dict(self) -> dict[str, object]:
        """What a result needs to be traced to its jars: where they came from and each file's sha256."""
        files = list(self.jars) or [p for p in map(_ivy_jar, self.packages) if p.is_file()]
        return {"family": self.family, "source": self.source, "jars": [str(p) for p in self.jars],
                "sha256": {p.name: sha256(p) for p in files},
                "packages": list(self.packages), "repositories": list(self.repositories)}


@functools.lru_cache(maxsize=32)
def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# Constant-pool names only one Scala line's compiler emits (collections were redesigned in 2.13).
_SCALA_MARKERS = {"2.12": (b"scala/collection/TraversableOnce", b"scala/collection/GenTraversableOnce"),
                  "2.13": (b"scala/collection/IterableOnce", b"scala/collection/immutable/ArraySeq")}


def scala_line(path: Path) -> str | None:
    """The Scala line the jar's classes were compiled for (None: no Scala class, e.g. a pure Java jar).

    Raises:
        BadArtifact: the file is not a readable jar (zip) archive.
    """
    try:
        with zipfile.ZipFile(path) as jar:
            for info in jar.infolist():
                if info.filename.endswith(".class"):
                    code = jar.read(info)
                    for line, markers in _SCALA_MARKERS.items():
                        if any(m in code for m in markers):
                            return line
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        raise BadArtifact(f"{path} is not a usable jar ({err}); replace it with the published artifact") from None
    return None


def check_jar(path: Path) -> None:
    """Fail before Spark starts, in one line naming the file, on a broken jar or one for another Scala line.

    Raises:
        BadArtifact: not a zip archive, or compiled for a Scala line other than ``SCALA_LINE``.
    """
    line = scala_line(path)
    if line is not None and line != SCALA_LINE:
        raise BadArtifact(f"{path} was built for Scala {line}, but Spark here runs Scala {SCALA_LINE}; "
                          f"use the _{SCALA_LINE} artifact")


def _from_dir(artifacts: tuple[Artifact, ...], jars_dir: Path) -> tuple[list[Path], list[str]]:
    found, notes = [], []
    for artifact in artifacts:
        path = jars_dir / artifact.filename
        if path.is_file():
            check_jar(path)
            found.append(path)
        else:
            others = sorted(p.name for p in jars_dir.glob(f"{artifact.name}-*.jar"))
            if others:
                notes.append(f"{jars_dir} has {', '.join(others)} but not {artifact.filename}")
    return found, notes


def _from_pypi(family: str, artifacts: tuple[Artifact, ...]) -> list[Path] | None:
    if family not in PYPI_JAR_PACKAGES:
        return None
    module, folder, _ = PYPI_JAR_PACKAGES[family]
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    jar_dir = Path(next(iter(spec.submodule_search_locations))) / folder
    found, _ = _from_dir(artifacts, jar_dir)
    return found if len(found) == len(artifacts) else None


def _ivy_jar(coordinate: str, ivy_home: Path | None = None) -> Path:
    """Where Spark's Ivy resolution leaves a package's jar (``~/.ivy2/jars/<group>_<name>-<version>.jar``)."""
    group, name, version = coordinate.split(":")
    return (ivy_home or Path.home() / ".ivy2") / "jars" / f"{group}_{name}-{version}.jar"


def _ivy_cached(artifact: Artifact, ivy_home: Path) -> bool:
    return (ivy_home / "cache" / artifact.group / artifact.name / "jars" / artifact.filename).is_file() or \
        (ivy_home / "jars" / f"{artifact.group}_{artifact.filename}").is_file()


@functools.lru_cache(maxsize=8)
def maven_reachable(repository: str = MAVEN_CENTRAL, timeout: float = 3.0) -> tuple[bool, str]:
    """Can we open a TCP connection to the repository? (Spark's Ivy resolution needs it.)"""
    if os.environ.get(OFFLINE_ENV) == "1":
        return False, f"{OFFLINE_ENV}=1"
    url = urlparse(repository)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=timeout):
            return True, "reachable"
    except OSError as err:
        return False, f"{url.hostname}:{port} unreachable ({err.strerror or err})"


def resolve(family: str, jars_dir: Path | None = None, maven_repository: str = MAVEN_CENTRAL,
            ivy_home: Path | None = None) -> Resolution:
    """Find the jars for ``family``: ``jars_dir`` (or $COWMOR_JARS_DIR), a PyPI package, the Ivy cache, Maven.

    Raises:
        MissingArtifact: nothing works; the message names every artifact and how to provide it.
    """
    artifacts = FAMILY_ARTIFACTS[family]
    tried: list[str] = []
    jars_dir = jars_dir or (Path(os.environ[JARS_DIR_ENV]) if os.environ.get(JARS_DIR_ENV) else None)
    if jars_dir is not None:
        found, notes = _from_dir(artifacts, jars_dir)
        if len(found) == len(artifacts):
            return Resolution(family, f"jars-dir:{jars_dir}", jars=tuple(found))
        tried.append(f"not in {jars_dir}" + (f" ({'; '.join(notes)})" if notes else ""))
    else:
        tried.append(f"no --jars-dir/${JARS_DIR_ENV}")
    official = maven_jars_dir()
    found, notes = _from_dir(artifacts, official) if official.is_dir() else ([], [])
    if len(found) == len(artifacts):
        return Resolution(family, f"maven-central:{official}", jars=tuple(found))
    tried.append(f"not in {official} (make jars)" + (f" ({'; '.join(notes)})" if notes else ""))
    pypi = _from_pypi(family, artifacts)
    if pypi:
        return Resolution(family, f"pypi:{PYPI_JAR_PACKAGES[family][2]}", jars=tuple(pypi))
    if family in PYPI_JAR_PACKAGES:
        tried.append(f"PyPI package {PYPI_JAR_PACKAGES[family][2]} not installed")
    else:
        tried.append("no PyPI package ships them")
    coordinates = tuple(a.coordinate for a in artifacts)
    repositories = () if maven_repository == MAVEN_CENTRAL else (maven_repository,)
    ivy_home = ivy_home or Path.home() / ".ivy2"
    if all(_ivy_cached(a, ivy_home) for a in artifacts):
        return Resolution(family, f"ivy-cache:{ivy_home}", packages=coordinates, repositories=repositories)
    ok, why = maven_reachable(maven_repository)
    if ok:
        return Resolution(family, f"maven:{maven_repository}", packages=coordinates, repositories=repositories)
    tried.append(f"Maven {why}")
    files = ", ".join(a.filename for a in artifacts)
    raise MissingArtifact(
        f"{family}: missing {', '.join(coordinates)} — {'; '.join(tried)}. Provide them with --jars-dir DIR "
        f"(or ${JARS_DIR_ENV}) holding {files}, fetch them with `make jars`, or run where Maven is reachable "
        "(spark.jars.packages)")
