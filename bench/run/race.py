"""Several writers at once on one table, with the table service running beside them.

Writers are separate Spark applications (``processes``: one JVM each, ``python -m bench.run.writer_process``) or
threads of the run's own application (``threads``: one Spark session each). Either way every writer first starts
and warms up, then all are released together; the table service (``TableFormat.table_service``) runs back to back
in the run's application until the last writer is done. Each batch's record is written the moment it ends (a
file per writer process), so a writer that dies loses nothing it finished. Writer processes are daemons of the
run (``daemons.py``): stopped, whatever happens, before this returns.
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
from bench.measure.writers import failure, run_batches
from bench.run.daemons import spawn, stop

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from bench.formats.base import Coordinator, Setting, TableFormat, TableRef

PROCESSES, THREADS = "processes", "threads"
KINDS = (PROCESSES, THREADS)
# a writer application's own settings: one core and a small heap each (N of them share the machine with the run)
WRITER_MASTER, WRITER_MEMORY = "local[1]", "1g"
# the run's application's identity and ports, which a writer application must not copy
OWN_KEYS = ("spark.app.id", "spark.app.name", "spark.driver.port", "spark.driver.host", "spark.executor.id",
            "spark.app.startTime", "spark.app.submitTime", "spark.master", "spark.driver.memory",
            "spark.sql.warehouse.dir", "spark.repl.local.jars", "spark.submit.pyFiles", "spark.files")
READY_TIMEOUT_S = 900.0


@dataclass
class RaceResult:
    batches: list[dict[str, Any]]
    services: list[dict[str, Any]]
    wall_s: float  # from the release of the writers to the last one's end
    startup_s: float  # until every writer was started and warm (JVM starts, for processes)
    writer_errors: list[str] = field(default_factory=list)  # a writer that crashed (the harness's failure, not a conflict)


def writer_conf(spark: SparkSession) -> dict[str, str]:
    """The run's Spark settings (jars, extensions, serializer, shared settings) for a writer's own application."""
    conf = {k: v for k, v in spark.sparkContext.getConf().getAll() if k not in OWN_KEYS and not k.startswith("spark.ui.")}
    return conf | {"spark.master": WRITER_MASTER, "spark.driver.memory": WRITER_MEMORY, "spark.ui.enabled": "false",
                   "spark.ui.showConsoleProgress": "false"}


class ServiceLoop:
    """The table service, back to back in the run's application, until told to stop."""

    def __init__(self, fmt: TableFormat, spark: SparkSession, table: TableRef, pause_s: float = 0.5,
                 enabled: bool = True) -> None:
        """``enabled=False``: the writers race alone (what a finding looks like without the service beside it)."""
        self.fmt, self.spark, self.table, self.pause_s, self.enabled = fmt, spark, table, pause_s, enabled
        self.runs: list[dict[str, Any]] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cowmor-table-service", daemon=True)

    def _loop(self) -> None:
        while not self._done.is_set():
            start = time.perf_counter()
            try:
                ran = self.fmt.table_service(self.spark, self.table)
                self.runs.append({"service": ran, "committed": True, "seconds": time.perf_counter() - start})
            except NotSupported as why:
                self.runs.append({"service": None, "committed": False, "not_applicable": str(why)})
                return
            except Exception as err:  # noqa: BLE001 - a service that loses the race is recorded, not fatal
                self.runs.append({"committed": False, "seconds": time.perf_counter() - start, **failure(err)})
            self._done.wait(self.pause_s)

    def __enter__(self) -> ServiceLoop:
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self.enabled:
            self._thread.join(timeout=900)


def race(fmt: TableFormat, spark: SparkSession, table: TableRef, batches: list[list[list[int]]], kind: str,
         settings: list[Setting], coordinator: Coordinator, retries: int, work_dir: Path,
         progress: Callable[[str], None], service: bool = True) -> RaceResult:
    """``batches[w]`` are writer ``w``'s batches (each a list of keys); run them all at once, the service beside
    (unless ``service`` is false)."""
    runner = _processes if kind == PROCESSES else _threads
    return runner(fmt, spark, table, batches, settings, coordinator, retries, work_dir, progress, service)


