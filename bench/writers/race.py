"""Several writers at once on one table, with the table service running beside them.

Writers are separate Spark applications (``processes``: one JVM each, ``python -m bench.writers.writer_process``) or
threads of the run's own application (``threads``: one Spark session each). Either way every writer first starts
and warms up, then all are released together; the table service (``TableFormat.table_service``) runs in the run's
application on its cadence (after every N writer commits, or back to back) until the last writer is done. Each batch's record is written the moment it ends (a
file per writer process), so a writer that dies loses nothing it finished.

Writer applications are kept between races (``WriterPool``): a JVM start and its first statements cost about a
minute of CPU on a laptop, and a grid of 1, 2, 4, 8 writers x overlaps x controls would pay it hundreds of times.
Each race hands every writer a job (its table, settings and batches); the pool grows to the race's writer count.
Writer processes are daemons of the run (``daemons.py``): the pool stops them when the family's application
stops, when the run ends, and whatever happens.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.exceptions import NotSupported
from bench.measure.writers import CHECKED, failure, run_batches
from bench.servers.daemons import LOG4J2, poll, spawn, stop

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from bench.formats.base import Coordinator, Setting, TableFormat, TableRef

PROCESSES, THREADS = "processes", "threads"
KINDS = (PROCESSES, THREADS)
# a writer application's own settings: one core and a small heap each (N of them share the machine with the run)
WRITER_MASTER, WRITER_MEMORY = "local[1]", "1g"
WRITER_LOG4J2 = Path(__file__).with_name("log4j2-writer.properties")
# the run's application's identity and ports, which a writer application must not copy
OWN_KEYS = ("spark.app.id", "spark.app.name", "spark.driver.port", "spark.driver.host", "spark.executor.id",
            "spark.app.startTime", "spark.app.submitTime", "spark.master", "spark.driver.memory",
            "spark.sql.warehouse.dir", "spark.repl.local.jars", "spark.submit.pyFiles", "spark.files")
READY_TIMEOUT_S = 900.0
RACE_TIMEOUT_S = 3600.0


@dataclass
class RaceResult:
    batches: list[dict[str, Any]]
    services: list[dict[str, Any]]
    wall_s: float  # from the release of the writers to the last one's end
    startup_s: float  # until every writer was started and warm (JVM starts of the writers the pool started now)
    writer_errors: list[str] = field(default_factory=list)  # a writer that crashed (the harness's failure, not a conflict)
    writers_started: int = 0  # writer applications (JVMs) this race started; the others were kept from earlier races
    released_at: float | None = None  # wall clock when the writers were released: what the table service may expire


def writer_conf(spark: SparkSession) -> dict[str, str]:
    """The run's Spark settings (jars, extensions, serializer, shared settings) for a writer's own application, with
    the writers' own log settings (``WRITER_LOG4J2``: Hudi's conflict decisions, in each writer's ``writer.log``)."""
    conf = {k: v.replace(str(LOG4J2), str(WRITER_LOG4J2)) for k, v in spark.sparkContext.getConf().getAll()
            if k not in OWN_KEYS and not k.startswith("spark.ui.")}
    return conf | {"spark.master": WRITER_MASTER, "spark.driver.memory": WRITER_MEMORY, "spark.ui.enabled": "false",
                   "spark.ui.showConsoleProgress": "false"}


@dataclass(frozen=True)
class Cadence:
    """When the table service runs beside the writers: after every ``every`` writer commits (0: back to back), each
    run expiring what only snapshots older than ``keep_s`` seconds need (0: every state before the race began)."""

    every: int = 0
    keep_s: float = 0.0
    pause_s: float = 0.5  # back to back: between one run's end and the next run's start

    def record(self) -> dict[str, Any]:
        return {"service_every_commits": self.every, "keep_snapshots_s": self.keep_s}


