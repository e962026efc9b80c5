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
