"""Each adapter's Spark settings and write options against the names each project documents."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.formats import CONFIGS, make_adapter
from bench.formats.delta import DeltaFormat
from bench.formats.hudi import HudiFormat
from bench.formats.iceberg import IcebergFormat


def settings(config_id):
    fmt = make_adapter(config_id, Path("/w"), 64 << 20)
    return {s.key: s.value for s in fmt.settings()}, fmt


def test_every_setting_names_its_source():
    for config_id in CONFIGS:
        fmt = make_adapter(config_id, Path("/w"), 1 << 27)
        for s in fmt.settings():
            assert s.source.startswith("https://") and s.scope


@pytest.mark.parametrize("config_id, version, mode", [
    ("iceberg-cow", "2", "copy-on-write"), ("iceberg-mor", "2", "merge-on-read"), ("iceberg-dv", "3", "merge-on-read")])
def test_iceberg(config_id, version, mode):
    s, fmt = settings(config_id)
    assert s["spark.sql.extensions"] == "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
    assert s["spark.sql.catalog.cowmor"] == "org.apache.iceberg.spark.SparkCatalog"
    assert s["format-version"] == version
    assert s["write.update.mode"] == s["write.delete.mode"] == s["write.merge.mode"] == mode
    assert s["write.target-file-size-bytes"] == str(64 << 20) and s["write.parquet.compression-codec"] == "snappy"
    assert fmt.classify("data/d=1/00000-5-x-00001-deletes.parquet") == "delete"
    assert fmt.classify("data/d=1/00000-5-x-00001.puffin") == "delete"
    assert fmt.classify("metadata/snap-1.avro") == "metadata"


@pytest.mark.parametrize("config_id, dv", [("delta-cow", "false"), ("delta-dv", "true")])
def test_delta(config_id, dv):
    s, fmt = settings(config_id)
    assert s["spark.sql.extensions"] == "io.delta.sql.DeltaSparkSessionExtension"
    assert s["spark.sql.catalog.spark_catalog"] == "org.apache.spark.sql.delta.catalog.DeltaCatalog"
    assert s["delta.enableDeletionVectors"] == dv
    assert s["spark.databricks.delta.optimize.maxFileSize"] == str(64 << 20)
    assert "delta.targetFileSize" not in s  # not a Delta 3.3 table property


@pytest.mark.parametrize("config_id, table_type", [("hudi-cow", "COPY_ON_WRITE"), ("hudi-mor", "MERGE_ON_READ")])
def test_hudi(config_id, table_type):
    s, fmt = settings(config_id)
    assert s["spark.serializer"] == "org.apache.spark.serializer.KryoSerializer"
    assert s["spark.kryo.registrator"] == "org.apache.spark.HoodieSparkKryoRegistrar"
    assert s["spark.sql.extensions"] == "org.apache.spark.sql.hudi.HoodieSparkSessionExtension"
    assert s["spark.sql.catalog.spark_catalog"] == "org.apache.spark.sql.hudi.catalog.HoodieCatalog"
    assert s["hoodie.datasource.write.table.type"] == table_type
    assert s["hoodie.parquet.max.file.size"] == str(64 << 20) and s["hoodie.parquet.compression.codec"] == "snappy"
    assert not any(k.startswith("hoodie.cleaner.") or "precombine" in k for k in s)  # 1.1.1 names only
    assert s["hoodie.write.record.merge.mode"] == "EVENT_TIME_ORDERING" and s["hoodie.index.type"] == "SIMPLE"
    from bench.formats.base import TableRef

    opts = fmt._options(TableRef("payments", Path("/w/hudi/payments"), "txn_id", "settled_date", "created_at"), "upsert")
    assert opts["hoodie.datasource.write.recordkey.field"] == "txn_id"
    assert opts["hoodie.table.ordering.fields"] == "created_at"  # 1.1's name (precombine.field is deprecated)
    assert opts["hoodie.datasource.write.partitionpath.field"] == "settled_date"
    assert opts["hoodie.datasource.write.operation"] == "upsert"
    if table_type == "MERGE_ON_READ":
        assert s["hoodie.compact.inline"] == "false"  # batch MoR writes would otherwise compact inline
        assert fmt.read_modes == ("snapshot", "read_optimized")
    else:
        assert "hoodie.compact.inline" not in s and fmt.read_modes == ("snapshot",)


def test_same_target_size_and_codec_everywhere():
    for config_id in CONFIGS:
        s, _ = settings(config_id)
        assert str(64 << 20) in s.values()
        assert "snappy" in s.values()


def test_copy_on_write_has_nothing_to_compact():
    from bench.exceptions import NotSupported

    for fmt_cls, cid, mode in ((IcebergFormat, "iceberg-cow", "cow"), (DeltaFormat, "delta-cow", "cow"), (HudiFormat, "hudi-cow", "cow")):
        with pytest.raises(NotSupported):
            fmt_cls(cid, mode, Path("/w"), 1).compact(None, None)