class ServiceLoop:
    """The table service in the run's application, on its cadence, until told to stop."""

    def __init__(self, fmt: TableFormat, spark: SparkSession, table: TableRef, cadence: Cadence = Cadence(),
                 commits: Callable[[], int] = lambda: 0, enabled: bool = True) -> None:
        """``commits()``: the writers' commits so far (the cadence counts them); ``enabled=False``: the writers race
        alone (what a finding looks like without the service beside it)."""
        self.fmt, self.spark, self.table, self.cadence, self.commits = fmt, spark, table, cadence, commits
        self.enabled = enabled
        self.since = time.time()  # the race's start: the stress variant's expiry drops every state before it
        self.runs: list[dict[str, Any]] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cowmor-table-service", daemon=True)

    def expire_before(self) -> float:
        return self.since if not self.cadence.keep_s else time.time() - self.cadence.keep_s

    def _due(self) -> bool:
        """Wait until the next run is due (the cadence's commits came) or the race ended; True: run now."""
        if not self.cadence.every:
            return not self._done.is_set()
        due = (len([r for r in self.runs if "not_applicable" not in r]) + 1) * self.cadence.every
        while True:  # a run that came due as the last writer finished still runs (a scheduler's trigger fired)
            if self.commits() >= due:
                return True
            if self._done.wait(0.1):
                return self.commits() >= due

    def _loop(self) -> None:
        while self._due():
            # wall-clock times, as the writers' batches have: a violation's evidence sets the two side by side
            start, started_at = time.perf_counter(), time.time()
            try:
                ran = self.fmt.table_service(self.spark, self.table, expire_before=self.expire_before())
                self.runs.append({"service": ran, "committed": True, "seconds": time.perf_counter() - start,
                                  "started_at": started_at, "ended_at": time.time()})
            except NotSupported as why:
                self.runs.append({"service": None, "committed": False, "not_applicable": str(why)})
                return
            except Exception as err:  # noqa: BLE001 - a service that loses the race is recorded, not fatal
                self.runs.append({"committed": False, "seconds": time.perf_counter() - start, "started_at": started_at,
                                  "ended_at": time.time(), **failure(err)})
            if not self.cadence.every:
                self._done.wait(self.cadence.pause_s)

    def __enter__(self) -> ServiceLoop:
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self.enabled:
            self._thread.join(timeout=900)


def race(fmt: TableFormat, spark: SparkSession, table: TableRef, batches: list[list[list[int]]], kind: str,
         settings: list[Setting], coordinator: Coordinator, retries: int, pool: WriterPool,
         progress: Callable[[str], None], service: bool = True, retry: str = CHECKED,
         cadence: Cadence = Cadence(), partitions: list[list[list[str]]] | None = None) -> RaceResult:
    """``batches[w]`` are writer ``w``'s batches (each a list of keys); run them all at once, the service beside on
    its ``cadence`` (unless ``service`` is false), a failed batch retried as ``retry`` says. Writer applications come
    from ``pool``. ``partitions[w]``: writer ``w``'s days per batch, named in its statements (None: keys alone)."""
    if kind == PROCESSES:
        return _processes(fmt, spark, table, batches, coordinator, retries, pool, progress, service, retry, cadence,
                          partitions)
    return _threads(fmt, spark, table, batches, settings, retries, progress, service, retry, cadence, partitions)


def _threads(fmt, spark, table, batches, settings, retries, progress, service_on, retry, cadence,
             partitions) -> RaceResult:
    records: list[dict[str, Any]] = []
    errors: list[str] = []
    gate = threading.Barrier(len(batches) + 1)
    started = time.perf_counter()

    def writer(number: int) -> None:
        session = spark.newSession()  # its own SQL settings (Hudi's write settings are session settings)
        for s in settings:
            session.conf.set(s.key, s.value)
        try:
            gate.wait(timeout=READY_TIMEOUT_S)
            run_batches(fmt, session, table, number, batches[number], retries, records.append, retry,
                        own_application=False, partitions=partitions[number] if partitions else None)
        except Exception as err:  # noqa: BLE001 - the harness's own failure: recorded, the race's record says so
            errors.append(f"writer {number}: {failure(err)}")

    threads = [threading.Thread(target=writer, args=(n,), name=f"cowmor-writer-{n}") for n in range(len(batches))]
    for t in threads:
        t.start()
    gate.wait(timeout=READY_TIMEOUT_S)
    startup = time.perf_counter() - started
    progress(f"{fmt.config_id}: {len(batches)} writer threads released")
    with ServiceLoop(fmt, spark, table, cadence, lambda: sum(bool(r.get("committed")) for r in list(records)),
                     enabled=service_on) as service:
        go = time.perf_counter()
        for t in threads:
            t.join()
        wall = time.perf_counter() - go
    return RaceResult(sorted(records, key=lambda r: (r["writer"], r["batch"])), service.runs, wall, startup, errors,
                      released_at=service.since)


