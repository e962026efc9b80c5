from __future__ import annotations

import hashlib
import zipfile

import pytest

from bench.exceptions import BadArtifact, MissingArtifact
from bench.servers import artifacts


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    monkeypatch.delenv(artifacts.JARS_DIR_ENV, raising=False)
    monkeypatch.setenv(artifacts.MAVEN_JARS_ENV, str(tmp_path / "no-maven-jars"))
    monkeypatch.setattr(artifacts, "maven_reachable", lambda repo=None: (False, "repo1.maven.org:443 unreachable (test)"))
    return tmp_path


def _touch(folder, *names, classes: dict[str, bytes] | None = None):
    """Write real (small) jar files: zip archives holding ``classes``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        with zipfile.ZipFile(folder / name, "w") as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
            for entry, code in (classes or {}).items():
                jar.writestr(entry, code)


def test_official_jars_after_jars_dir_before_pypi(tmp_path, monkeypatch):
    """`make jars` fills .cowmor-jars/maven/spark-3.5; a folder the user names still wins over it."""
    official = tmp_path / "no-maven-jars" / "spark-3.5"
    _touch(official, "iceberg-spark-runtime-3.5_2.12-1.10.2.jar", "delta-spark_2.12-3.3.2.jar", "delta-storage-3.3.2.jar")
    res = artifacts.resolve("iceberg", None, ivy_home=tmp_path / "ivy")
    assert res.source == f"maven-central:{official}" and res.jars == (official / "iceberg-spark-runtime-3.5_2.12-1.10.2.jar",)
    mine = tmp_path / "mine"
    _touch(mine, "delta-spark_2.12-3.3.2.jar", "delta-storage-3.3.2.jar")
    assert artifacts.resolve("delta", mine, ivy_home=tmp_path / "ivy").source == f"jars-dir:{mine}"
    with pytest.raises(MissingArtifact, match="make jars"):
        artifacts.resolve("hudi", None, ivy_home=tmp_path / "ivy")


def test_every_spark_line_lists_each_family_and_the_support_jars():
    for line, wanted in artifacts.SPARK_LINE_ARTIFACTS.items():
        names = {a.name for a in wanted}
        assert {"hadoop-aws", "aws-java-sdk-bundle", "postgresql", "delta-storage"} <= names, line
        assert any(n.startswith("iceberg-spark-runtime-") for n in names) and any(n.startswith("hudi-spark") for n in names)
    assert set(artifacts.FAMILY_ARTIFACTS["delta"]) <= set(artifacts.SPARK_LINE_ARTIFACTS[artifacts.SPARK_LINE])


def test_jars_dir_first(tmp_path):
    _touch(tmp_path, "delta-spark_2.12-3.3.2.jar", "delta-storage-3.3.2.jar")
    res = artifacts.resolve("delta", tmp_path, ivy_home=tmp_path / "ivy")
    assert res.source.startswith("jars-dir") and len(res.jars) == 2
    assert res.spark_conf()["spark.jars"].count(".jar") == 2


def test_jars_dir_from_environment(tmp_path, monkeypatch):
    _touch(tmp_path, "hudi-spark3.5-bundle_2.12-1.1.1.jar")
    monkeypatch.setenv(artifacts.JARS_DIR_ENV, str(tmp_path))
    assert artifacts.resolve("hudi", ivy_home=tmp_path / "ivy").source.startswith("jars-dir")


def test_pypi_package_ships_iceberg(tmp_path):
    res = artifacts.resolve("iceberg", None, ivy_home=tmp_path / "ivy")
    assert res.source == "pypi:snowpark-connect-deps-iceberg==1.0.2"
    assert res.jars[0].name == "iceberg-spark-runtime-3.5_2.12-1.10.2.jar" and res.jars[0].stat().st_size > 10_000_000


def test_ivy_cache_then_maven(tmp_path, monkeypatch):
    ivy = tmp_path / "ivy"
    _touch(ivy / "cache/org.apache.hudi/hudi-spark3.5-bundle_2.12/jars", "hudi-spark3.5-bundle_2.12-1.1.1.jar")
    res = artifacts.resolve("hudi", None, ivy_home=ivy)
    assert res.source.startswith("ivy-cache") and res.packages == ("org.apache.hudi:hudi-spark3.5-bundle_2.12:1.1.1",)
    monkeypatch.setattr(artifacts, "maven_reachable", lambda repo=None: (True, "reachable"))
    res = artifacts.resolve("delta", None, "https://mirror.example/maven2/", ivy_home=tmp_path / "empty")
    assert res.source.startswith("maven:") and res.spark_conf()["spark.jars.packages"] == \
        "io.delta:delta-spark_2.12:3.3.2,io.delta:delta-storage:3.3.2"
    assert res.spark_conf()["spark.jars.repositories"] == "https://mirror.example/maven2/"


def test_offline_error_names_artifacts_and_remedies(tmp_path):
    _touch(tmp_path, "delta-spark_2.12-3.2.0.jar")
    with pytest.raises(MissingArtifact) as err:
        artifacts.resolve("delta", tmp_path, ivy_home=tmp_path / "ivy")
    message = str(err.value)
    assert "\n" not in message
    for needle in ("io.delta:delta-spark_2.12:3.3.2", "io.delta:delta-storage:3.3.2", "--jars-dir", "COWMOR_JARS_DIR",
                   "delta-spark_2.12-3.2.0.jar", "Maven", "spark.jars.packages"):
        assert needle in message


def test_offline_env_skips_the_network(monkeypatch):
    monkeypatch.undo()
    monkeypatch.setenv(artifacts.OFFLINE_ENV, "1")
    artifacts.maven_reachable.cache_clear()
    assert artifacts.maven_reachable("https://repo1.maven.org/maven2/") == (False, "COWMOR_OFFLINE=1")


def test_sha256_of_every_jar_is_recorded(tmp_path):
    _touch(tmp_path, "delta-spark_2.12-3.3.2.jar", "delta-storage-3.3.2.jar")
    recorded = artifacts.resolve("delta", tmp_path, ivy_home=tmp_path / "ivy").as_dict()
    assert recorded["sha256"] == {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in tmp_path.glob("*.jar")}
    pypi = artifacts.resolve("iceberg", None, ivy_home=tmp_path / "ivy").as_dict()
    assert len(pypi["sha256"]["iceberg-spark-runtime-3.5_2.12-1.10.2.jar"]) == 64


def test_a_file_that_is_not_a_jar_fails_in_one_line_naming_it(tmp_path):
    _touch(tmp_path, "delta-storage-3.3.2.jar")
    (tmp_path / "delta-spark_2.12-3.3.2.jar").write_text("<html>404 Not Found</html>")
    with pytest.raises(BadArtifact) as err:
        artifacts.resolve("delta", tmp_path, ivy_home=tmp_path / "ivy")
    assert isinstance(err.value, MissingArtifact)  # so the family is skipped with this message, others still run
    assert "delta-spark_2.12-3.3.2.jar is not a usable jar" in str(err.value) and "\n" not in str(err.value)


def test_a_jar_for_scala_2_13_fails_in_one_line_naming_it(tmp_path):
    # a class compiled by scalac 2.13 names the 2.13 collections in its constant pool
    _touch(tmp_path, "hudi-spark3.5-bundle_2.12-1.1.1.jar",
           classes={"org/apache/hudi/Example.class": b"\xca\xfe\xba\xbe...scala/collection/IterableOnce..."})
    with pytest.raises(BadArtifact, match=r"hudi-spark3.5-bundle_2.12-1.1.1.jar was built for Scala 2.13, .*Scala 2.12"):
        artifacts.resolve("hudi", tmp_path, ivy_home=tmp_path / "ivy")


def test_real_jars_are_recognised_as_scala_2_12(tmp_path):
    iceberg = artifacts.resolve("iceberg", None, ivy_home=tmp_path / "ivy").jars[0]
    assert artifacts.scala_line(iceberg) == "2.12"
