from __future__ import annotations

import pytest

from bench import artifacts
from bench.exceptions import MissingArtifact


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    monkeypatch.delenv(artifacts.JARS_DIR_ENV, raising=False)
    monkeypatch.setattr(artifacts, "maven_reachable", lambda repo=None: (False, "repo1.maven.org:443 unreachable (test)"))
    return tmp_path


def _touch(folder, *names):
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"PK")


def test_jars_dir_first(tmp_path):
    _touch(tmp_path, "delta-spark_2.12-3.3.2.jar", "delta-storage-3.3.2.jar")
    res = artifacts.resolve("delta", tmp_path, ivy_home=tmp_path / "ivy")
    assert res.source.startswith("jars-dir") and len(res.jars) == 2
    assert res.spark_conf()["spark.jars"].count(".jar") == 2


def test_jars_dir_from_environment(tmp_path, monkeypatch):
    _touch(tmp_path, "hudi-spark3.5-bundle_2.12-1.0.2.jar")
    monkeypatch.setenv(artifacts.JARS_DIR_ENV, str(tmp_path))
    assert artifacts.resolve("hudi", ivy_home=tmp_path / "ivy").source.startswith("jars-dir")


def test_pypi_package_ships_iceberg(tmp_path):
    res = artifacts.resolve("iceberg", None, ivy_home=tmp_path / "ivy")
    assert res.source == "pypi:snowpark-connect-deps-iceberg==1.0.2"
    assert res.jars[0].name == "iceberg-spark-runtime-3.5_2.12-1.10.2.jar" and res.jars[0].stat().st_size > 10_000_000


def test_ivy_cache_then_maven(tmp_path, monkeypatch):
    ivy = tmp_path / "ivy"
    _touch(ivy / "cache/org.apache.hudi/hudi-spark3.5-bundle_2.12/jars", "hudi-spark3.5-bundle_2.12-1.0.2.jar")
    res = artifacts.resolve("hudi", None, ivy_home=ivy)
    assert res.source.startswith("ivy-cache") and res.packages == ("org.apache.hudi:hudi-spark3.5-bundle_2.12:1.0.2",)
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