def writer_spec(fmt: TableFormat, coordinator: Coordinator, table: TableRef) -> dict[str, Any]:
    """What a writer application needs to rebuild this adapter on the same table, catalog, lock and layout
    (``writer_process.writer_adapter`` reads it back)."""
    return {"config_id": fmt.config_id, "warehouse": fmt.warehouse, "target_file_bytes": fmt.target_file_bytes,
            "route": fmt.route,
            "control": fmt.control, "inline_clean": fmt.cleans_after_commit, "heartbeat_ms": fmt.heartbeat_ms,
            "files_per_partition": fmt.files_per_partition,
            "coordinator": dataclasses.asdict(coordinator), "table": dataclasses.asdict(table)}


def _processes(fmt, spark, table, batches, coordinator, retries, pool, progress, service_on, retry, cadence,
               partitions) -> RaceResult:
    started = time.perf_counter()
    new = pool.ensure(writer_conf(spark), len(batches))
    jobs = pool.hand_out([{**writer_spec(fmt, coordinator, table), "writer": number, "batches": mine, "retries": retries,
                           "retry": retry, "partitions": partitions[number] if partitions else None}
                          for number, mine in enumerate(batches)])
    try:
        pool.wait(jobs, "ready")
        startup = time.perf_counter() - started
        progress(f"{fmt.config_id}: {len(batches)} writer applications warm ({new} started now, {len(batches) - new} kept "
                 "from earlier races); released")
        with ServiceLoop(fmt, spark, table, cadence, lambda: committed_so_far(jobs), enabled=service_on) as service:
            release = time.perf_counter()
            pool.go(jobs)
            errors = pool.wait(jobs, "done")
            wall = time.perf_counter() - release
    except BaseException:
        pool.stop()  # a writer that never said ready or done is in an unknown state: no later race may reuse it
        raise
    if errors:
        pool.stop()
    records = [json.loads(line) for job in jobs if job.out.exists() for line in job.out.read_text().splitlines() if line.strip()]
    attach_lock_waits(fmt, records, {job.writer: job.folder / "writer.log" for job in jobs})
    return RaceResult(sorted(records, key=lambda r: (r["writer"], r["batch"])), service.runs, wall, startup, errors, new,
                      released_at=service.since)


def attach_lock_waits(fmt: TableFormat, records: list[dict[str, Any]], logs: dict[int, Path]) -> None:
    """Each committed batch's ``lock_wait_s`` (and each failed attempt's): the seconds its writer application waited
    for locks granted while that attempt ran, from the application's log. Left out where the format takes no lock."""
    for writer, log in logs.items():
        waits = fmt.lock_waits(log.read_text(errors="replace")) if log.exists() else None
        if waits is None:
            continue
        for record in (r for r in records if r["writer"] == writer):
            for attempt in record["failures"]:
                if attempt.get("started_at") is not None:
                    attempt["lock_wait_s"] = _waited(waits, attempt["started_at"], attempt["ended_at"])
            if record.get("committed") and record.get("attempt_started_at") is not None:
                record["lock_wait_s"] = _waited(waits, record["attempt_started_at"], record["ended_at"])


def _waited(waits: list[tuple[float, float]], start: float, end: float) -> float:
    return sum(held - asked for asked, held in waits if start <= held <= end)


def committed_so_far(jobs: list[Job]) -> int:
    """The batches the writers have committed so far, from the records each appends as a batch ends."""
    count = 0
    for job in jobs:
        for line in job.out.read_text().splitlines() if job.out.exists() else []:
            try:
                count += bool(json.loads(line).get("committed"))
            except json.JSONDecodeError:  # the line a writer is appending right now
                pass
    return count


