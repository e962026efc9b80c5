"""The catalog and lock servers several writers need: started on loopback, stopped, and gone when the run is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.exceptions import BadOption, MissingArtifact
from bench.servers import coordination
from bench.servers.daemons import group_alive, sweep

STARTER = """
import sys, time
from pathlib import Path
from bench.servers.coordination import Coordination
c = Coordination(Path(sys.argv[1]))
print(c.catalog().uri, c.catalog()._proc.pid, c.lock()._proc.pid, c.catalog()._data_dir, c.lock()._data_dir, flush=True)
time.sleep(600)
"""


def _alive(pattern: str) -> str:
    return subprocess.run(["pgrep", "-af", pattern], capture_output=True, text=True).stdout.strip()


@pytest.mark.spark  # ZooKeeper's server is a JVM
def test_a_killed_run_leaves_no_postgres_or_zookeeper_behind(tmp_path):
    try:
        coordination.postgres_bin_dir()
    except MissingArtifact as why:
        pytest.skip(str(why))
    proc = subprocess.Popen([sys.executable, "-c", STARTER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().split()
    assert line and line[0].startswith("jdbc:postgresql://127.0.0.1:"), line
    groups = [int(line[1]), int(line[2])]  # each server leads its own process group
    assert all(group_alive(g) for g in groups)
    os.kill(proc.pid, signal.SIGKILL)  # no finally, no atexit: only the parent-death signal is left
    proc.wait()
    deadline = time.monotonic() + 30
    while any(group_alive(g) for g in groups) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not any(group_alive(g) for g in groups), _alive("cowmor-postgres-|cowmor-zookeeper-")
    folders = [Path(line[3]), Path(line[4])]
    sweep()  # the servers are gone; their data folders go with the next start's sweep (or another run's, sooner)
    assert not any(f.exists() for f in folders), folders


def test_user_servers_start_nothing_and_bad_addresses_fail_in_one_line(monkeypatch):
    monkeypatch.setattr(coordination, "maven_reachable", lambda repository=None: (True, "reachable"))  # wherever the driver is absent
    c = coordination.Coordination(Path("/nonexistent"), catalog_uri="jdbc:postgresql://db:5432/x", zookeeper="zk:2181")
    assert c.catalog().kind == "user PostgreSQL" and c.lock().port == 2181
    assert c.record()["hudi_lock"] == {"kind": "user ZooKeeper", "connect": "zk:2181"}
    with pytest.raises(BadOption, match="jdbc:postgresql"):
        coordination.user_catalog("postgres://db/x")
    with pytest.raises(BadOption, match="host:port"):
        coordination.user_zookeeper("zk")


def test_the_jdbc_driver_comes_from_the_jars_folder_or_else_maven_or_is_named_as_missing(tmp_path, monkeypatch):
    monkeypatch.delenv("COWMOR_JARS_DIR", raising=False)
    monkeypatch.setenv("COWMOR_MAVEN_JARS_DIR", str(tmp_path / "no-maven-jars"))
    monkeypatch.setattr(coordination, "JDBC_DRIVER_FILES", ())
    monkeypatch.setattr(coordination, "maven_reachable", lambda repository=None: (True, "reachable"))
    assert coordination.jdbc_driver(tmp_path) == {"maven": coordination.JDBC_MAVEN}
    monkeypatch.setattr(coordination, "maven_reachable", lambda repository=None: (False, "COWMOR_OFFLINE=1"))
    with pytest.raises(MissingArtifact, match=r"PostgreSQL JDBC driver: not in .*postgresql-\*\.jar.*libpostgresql-jdbc-java"):
        coordination.jdbc_driver(tmp_path)
    with pytest.raises(MissingArtifact, match="JDBC driver"):  # before a server starts: nothing is left to stop
        coordination.start_postgres(tmp_path / "logs", tmp_path)
    assert not (tmp_path / "logs").exists()
    (tmp_path / "postgresql-42.5.5.jar").write_bytes(b"PK")
    assert list(coordination.jdbc_driver(tmp_path)) == [str((tmp_path / "postgresql-42.5.5.jar").resolve())]


def test_the_jdbc_driver_is_asked_of_the_runs_maven_mirror_not_maven_central(tmp_path, monkeypatch):
    """``--maven-repo``: a user behind a mirror gets the driver from it, and the check asks the mirror."""
    monkeypatch.delenv("COWMOR_JARS_DIR", raising=False)
    monkeypatch.setenv("COWMOR_MAVEN_JARS_DIR", str(tmp_path / "no-maven-jars"))
    monkeypatch.setattr(coordination, "JDBC_DRIVER_FILES", ())
    asked = []
    monkeypatch.setattr(coordination, "maven_reachable", lambda repository: asked.append(repository) or (True, "reachable"))
    mirror = "https://mirror.example/maven2"
    c = coordination.Coordination(tmp_path, tmp_path, maven_repo=mirror)
    assert c.driver() == {"maven": coordination.JDBC_MAVEN, "repository": mirror} and asked == [mirror]


def test_the_catalog_itself_names_a_table_s_current_metadata_file(tmp_path):
    """What an engine other than Spark reads of a JDBC table: the pointer in the catalog's own row (JdbcCatalog's
    iceberg_tables), read from the PostgreSQL the run starts; a table the catalog lacks is an error, not a guess."""
    try:
        catalog = coordination.start_postgres(tmp_path / "logs")
    except MissingArtifact as why:
        pytest.skip(str(why))
    try:
        port = catalog.uri.split(":")[-1].split("/")[0]
        ddl = ("CREATE TABLE iceberg_tables (catalog_name text, table_namespace text, table_name text, "
               "metadata_location text, previous_metadata_location text); "
               "INSERT INTO iceberg_tables VALUES ('cowmor_jdbc', 'bench', 'payments_writers', "
               "'file:/w/iceberg_jdbc/bench/payments_writers/metadata/00003-a.metadata.json', NULL), "
               "('other', 'bench', 'payments_writers', 'file:/elsewhere.json', NULL);")
        psql = coordination.postgres_bin_dir() / "psql"
        subprocess.run([str(psql), "-h", "127.0.0.1", "-p", port, "-U", catalog.user, "-d", coordination.DATABASE,
                        "-c", ddl], check=True, capture_output=True, timeout=30)
        assert catalog.metadata_location("cowmor_jdbc", "bench", "payments_writers") == \
            "file:/w/iceberg_jdbc/bench/payments_writers/metadata/00003-a.metadata.json"
        with pytest.raises(RuntimeError, match="no one metadata file for bench.gone"):
            catalog.metadata_location("cowmor_jdbc", "bench", "gone")
    finally:
        catalog.stop()
