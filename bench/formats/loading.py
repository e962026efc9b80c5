"""Shared load helpers: read the base Parquet so that each input file becomes one Spark task, and write its rows in
the order they were read."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

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


def in_source_order(data: DataFrame, partition_by: str) -> DataFrame:
    """``data`` sorted by the partition column and then by each row's position in its input file.

    Spark's file writer sorts a partitioned write by the partition column when the plan is not already so ordered
    (``FileFormatWriter``), and a sort whose rows spill to disk merges its runs with no order among equal values: a
    base file too big to sort in memory (a 263 MB file-size step: 8.6 M rows) came out with its ``txn_id`` ranges
    interleaved across row groups, so no statistic could skip any of them and a pruned update read the whole file.
    Sorted by (partition, position) first, the writer's own sort is satisfied and each file keeps its rows' order.
    Only writers that sort need it: Iceberg's fanout writer and Hudi's bulk insert with sort mode NONE write rows as
    they arrive.
    """
    from pyspark.sql import functions as F

    position = "__cowmor_source_position"
    return (data.withColumn(position, F.monotonically_increasing_id())
            .sortWithinPartitions(partition_by, position).drop(position))
