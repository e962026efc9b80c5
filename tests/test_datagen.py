from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from bench.workload.datagen import HOTFIX_STATUS, PAYMENTS_SCHEMA, STATUSES, decimal_from_cents, generate_payments, payments_file
from bench.workload.queries import cents_of


def test_file_is_deterministic_and_shaped():
    a = payments_file(7, 3, 1, 4, 500)
    b = payments_file(7, 3, 1, 4, 500)
    assert a.equals(b) and a.schema == PAYMENTS_SCHEMA and a.num_rows == 500
    assert not a.equals(payments_file(8, 3, 1, 4, 500))
    assert set(a.column("settled_date").to_pylist()) == {a.column("settled_date")[0].as_py()}  # one day per file
    assert set(a.column("status").to_pylist()) <= set(STATUSES) and HOTFIX_STATUS not in STATUSES


def test_decimal_is_exact():
    cents = np.array([0, 1, 12345, -250, 10**11 - 1])
    arr = decimal_from_cents(cents)
    assert arr.to_pylist() == [Decimal("0.00"), Decimal("0.01"), Decimal("123.45"), Decimal("-2.50"), Decimal("999999999.99")]
    assert cents_of(arr).tolist() == cents.tolist()


def test_dataset_written_once_with_unique_keys(tmp_path):
    data = generate_payments(tmp_path, 3, 2, 100, 1, progress=None)
    assert len(data.files) == 6 and data.rows == 600
    ids = pq.read_table(data.files, columns=["txn_id"]).column("txn_id").to_pylist()
    assert len(set(ids)) == 600
    mtime = Path(data.files[0]).stat().st_mtime_ns
    again = generate_payments(tmp_path, 3, 2, 100, 1, progress=None)
    assert again.path == data.path and Path(again.files[0]).stat().st_mtime_ns == mtime  # reused, not rewritten
    assert generate_payments(tmp_path, 3, 2, 100, 2, progress=None).path != data.path


def test_hotfix_keys_scatter_over_files(tmp_path):
    data = generate_payments(tmp_path, 10, 4, 100, 1, progress=None)
    keys = data.hotfix_keys(20)
    assert keys == data.hotfix_keys(20) and len(set(keys)) == 20
    files_hit = {(k - 1_000_000_000) // 100 for k in keys}
    assert len(files_hit) >= 15  # scattered, not clustered


def test_days_holding_counts_the_partitions_of_the_files_holding_keys(tmp_path):
    data = generate_payments(tmp_path, 3, 2, 100, 1, progress=None)  # files 0,1 day 0; 2,3 day 1; 4,5 day 2
    base = 1_000_000_000
    assert data.files_holding([base, base + 150]) == 2 and data.days_holding([base, base + 150]) == 1
    assert data.files_holding([base, base + 250, base + 599]) == 3 and data.days_holding([base, base + 250, base + 599]) == 3


def _free_disk(monkeypatch, free_bytes: int) -> None:
    """Make the local disk report ``free_bytes`` free (the check reads statvfs)."""
    import os
    from types import SimpleNamespace

    monkeypatch.setattr(os, "statvfs", lambda path: SimpleNamespace(f_bavail=free_bytes // 4096, f_frsize=4096))


def test_generation_stops_before_it_would_fill_the_disk(tmp_path, monkeypatch):
    """The first file's size times the files to come is checked against the free disk before the rest are written:
    a one-line reason and one file written, not a disk filled mid-run."""
    import pytest

    from bench.core.storage import DISK_HEADROOM, ensure_free
    from bench.exceptions import NotEnoughDisk

    _free_disk(monkeypatch, DISK_HEADROOM + 10_000)  # room for a few small files beyond the headroom, not 600
    with pytest.raises(NotEnoughDisk, match=r"generating payments \(600 files of about .* MB\) needs about .* GB .* free"):
        generate_payments(tmp_path, 300, 2, 100, 1, progress=None)
    assert len(list(tmp_path.rglob("part-*.parquet"))) == 1 and not list(tmp_path.rglob("_manifest.json"))
    generate_payments(tmp_path, 1, 2, 100, 1, progress=None)  # a dataset that fits is written
    ensure_free("s3a://bucket/warehouse", 10**15, "anything")  # an object store is not checked