@dataclass
class Job:
    """One race's work for one writer application: files in the writer's own folder, named by the job's number."""

    writer: int
    folder: Path
    number: int

    def path(self, what: str) -> Path:
        return self.folder / f"job-{self.number}.{what}"

    @property
    def out(self) -> Path:
        return self.path("jsonl")


class WriterPool:
    """Writer applications of one family's settings, started when a race needs more of them and kept for the next.

    A writer waits for ``job-N.json`` in its folder, warms up on the job's table (``job-N.ready``), waits for
    ``job-N.go``, appends each batch's record to ``job-N.jsonl`` and says ``job-N.done``; then waits for job N+1.
    """

    def __init__(self, work_dir: Path, command: tuple[str, ...] = (sys.executable, "-m", "bench.writers.writer_process")) -> None:
        """``command`` + the writer's folder starts a writer (tests give one that speaks the protocol without Spark)."""
        self.work_dir, self.command, self.jobs_handed, self.generation = work_dir, command, 0, 0
        self.procs: list[Any] = []
        self.conf: dict[str, str] | None = None

    def ensure(self, conf: dict[str, str], count: int) -> int:
        """At least ``count`` writers with ``conf`` (another family's are stopped first); how many started now."""
        if conf != self.conf:
            self.stop()
            self.conf, self.generation = conf, self.generation + 1
        new = 0
        while len(self.procs) < count:
            number = len(self.procs)
            folder = self.folder(number)  # each generation its own folders: earlier writers' logs stay, their jobs are not served again
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "app.json").write_text(json.dumps({"conf": conf, "writer": number}))
            self.procs.append(spawn([*self.command, str(folder)], folder / "writer.log"))
            new += 1
        return new

    def hand_out(self, specs: list[dict[str, Any]]) -> list[Job]:
        """Each spec to its writer, as the next job (every writer gets the same job number)."""
        self.jobs_handed += 1
        jobs = []
        for spec in specs:
            job = Job(spec["writer"], self.folder(spec["writer"]), self.jobs_handed)
            for what in ("ready", "go", "done", "jsonl"):
                job.path(what).unlink(missing_ok=True)
            job.path("tmp").write_text(json.dumps(spec))
            job.path("tmp").rename(job.path("json"))  # whole or not at all: the writer polls for it
            jobs.append(job)
        return jobs

    def folder(self, writer: int) -> Path:
        return self.work_dir / f"pool-{self.generation}" / f"writer-{writer}"

    @staticmethod
    def go(jobs: list[Job]) -> None:
        for job in jobs:
            job.path("go").touch()

    def wait(self, jobs: list[Job], what: str) -> list[str]:
        """Until every job says ``what``; a writer that exits first is an error (its log's last line).

        Raises:
            RuntimeError: a writer exited before it was ready, or the wait timed out.
        """
        timeout = READY_TIMEOUT_S if what == "ready" else RACE_TIMEOUT_S
        errors: list[str] = []
        pending = list(jobs)

        def all_said() -> bool:
            for job in list(pending):
                proc = self.procs[job.writer]
                if job.path(what).exists():
                    pending.remove(job)
                elif proc.poll() is not None:
                    line = f"writer {job.writer} exited with {proc.returncode}: {_tail(job.folder / 'writer.log')}"
                    if what == "ready":
                        raise RuntimeError(f"{line} (before it was ready)")
                    errors.append(line)
                    pending.remove(job)
            return not pending

        if not poll(all_said, timeout, 0.05):
            raise RuntimeError(f"writers not {what} within {timeout:.0f} s")
        return errors

    def stop(self) -> None:
        """Stop every writer application (each stops its Spark on SIGTERM)."""
        for proc in self.procs:
            stop(proc, term_grace=10)
        self.procs, self.conf = [], None


def _tail(log: Path) -> str:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()] if log.exists() else []
    return lines[-1][:300] if lines else "(no output)"
