"""Table growth: the payments hotfix of a fixed number of scattered rows on tables of increasing size.

The table keeps its days and rows per file and doubles its files per day (``growth_steps`` sizes: 1, 2, 4, 8
at `small`, the scale's own 4 among them; 3 and 6 at `tiny`), so a copy-on-write update rewrites about as many files each time (one per changed row) while every
configuration's MERGE has more table to join against. Records per configuration and size: time (rounds on the
restored table), bytes and files written, files touched; the report fits how each cost grows and extrapolates
to the seeds' table (1,200 rows over 4,800 files). Every round's changed rows are verified.

Run with:  pytest scenarios/test_table_growth.py --scale tiny --formats iceberg
Grid:      every selected configuration x growth_steps table sizes x one scale.
"""

from __future__ import annotations

import pytest

from bench.core.ledger import DATA, LEDGER
from bench.workload.datagen import HOTFIX_STATUS, generate_payments

pytestmark = pytest.mark.spark


def sizes(files_per_day: int, steps: int) -> list[int]:
    """``steps`` doublings of files per day ending one doubling above the scale's own (at `small`: 1, 2, 4, 8), so
    one of them is the payments table the other scenarios already built."""
    return [max(1, files_per_day * 2 ** i // 2 ** max(0, steps - 2)) for i in range(steps)]


# the grid, per the run's scale (the plugin parametrizes it): one point per table size
GRID = {"files_per_day": lambda scale: [(n, f"{n}fpd") for n in sizes(scale.files_per_day, scale.growth_steps)]}


def test_table_growth(benchmark, lab, cowmor, config_id, files_per_day, progress):
    scale = cowmor.scale
    with LEDGER.spend(DATA):
        data = generate_payments(cowmor.workspace.data_dir, scale.days, files_per_day, scale.rows_per_file, cowmor.seed,
                                 progress=None)
    keys = data.hotfix_keys(scale.hotfix_rows)
    files_total = len(data.files)
    files_touched = data.files_holding(keys)
    name = "payments" if files_per_day == scale.files_per_day else f"growth_{files_per_day}fpd"  # shared base
    table, rounds, changed = lab.status_update_rounds(
        benchmark, name, data, keys, scale.sweep_rounds, progress=progress, status=HOTFIX_STATUS,
        label=f"{config_id} {files_total} files ({len(keys)} rows in {files_touched} files)")
    lab.record(benchmark, "table_growth", "update", rounds, param=f"{files_total}files",
               files_total=files_total, rows_total=data.rows, file_bytes_mean=data.bytes / files_total,
               rows_targeted=len(keys), files_touched=files_touched, rows_changed_verified=changed,
               partitions_touched=data.days_holding(keys), table_partitions=data.days)
