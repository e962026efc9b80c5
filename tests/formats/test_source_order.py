"""A base table keeps its input files' row order, also where Spark's writer sorts and its sort spills (Delta).

Spark sorts a partitioned write by the partition column; when the sort spills, equal values come back from the
merge in no particular order. At cowmor's 263 MB file-size step that interleaved each Delta file's ``txn_id`` ranges
across its row groups, so a pruned update could skip nothing. Here a tiny spill threshold makes the sort spill.
"""

from __future__ import annotations

import os

import pyarrow.parquet as pq
import pytest

from bench.exceptions import MissingArtifact

pytestmark = pytest.mark.spark


def test_delta_base_files_keep_their_rows_order_when_the_writers_sort_spills(tmp_path):
    from bench.formats import adapter_class, make_adapter
    from bench.run.spark import SparkApps, SparkOptions
    from bench.servers import artifacts
    from bench.workload.datagen import generate_payments

    try:
        resolution = artifacts.resolve("delta")
    except MissingArtifact as why:
        pytest.skip(str(why))
    warehouse = tmp_path / "warehouse"
    data = generate_payments(tmp_path / "data", 2, 1, 3000, 42, progress=None)
    conf = {s.key: s.value for s in adapter_class("delta").spark_settings(warehouse)} | resolution.spark_conf()
    conf["spark.shuffle.spill.numElementsForceSpillThreshold"] = "500"  # each 3,000-row file's sort spills 6 runs
    apps = SparkApps(SparkOptions(master="local[1]", driver_memory="512m"))
    try:
        spark = apps.get("delta", conf)
        fmt = make_adapter("delta-dv", warehouse, 128 << 20)
        table = fmt.create(spark, "payments", spark.read.parquet(str(data.path)), key="txn_id",
                           partition_by="settled_date", ordering="created_at")
    finally:
        apps.stop()
    files = sorted(os.path.join(folder, name) for folder, _, names in os.walk(table.location) for name in names
                   if name.endswith(".parquet"))
    assert len(files) == 2, files  # one file a day, as loaded
    for file in files:
        keys = pq.read_table(file, columns=["txn_id"]).column(0).to_pylist()
        assert len(keys) == 3000 and keys == sorted(keys), (file, keys[:5])
