"""Shared load helper: read the base Parquet so that each input file becomes one Spark task."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ONE_GIB = str(1 << 30)


@contextlib.contextmanager
def one_task_per_input_file(spark: SparkSession) -> Iterator[None]:
    """While writing the base table, never pack two base files into one task.

    With the open cost as large as the split size, Spark's file packing closes a partition after
    every file; each base file holds one day, so each task writes exactly one output file.
    Restored afterwards so measured reads use Spark's defaults.
    """
    keys = {"spark.sql.files.maxPartitionBytes": ONE_GIB, "spark.sql.files.openCostInBytes": ONE_GIB}
    old = {k: spark.conf.get(k, None) for k in keys}
    for k, v in keys.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)
