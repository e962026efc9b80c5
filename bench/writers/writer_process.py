"""A writer as its own Spark application: ``python -m bench.writers.writer_process FOLDER`` (started by ``race.WriterPool``).

It starts Spark with the run's settings (``FOLDER/app.json``), then serves its jobs in order: for job N it puts
the adapter on the job's table, catalog and lock, warms up (one read), says ``job-N.ready``, waits for
``job-N.go``, runs its batches, appends each batch's record to ``job-N.jsonl`` as the batch ends, and says
``job-N.done``. It exits when no job comes for a long while, and on SIGTERM (the pool's stop).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from bench.formats import make_adapter
from bench.formats.base import PRUNED, Coordinator, Setting, TableFormat, TableRef
from bench.measure.writers import CHECKED, run_batches
from bench.servers.daemons import poll

GO_TIMEOUT_S = 1800.0  # a released job's start signal, and the next job: a writer left alone this long exits
POLL_S = 0.02


def writer_adapter(spec: dict) -> tuple[TableFormat, list[Setting]]:
    """The run's adapter rebuilt from ``race.writer_spec``: the same table layout (Hudi NBCC's bucket count: a
    session told another count prunes the wrong file groups and its UPDATE silently changes fewer rows), then put
    on the shared catalog and lock; with the settings this application's session applies."""
    fmt = make_adapter(spec["config_id"], spec["warehouse"], spec["target_file_bytes"], spec.get("route", PRUNED))
    if spec.get("files_per_partition"):
        fmt.shape_like(spec["files_per_partition"])
    coordinator = spec["coordinator"]
    zookeeper = tuple(coordinator["zookeeper"]) if coordinator.get("zookeeper") else None
    return fmt, fmt.several_writers(Coordinator(coordinator.get("catalog"), zookeeper), spec["control"],
                                    spec["inline_clean"], spec.get("heartbeat_ms", 0))


def next_job(folder: Path, last: int) -> int | None:
    """The first job after ``last`` handed to this writer (a race with fewer writers skips it), or None when no job
    came within ``GO_TIMEOUT_S``."""
    def later() -> int | None:
        numbers = [int(p.name.split("-")[1].split(".")[0]) for p in folder.glob("job-*.json")]
        return min((n for n in numbers if n > last), default=None)

    return poll(later, GO_TIMEOUT_S, POLL_S)


def wait_for(path: Path) -> bool:
    return bool(poll(path.exists, GO_TIMEOUT_S, POLL_S))


def serve(spark, folder: Path, number: int, previous: set[str]) -> set[str]:
    """Job ``number``: its settings replace the previous job's (a control's keys must not outlive its race)."""
    spec = json.loads((folder / f"job-{number}.json").read_text())
    fmt, settings = writer_adapter(spec)
    # the session as a fresh application's: the previous job's settings and every table write setting its writes
    # applied (an NBCC table's bucket index must not reach an OCC table's writes)
    session = {row.key for row in spark.sql("SET").collect() if row.key.startswith("hoodie.")}
    for key in (previous | session) - {s.key for s in settings}:
        spark.conf.unset(key)
    for s in settings:
        spark.conf.set(s.key, s.value)
    table = TableRef(**spec["table"])
    fmt.attach(spark, table)
    fmt.forget_cached_state(spark, table)  # the run made this table afresh since the last job
    spark.sql(f"SELECT COUNT(*) FROM {fmt.relation(spark, table)}").collect()  # warm: the first read is slow
    (folder / f"job-{number}.ready").touch()
    if not wait_for(folder / f"job-{number}.go"):
        raise TimeoutError(f"job {number}: no start signal within {GO_TIMEOUT_S:.0f} s")
    with open(folder / f"job-{number}.jsonl", "a") as out:
        def emit(record: dict) -> None:
            out.write(json.dumps(record) + "\n")
            out.flush()
        run_batches(fmt, spark, table, spec["writer"], spec["batches"], spec["retries"], emit, spec.get("retry", CHECKED),
                    partitions=spec.get("partitions"))
    (folder / f"job-{number}.done").touch()
    return {s.key for s in settings}


def main(folder_name: str) -> int:
    folder = Path(folder_name)
    app = json.loads((folder / "app.json").read_text())
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(f"cowmor-writer-{app['writer']}")
    for key, value in app["conf"].items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        number, applied = 0, set()
        while (number := next_job(folder, number)) is not None:
            applied = serve(spark, folder, number, applied)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
