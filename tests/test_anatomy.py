"""The anatomy of a Parquet data file: the table's columns, the format's own columns, an index in the footer."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from bench.core.storage import Files
from bench.measure.anatomy import anatomy, file_anatomy
from bench.measure.probe import diff, list_files


def _write(path, with_meta: bool, bloom: bytes = b""):
    data = {"id": list(range(1000)), "status": ["SETTLED"] * 1000}
    if with_meta:
        data = {"_hoodie_commit_time": ["20261122000000000"] * 1000, "_hoodie_record_key": [str(i) for i in range(1000)], **data}
    table = pa.table(data)
    if bloom:
        table = table.replace_schema_metadata({"org.apache.hudi.bloomfilter": bloom})
    pq.write_table(table, path)


def test_parts_sum_to_the_file_and_name_what_the_format_adds(tmp_path):
    _write(tmp_path / "plain.parquet", with_meta=False)
    _write(tmp_path / "hudi.parquet", with_meta=True, bloom=b"x" * 50_000)
    plain, hudi = file_anatomy(Files.of(tmp_path / "plain.parquet")), file_anatomy(Files.of(tmp_path / "hudi.parquet"))
    for a in (plain, hudi):
        parts = a["table_columns"] + a["format_columns"] + a["footer_index"] + a["footer_other"] + a["other"]
        assert parts == a["bytes"] and a["rows"] == 1000
    assert plain["format_columns"] == plain["footer_index"] == 0
    assert hudi["format_columns"] > 0 and hudi["footer_index"] >= 50_000
    assert abs(hudi["table_columns"] - plain["table_columns"]) < 50  # the same rows cost the same
    total = anatomy(tmp_path, ["plain.parquet", "hudi.parquet"])
    assert total["files"] == 2 and total["bytes"] == plain["bytes"] + hudi["bytes"]


def test_probe_reports_a_named_part_apart(tmp_path):
    table = tmp_path / "t"
    (table / ".hoodie" / "metadata" / "files").mkdir(parents=True)
    before = list_files(table)
    (table / ".hoodie" / "metadata" / "files" / "log.1").write_bytes(b"m" * 300)
    (table / ".hoodie" / "20261122.commit").write_bytes(b"c" * 40)
    delta = diff(before, list_files(table), lambda rel: "metadata", {".hoodie/metadata/": "metadata_table"})
    assert delta.by_kind["metadata"].bytes_added == 340
    assert delta.as_dict()["parts"] == {"metadata_table": {"files_added": 1, "bytes_added": 300, "files_removed": 0,
                                                           "bytes_removed": 0}}
