"""One writer as its own Spark application: ``python -m bench.run.writer_process SPEC.json`` (started by ``race.py``).

It starts Spark with the run's settings, puts the adapter on the shared catalog and lock, warms up (one read),
says it is ready, waits for the common start, runs its batches and appends each batch's record to its output file
as the batch ends.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from bench.formats import make_adapter
from bench.formats.base import PRUNED, Coordinator, Setting, TableFormat, TableRef
from bench.measure.writers import run_batches

GO_TIMEOUT_S = 1800.0


def writer_adapter(spec: dict) -> tuple[TableFormat, list[Setting]]:
    """The run's adapter rebuilt from ``race.writer_spec``: the same table layout (Hudi NBCC's bucket count: a
    session told another count prunes the wrong file groups and its UPDATE silently changes fewer rows), then put
    on the shared catalog and lock; with the settings this application's session applies."""
    fmt = make_adapter(spec["config_id"], spec["warehouse"], spec["target_file_bytes"], PRUNED)
    if spec.get("files_per_partition"):
        fmt.shape_like(spec["files_per_partition"])
    coordinator = spec["coordinator"]
    zookeeper = tuple(coordinator["zookeeper"]) if coordinator.get("zookeeper") else None
    return fmt, fmt.several_writers(Coordinator(coordinator.get("catalog"), zookeeper), spec["control"])


def main(spec_file: str) -> int:
    spec = json.loads(Path(spec_file).read_text())
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(f"cowmor-writer-{spec['writer']}")
    for key, value in spec["conf"].items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        fmt, settings = writer_adapter(spec)
        for s in settings:
            spark.conf.set(s.key, s.value)
        table = TableRef(**spec["table"])
        fmt.attach(spark, table)
        spark.sql(f"SELECT COUNT(*) FROM {fmt.relation(spark, table)}").collect()  # warm: the first read is slow
        Path(spec["ready"]).touch()
        deadline = time.monotonic() + GO_TIMEOUT_S
        while not Path(spec["go"]).exists():
            if time.monotonic() > deadline:
                print("cowmor writer: no start signal", file=sys.stderr)
                return 2
            time.sleep(0.02)
        with open(spec["out"], "a") as out:
            def emit(record: dict) -> None:
                out.write(json.dumps(record) + "\n")
                out.flush()
            run_batches(fmt, spark, table, spec["writer"], spec["batches"], spec["retries"], emit)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