def _threads(fmt, spark, table, batches, settings, coordinator, retries, work_dir, progress, service_on) -> RaceResult:
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
            run_batches(fmt, session, table, number, batches[number], retries, records.append)
        except Exception as err:  # noqa: BLE001 - the harness's own failure: recorded, the race's record says so
            errors.append(f"writer {number}: {failure(err)}")

    threads = [threading.Thread(target=writer, args=(n,), name=f"cowmor-writer-{n}") for n in range(len(batches))]
    for t in threads:
        t.start()
    gate.wait(timeout=READY_TIMEOUT_S)
    startup = time.perf_counter() - started
    progress(f"{fmt.config_id}: {len(batches)} writer threads released")
    with ServiceLoop(fmt, spark, table, enabled=service_on) as service:
        go = time.perf_counter()
        for t in threads:
            t.join()
        wall = time.perf_counter() - go
    return RaceResult(sorted(records, key=lambda r: (r["writer"], r["batch"])), service.runs, wall, startup, errors)


def writer_spec(fmt: TableFormat, coordinator: Coordinator, table: TableRef) -> dict[str, Any]:
    """What a writer application needs to rebuild this adapter on the same table, catalog, lock and layout
    (``writer_process.writer_adapter`` reads it back)."""
    return {"config_id": fmt.config_id, "warehouse": fmt.warehouse, "target_file_bytes": fmt.target_file_bytes,
            "control": fmt.control, "files_per_partition": fmt.files_per_partition,
            "coordinator": dataclasses.asdict(coordinator), "table": dataclasses.asdict(table)}


def _processes(fmt, spark, table, batches, settings, coordinator, retries, work_dir, progress, service_on) -> RaceResult:
    work_dir.mkdir(parents=True, exist_ok=True)
    go = work_dir / "go"
    go.unlink(missing_ok=True)
    conf = writer_conf(spark)
    procs, outs, readies = [], [], []
    started = time.perf_counter()
    try:
        for number, mine in enumerate(batches):
            out, ready = work_dir / f"writer-{number}.jsonl", work_dir / f"writer-{number}.ready"
            out.unlink(missing_ok=True)
            ready.unlink(missing_ok=True)
            spec = {**writer_spec(fmt, coordinator, table), "conf": conf, "writer": number, "batches": mine,
                    "retries": retries, "ready": str(ready), "go": str(go), "out": str(out)}
            spec_file = work_dir / f"writer-{number}.json"
            spec_file.write_text(json.dumps(spec))
            procs.append(spawn([sys.executable, "-m", "bench.run.writer_process", str(spec_file)],
                               work_dir / f"writer-{number}.log"))
            outs.append(out)
            readies.append(ready)
        _wait_ready(procs, readies, work_dir)
        startup = time.perf_counter() - started
        progress(f"{fmt.config_id}: {len(batches)} writer applications started and warm; released")
        with ServiceLoop(fmt, spark, table, enabled=service_on) as service:
            release = time.perf_counter()
            go.touch()
            for proc in procs:
                proc.wait()
            wall = time.perf_counter() - release
    finally:
        for proc in procs:
            stop(proc, term_grace=10)
    errors = [f"writer {n} exited with {p.returncode}: {_tail(work_dir / f'writer-{n}.log')}"
              for n, p in enumerate(procs) if p.returncode]
    records = [json.loads(line) for out in outs if out.exists() for line in out.read_text().splitlines() if line.strip()]
    return RaceResult(sorted(records, key=lambda r: (r["writer"], r["batch"])), service.runs, wall, startup, errors)


def _wait_ready(procs: list, readies: list[Path], work_dir: Path) -> None:
    """Until every writer application is up and warm.

    Raises:
        RuntimeError: a writer exited first (its log's last line), or the wait timed out.
    """
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not all(r.exists() for r in readies):
        for n, proc in enumerate(procs):
            if proc.poll() is not None:
                raise RuntimeError(f"writer {n} exited with {proc.returncode} before it was ready: "
                                   f"{_tail(work_dir / f'writer-{n}.log')}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"writers not ready within {READY_TIMEOUT_S:.0f} s")
        time.sleep(0.2)


def _tail(log: Path) -> str:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()] if log.exists() else []
    return lines[-1][:300] if lines else "(no output)"
