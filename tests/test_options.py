from __future__ import annotations

import argparse
import socket
import subprocess
import sys

import pytest

from bench.exceptions import BadOption
from bench.formats import select_configs
from bench.run.options import (
    check_master_reachable,
    parse_key_value,
    parse_master,
    parse_memory,
    parse_positive_int,
    scale_overrides,
)
from tests.conftest import ROOT


@pytest.mark.parametrize("text", ["local", "local[*]", "local[2]", "spark://h:7077", "yarn", "k8s://https://h:6443"])
def test_master_urls_accepted(text):
    assert parse_master(text) == text


@pytest.mark.parametrize("text", ["", "local[0]", "locl", "http://x"])
def test_master_urls_rejected(text):
    with pytest.raises(argparse.ArgumentTypeError):
        parse_master(text)


def test_parsers():
    assert parse_positive_int("3") == 3
    for bad in ("0", "-1", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_positive_int(bad)
    assert parse_key_value("a.b = c=d") == ("a.b", "c=d")
    with pytest.raises(argparse.ArgumentTypeError):
        parse_key_value("novalue")
    assert parse_memory("2g") == "2g"
    with pytest.raises(argparse.ArgumentTypeError):
        parse_memory("lots")
    with pytest.raises(BadOption):
        scale_overrides([("rounds", 1), ("rounds", 2)])


def test_formats_selection():
    assert [c.id for c in select_configs("iceberg")] == ["iceberg-cow", "iceberg-mor", "iceberg-dv"]
    assert len(select_configs("all")) == 7
    assert [c.id for c in select_configs("delta-dv,iceberg-cow")] == ["iceberg-cow", "delta-dv"]
    with pytest.raises(BadOption, match="unknown format"):
        select_configs("iceberg,parquet")


def test_unreachable_master_fails_fast():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(BadOption, match="cannot be reached"):
        check_master_reachable(f"spark://127.0.0.1:{port}", timeout=1)
    check_master_reachable("local[2]")


def _pytest(*args: str, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider"], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_help_lists_the_options():
    out = _pytest("--help").stdout
    for option in ("--scale=NAME", "--formats=LIST", "--spark-master=URL", "--warehouse=PATH", "--jars-dir=DIR",
                   "--param=NAME=VALUE", "--spark-conf=KEY=VALUE", "--benchmark-json"):
        assert option in out


@pytest.mark.parametrize("args, message", [
    (["--scale", "huge"], "invalid choice: 'huge'"),
    (["--formats", "parquet"], "unknown format or configuration 'parquet'"),
    (["--param", "rounds=0"], "must be a positive integer"),
    (["--spark-master", "spark://127.0.0.1:1"], "cannot be reached"),
    (["--warehouse", "/"], "refusing"),
])
def test_bad_options_stop_before_any_work(args, message, tmp_path):
    proc = _pytest("scenarios", "--collect-only", "--results-dir", str(tmp_path), *args)
    assert proc.returncode != 0
    assert message in proc.stderr + proc.stdout
    assert not any(tmp_path.iterdir())  # nothing was recorded


def test_cli_rejects_bad_options_in_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "bench", "run", "--formats", "parquet", "--results-dir", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "unknown format" in proc.stderr


def test_java_missing_or_too_old_is_one_line(tmp_path, monkeypatch):
    from bench.exceptions import JavaNotFound
    from bench.run.spark import java_version

    fake = tmp_path / "jdk8" / "bin"
    fake.mkdir(parents=True)
    (fake / "java").write_text('#!/bin/sh\necho \'openjdk version "1.8.0_392"\' >&2\n')
    (fake / "java").chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(fake.parent))
    with pytest.raises(JavaNotFound, match="Java 8 .* too old.*openjdk-17") as err:
        java_version()
    assert "\n" not in str(err.value)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "none"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(JavaNotFound, match="Java not found.*install OpenJDK 17"):
        java_version()


def test_a_users_jvm_options_join_cowmors_logging_and_other_settings_replace():
    from bench.run.spark import LOG4J2, SparkOptions

    conf = SparkOptions(extra_conf=(("spark.driver.extraJavaOptions", "-XX:+UseParallelGC"),
                                    ("spark.sql.adaptive.enabled", "false"))).base_conf("iceberg")
    assert conf["spark.driver.extraJavaOptions"] == f"-Dlog4j2.configurationFile=file:{LOG4J2} -XX:+UseParallelGC"
    assert conf["spark.executor.extraJavaOptions"] == f"-Dlog4j2.configurationFile=file:{LOG4J2}"
    assert conf["spark.sql.adaptive.enabled"] == "false"


def test_the_writers_route_is_one_route_a_writer_can_take():
    import argparse

    from bench.run.options import parse_scale_param

    assert parse_scale_param("writer_route=join") == ("writer_route", "join")
    assert parse_scale_param("writer_route=pruned") == ("writer_route", "pruned")
    for bad in ("writer_route=index", "writer_route=join,pruned"):
        with pytest.raises(argparse.ArgumentTypeError, match="writer_route: .* one of pruned, join"):
            parse_scale_param(bad)


def test_a_benchmark_test_is_not_cut_by_the_suites_timeout_but_a_given_one_still_holds(tmp_path):
    """The seeds' interleaved join holds a family's every round in its first test: the suite's 1800 s timeout
    stopped it at 30 minutes. `run` turns the ini's timeout off; `--timeout N` given after `--` still applies."""
    from bench.cli import NO_TEST_TIMEOUT

    (tmp_path / "pytest.ini").write_text("[pytest]\ntimeout = 1\n")
    (tmp_path / "test_long.py").write_text("import time\n\ndef test_long():\n    time.sleep(3)\n")

    def run(*extra: str) -> int:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path),
                               "-c", str(tmp_path / "pytest.ini"), *extra], capture_output=True, cwd=tmp_path).returncode

    assert run() == 1  # the ini's timeout: the test fails
    assert run(*NO_TEST_TIMEOUT) == 0
    assert run(*NO_TEST_TIMEOUT, "--timeout", "1") == 1
