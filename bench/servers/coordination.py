"""The catalog and the lock that several writers in separate Spark applications need, started by the run on loopback.

Iceberg's Hadoop catalog and Hudi's in-process lock are safe only inside one JVM (shared/DESIGN.md, "Several
writers"). Across processes:

- **PostgreSQL** holds Iceberg's JDBC catalog, whose commit is a compare-and-set on the table's metadata pointer.
  The run starts its own server (``initdb`` into a fresh folder, a free port on 127.0.0.1, trust authentication for
  loopback only); as root — CI — the server runs as the ``postgres`` account, for PostgreSQL refuses root. The JDBC
  driver comes from Debian's ``libpostgresql-jdbc-java`` (or ``--jars-dir``), else Maven.
- **ZooKeeper** holds Hudi's lock (``ZookeeperBasedLockProvider``). The server is ZooKeeper's own
  ``ZooKeeperServerMain`` from the ZooKeeper jar pyspark already ships (the same jar carries client and server).

Both are daemons of the run (``daemons.py``): their own process group and data folder, stopped whatever happens,
swept at the next start if the run was killed. ``--catalog-uri`` / ``--zookeeper`` name a user's own servers
instead, and the run starts nothing.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench.exceptions import BadOption, MissingArtifact
from bench.servers.artifacts import MAVEN_CENTRAL, SUPPORT_ARTIFACTS, maven_jars_dir, maven_reachable, sha256
from bench.servers.daemons import LOG4J2, become, free_port, poll, spawn, stop, wait_for_port

JDBC_DRIVER_FILES = ("/usr/share/java/postgresql.jar",)  # Debian/Ubuntu: apt-get install libpostgresql-jdbc-java
JDBC_MAVEN = next(a.coordinate for a in SUPPORT_ARTIFACTS if a.name == "postgresql")
POSTGRES_HINT = ("PostgreSQL's server is not installed (Debian/Ubuntu: apt-get install postgresql; macOS: brew install "
                 "postgresql), or name yours with --catalog-uri jdbc:postgresql://host:port/db")
DATABASE, ROLE = "cowmor_catalog", "cowmor"
SERVER_ACCOUNT = "postgres"  # Debian's account for the server, used when the run is root


def jdbc_driver(jars_dir: Path | None = None, maven_repository: str = MAVEN_CENTRAL) -> dict[str, str]:
    """The PostgreSQL JDBC driver jar: ``jars_dir`` (or $COWMOR_JARS_DIR), the official one `make jars` fetched,
    Debian's package, else the Maven coordinate
    from ``maven_repository`` (``--maven-repo``: a mirror is asked, not Maven Central).

    Raises:
        MissingArtifact: no driver on disk and Maven unreachable (a catalog without its driver fails only later, as
            "No suitable driver" deep in a Java trace).
    """
    folders = [jars_dir] if jars_dir else []
    folders += [Path(os.environ["COWMOR_JARS_DIR"])] if os.environ.get("COWMOR_JARS_DIR") else []
    folders.append(maven_jars_dir())
    candidates = [str(p) for f in folders for p in sorted(Path(f).glob("postgresql-*.jar"))] + list(JDBC_DRIVER_FILES)
    for path in candidates:
        if Path(path).is_file():
            return {str(Path(path).resolve()): sha256(Path(path))}
    reachable, why = maven_reachable(maven_repository)
    if not reachable:
        looked = ", ".join([*(f"{f}/postgresql-*.jar" for f in folders), *JDBC_DRIVER_FILES]) or "nowhere"
        raise MissingArtifact(f"PostgreSQL JDBC driver: not in {looked}, and Maven {why} ({JDBC_MAVEN}); "
                              "Debian/Ubuntu: apt-get install libpostgresql-jdbc-java, or put postgresql-<version>.jar "
                              "in --jars-dir")
    return {"maven": JDBC_MAVEN} | ({} if maven_repository == MAVEN_CENTRAL else {"repository": maven_repository})


def postgres_bin_dir() -> Path:
    """The folder holding ``initdb`` and ``postgres`` (PATH, then Debian's versioned folders).

    Raises:
        MissingArtifact: no PostgreSQL server here.
    """
    for name in ("initdb", "postgres"):
        found = shutil.which(name)
        if found and Path(found).resolve().with_name("postgres").is_file():
            return Path(found).resolve().parent
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(folder) / "initdb").is_file():
            return Path(folder)
    raise MissingArtifact(POSTGRES_HINT)


def _stop_server(proc: subprocess.Popen | None, data_dir: str | None) -> None:
    """Stop a server the run started (its whole process group) and remove its data folder; returns None for its handle."""
    if proc is not None:
        stop(proc)
    if data_dir:
        shutil.rmtree(data_dir, ignore_errors=True)
    return None


@dataclass
class Catalog:
    """Iceberg's JDBC catalog database: where it is, who started it."""

    uri: str
    user: str
    password: str
    kind: str
    driver: dict[str, str]
    _proc: subprocess.Popen | None = field(default=None, repr=False)
    _data_dir: str | None = None

    def iceberg_properties(self) -> dict[str, str]:
        """The catalog's JDBC properties as Iceberg names them (``JdbcCatalog``: ``uri``, ``jdbc.*``)."""
        return {"catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog", "uri": self.uri, "jdbc.user": self.user,
                "jdbc.password": self.password}

    def record(self) -> dict[str, object]:
        return {"kind": self.kind, "uri": self.uri, "jdbc_driver": self.driver}

    def metadata_location(self, catalog_name: str, namespace: str, table: str) -> str:
        """A table's current metadata file as the catalog itself holds it (``JdbcCatalog``'s ``iceberg_tables`` row),
        read with ``psql``: what an engine that follows the catalog reads, not what one Spark session saw.

        Raises:
            RuntimeError: the catalog has no such table, or ``psql`` failed.
        """
        match = re.fullmatch(r"jdbc:postgresql://([^:/]+)(?::(\d+))?/([^?]+).*", self.uri)
        if not match:
            raise RuntimeError(f"not a PostgreSQL JDBC URL: {self.uri}")
        host, port, database = match[1], match[2] or "5432", match[3]
        sql = ("SELECT metadata_location FROM iceberg_tables WHERE catalog_name = :'c' AND table_namespace = :'n' "
               "AND table_name = :'t'")
        done = subprocess.run([str(postgres_bin_dir() / "psql"), "-h", host, "-p", port, "-U", self.user, "-d", database,
                               "-At", "-v", f"c={catalog_name}", "-v", f"n={namespace}", "-v", f"t={table}"],
                              input=sql, capture_output=True, text=True, timeout=30,
                              env={**os.environ, "PGPASSWORD": self.password})
        rows = done.stdout.split()
        if done.returncode != 0 or len(rows) != 1:
            raise RuntimeError(f"the catalog holds no one metadata file for {namespace}.{table}: "
                               f"{(done.stderr.strip() or done.stdout.strip())[:200] or 'no row'}")
        return rows[0]

    def stop(self) -> None:
        self._proc = _stop_server(self._proc, self._data_dir)


def start_postgres(log_dir: Path, jars_dir: Path | None = None, maven_repository: str = MAVEN_CENTRAL) -> Catalog:
    """A PostgreSQL server of the run's own: a fresh cluster, a free loopback port, the catalog database created."""
    driver = jdbc_driver(jars_dir, maven_repository)  # before the server starts: a missing driver leaves nothing to stop
    bin_dir = postgres_bin_dir()
    user = SERVER_ACCOUNT if os.geteuid() == 0 else None
    if user is not None:
        try:
            entry = pwd.getpwnam(user)
        except KeyError:
            raise MissingArtifact(f"running as root, the PostgreSQL server needs the '{user}' account "
                                  "(Debian's postgresql package creates it)") from None
    data = tempfile.mkdtemp(prefix="cowmor-postgres-")
    if user is not None:
        os.chown(data, entry.pw_uid, entry.pw_gid)
    log_dir.mkdir(parents=True, exist_ok=True)
    init = subprocess.run([str(bin_dir / "initdb"), "-D", data, "-U", ROLE, "--auth=trust", "--no-sync", "-E", "UTF8"],
                          capture_output=True, text=True, preexec_fn=become(user), timeout=120)
    if init.returncode != 0:
        shutil.rmtree(data, ignore_errors=True)
        raise MissingArtifact(f"initdb failed: {(init.stderr or init.stdout).strip().splitlines()[-1][:200]}")
    port = free_port()
    proc = spawn([str(bin_dir / "postgres"), "-D", data, "-h", "127.0.0.1", "-p", str(port), "-k", data,
                  "-c", "fsync=off", "-c", "max_connections=200"], log_dir / "postgres.log", user=user, data_dir=data)
    version = subprocess.run([str(bin_dir / "postgres"), "--version"], capture_output=True, text=True).stdout.strip()
    catalog = Catalog(f"jdbc:postgresql://127.0.0.1:{port}/{DATABASE}", ROLE, "", f"{version} (started by the run, "
                      "loopback)", driver, proc, data)
    try:
        wait_for_port(port, "PostgreSQL", proc)
        _create_database(bin_dir, port)
    except BaseException:
        catalog.stop()
        raise
    return catalog


def _create_database(bin_dir: Path, port: int, timeout: float = 60.0) -> None:
    """``createdb`` once the server accepts connections (it listens before it has finished starting)."""
    last = [""]

    def created() -> bool:
        done = subprocess.run([str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", ROLE, DATABASE],
                              capture_output=True, text=True, timeout=30)
        last[0] = done.stderr.strip()
        return done.returncode == 0

    if not poll(created, timeout, interval=0.3):
        raise BadOption(f"PostgreSQL on port {port} did not create the catalog database: {last[0][:200]}")


def user_catalog(uri: str, jars_dir: Path | None = None, maven_repository: str = MAVEN_CENTRAL) -> Catalog:
    """The user's own PostgreSQL (``--catalog-uri``); the role and password from PGUSER / PGPASSWORD."""
    if not uri.startswith("jdbc:postgresql://"):
        raise BadOption(f"--catalog-uri {uri}: give a jdbc:postgresql://host:port/database URL")
    return Catalog(uri, os.environ.get("PGUSER", ROLE), os.environ.get("PGPASSWORD", ""), "user PostgreSQL",
                   jdbc_driver(jars_dir, maven_repository))


@dataclass
class LockServer:
    """The ZooKeeper that Hudi's lock provider talks to."""

    host: str
    port: int
    kind: str
    _proc: subprocess.Popen | None = field(default=None, repr=False)
    _data_dir: str | None = None

    def record(self) -> dict[str, object]:
        return {"kind": self.kind, "connect": f"{self.host}:{self.port}"}

    def stop(self) -> None:
        self._proc = _stop_server(self._proc, self._data_dir)


def zookeeper_jars() -> list[Path]:
    """ZooKeeper's jars (server and client in one) and what they need, from pyspark's own jars folder.

    Raises:
        MissingArtifact: pyspark ships no ZooKeeper jar.
    """
    from pyspark.find_spark_home import _find_spark_home

    jars = Path(_find_spark_home()) / "jars"
    found = sorted(jars.glob("zookeeper-*.jar"))
    if not found:
        raise MissingArtifact(f"no ZooKeeper jar in {jars} (pyspark 3.5 ships zookeeper-3.6.3.jar), "
                              "or name yours with --zookeeper host:port")
    return found + sorted(p for pattern in ("slf4j-api-*.jar", "log4j-*.jar", "netty-*.jar", "audience-annotations-*.jar",
                                             "commons-*.jar", "metrics-core-*.jar", "snappy-java-*.jar")
                          for p in jars.glob(pattern))


def start_zookeeper(log_dir: Path) -> LockServer:
    """A standalone ZooKeeper server on a free loopback port with a fresh data folder."""
    jars = zookeeper_jars()
    data = tempfile.mkdtemp(prefix="cowmor-zookeeper-")
    port = free_port()
    java = str(Path(os.environ["JAVA_HOME"]) / "bin" / "java") if os.environ.get("JAVA_HOME") else "java"
    log_dir.mkdir(parents=True, exist_ok=True)
    config = Path(data) / "zoo.cfg"  # the config-file form: the only one that binds loopback alone
    config.write_text(f"dataDir={data}\nclientPort={port}\nclientPortAddress=127.0.0.1\ntickTime=2000\n"
                      "admin.enableServer=false\n4lw.commands.whitelist=ruok\n")
    proc = spawn([java, "-Xmx256m", f"-Dlog4j2.configurationFile=file:{LOG4J2}", "-cp", ":".join(map(str, jars)),
                  "org.apache.zookeeper.server.ZooKeeperServerMain", str(config)], log_dir / "zookeeper.log", data_dir=data)
    server = LockServer("127.0.0.1", port, f"ZooKeeper {jars[0].stem.removeprefix('zookeeper-')} (pyspark's jar; "
                        "started by the run, loopback)", proc, data)
    try:
        wait_for_port(port, "ZooKeeper", proc)
    except BaseException:
        server.stop()
        raise
    return server


def user_zookeeper(connect: str) -> LockServer:
    host, _, port = connect.rpartition(":")
    if not host or not port.isdigit():
        raise BadOption(f"--zookeeper {connect}: give host:port")
    return LockServer(host, int(port), "user ZooKeeper")


@dataclass
class Coordination:
    """What several writers coordinate through, started on first use and stopped with the run."""

    log_dir: Path
    jars_dir: Path | None = None
    catalog_uri: str | None = None
    zookeeper: str | None = None
    maven_repo: str = MAVEN_CENTRAL
    _catalog: Catalog | MissingArtifact | None = None
    _lock: LockServer | MissingArtifact | None = None

    def catalog(self) -> Catalog:
        """Iceberg's JDBC catalog (started once).

        Raises:
            MissingArtifact: no PostgreSQL here (the caller skips with this message).
        """
        if self._catalog is None:
            try:
                self._catalog = user_catalog(self.catalog_uri, self.jars_dir, self.maven_repo) if self.catalog_uri \
                    else start_postgres(self.log_dir, self.jars_dir, self.maven_repo)
            except MissingArtifact as err:
                self._catalog = err
        if isinstance(self._catalog, MissingArtifact):
            raise self._catalog
        return self._catalog

    def lock(self) -> LockServer:
        """Hudi's ZooKeeper (started once).

        Raises:
            MissingArtifact: no ZooKeeper jar here.
        """
        if self._lock is None:
            try:
                self._lock = user_zookeeper(self.zookeeper) if self.zookeeper else start_zookeeper(self.log_dir)
            except MissingArtifact as err:
                self._lock = err
        if isinstance(self._lock, MissingArtifact):
            raise self._lock
        return self._lock

    def driver(self) -> dict[str, str]:
        """The JDBC driver for the Iceberg application's classpath (whether or not a catalog was started yet)."""
        return jdbc_driver(self.jars_dir, self.maven_repo)

    def record(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for name, thing in (("iceberg_catalog", self._catalog), ("hudi_lock", self._lock)):
            if thing is not None:
                out[name] = {"unavailable": str(thing)} if isinstance(thing, MissingArtifact) else thing.record()
        return out

    def stop(self) -> None:
        for thing in (self._catalog, self._lock):
            if thing is not None and not isinstance(thing, MissingArtifact):
                thing.stop()
