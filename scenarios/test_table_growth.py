"""Table growth: the payments hotfix of a fixed number of scattered rows on tables of increasing size.

The table keeps its days and rows per file and doubles its files per day (1, 2, 4, ... ``growth_steps``
sizes), so a copy-on-write update rewrites about as many files each time (one per changed row) while every
configuration's MERGE has more table to join against. Records per configuration and size: time (rounds on the
restored table), bytes and files written, files touched; the report fits how each cost grows and extrapolates
to the seeds' table (1,200 rows over 4,800 files). Every round's changed rows are verified.

Run with:  pytest scenarios/test_table_growth.py --scale tiny --formats iceberg
Grid:      every selected configuration x growth_steps table sizes x one scale.
"""

from __future__ import annotations

import pytest

from bench.datagen import HOTFIX_STATUS, TXN_ID_BASE, generate_payments
from bench.ledger import DATA, LEDGER
from bench.measure import Rounds, measured

pytestmark = pytest.mark.spark


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One point per table size: 1, 2, 4, ... files per day, per the run's scale."""
    if "files_per_day" in metafunc.fixturenames:
        from bench.pytest_plugin import SESSION_KEY

        steps = metafunc.config.stash[SESSION_KEY].scale.growth_steps
        metafunc.parametrize("files_per_day", [2 ** i for i in range(steps)], ids=[f"{2 ** i}fpd" for i in range(steps)])


def test_table_growth(benchmark, lab, cowmor, config_id, files_per_day, progress):
    scale, fmt, spark = cowmor.scale, lab.fmt, lab.spark
    with LEDGER.spend(DATA):
        data = generate_payments(cowmor.workspace.data_dir, scale.days, files_per_day, scale.rows_per_file, cowmor.seed,
                                 progress=None)
    keys = data.hotfix_keys(scale.hotfix_rows)
    keys_view = lab.keys_view("growth_keys", keys)
    files_touched = len({(k - TXN_ID_BASE) // data.rows_per_file for k in keys})
    rounds, state = Rounds(len(keys) * data.bytes_per_row), {}

    def setup():
        rounds.close()
        progress(f"{config_id} {data.files} files: round {rounds.number}/{scale.sweep_rounds} "
                 f"({len(keys)} rows in {files_touched} files)")
        state["table"] = lab.session.base_table(spark, fmt, f"growth_{files_per_day}fpd", data)
        rounds.start(fmt, state["table"])
        return (state["table"],), {}

    benchmark.pedantic(measured(lambda table: fmt.update(spark, table, keys_view, {"status": f"'{HOTFIX_STATUS}'"})),
                       setup=setup, rounds=scale.sweep_rounds, iterations=1)
    rounds.close()
    rel = fmt.relation(spark, state["table"])
    changed = spark.sql(f"SELECT COUNT(*) FROM {rel} WHERE status = '{HOTFIX_STATUS}'").collect()[0][0]
    assert changed == len(keys), f"{changed} rows changed, expected {len(keys)}"
    last = rounds.last
    benchmark.extra_info.update({
        "scenario": "table_growth", "operation": "update", "param": f"{data.files}files", "config_id": config_id,
        "family": fmt.family, "mode": fmt.mode, "scale": scale.name, "seed": cowmor.seed,
        "files_total": data.files, "rows_total": data.rows, "file_bytes_mean": data.bytes / data.files,
        "rows_targeted": len(keys), "files_touched": files_touched, "rows_changed_verified": changed,
        "rounds": rounds.records, "filesystem": last["filesystem"], "metadata": last["metadata"],
        "write_amplification": last["write_amplification"], "logical_bytes": last["logical_bytes"],
        "table_bytes_on_disk": last["table_bytes_on_disk"], "answers_verified": True,
        "settings": [vars(s) for s in fmt.settings()],
    })
