from __future__ import annotations

from bench.formats.iceberg import IcebergFormat
from bench.measure.probe import diff, list_files, table_size


def _write(path, size):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)


def test_diff_splits_by_kind_and_ignores_crc(tmp_path):
    fmt = IcebergFormat("iceberg-mor", "mor", tmp_path, 1 << 27)
    _write(tmp_path / "data/d=1/00000-0-a-00001.parquet", 100)
    _write(tmp_path / "metadata/v1.metadata.json", 10)
    before = list_files(tmp_path)
    _write(tmp_path / "data/d=1/00000-0-b-00001-deletes.parquet", 30)
    _write(tmp_path / "data/d=1/.00000-0-b-00001-deletes.parquet.crc", 4)
    _write(tmp_path / "data/d=2/00000-1-c-00001.parquet", 70)
    _write(tmp_path / "metadata/v2.metadata.json", 12)
    (tmp_path / "metadata/v1.metadata.json").unlink()
    delta = diff(before, list_files(tmp_path), fmt.classify)
    assert delta.by_kind["delete"].files_added == 1 and delta.by_kind["delete"].bytes_added == 30
    assert delta.by_kind["data"].files_added == 1 and delta.by_kind["data"].bytes_added == 70
    assert delta.by_kind["metadata"].files_added == 1 and delta.by_kind["metadata"].files_removed == 1
    assert (delta.bytes_added, delta.bytes_removed) == (112, 10)
    assert delta.checksum_files_added == 1
    size = table_size(list_files(tmp_path), fmt.classify)
    assert size["data"] == {"files": 2, "bytes": 170}


def test_rewritten_in_place_counts_both_ways(tmp_path):
    _write(tmp_path / "a.parquet", 10)
    before = list_files(tmp_path)
    _write(tmp_path / "a.parquet", 20)
    delta = diff(before, list_files(tmp_path), lambda _: "data")
    assert (delta.files_added, delta.files_removed, delta.bytes_added, delta.bytes_removed) == (1, 1, 20, 10)


def test_missing_directory_is_empty(tmp_path):
    assert list_files(tmp_path / "nope").files == {}
