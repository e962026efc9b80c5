"""The memory a configuration needs: the smallest driver memory with which the payments hotfix update completes.

Row-level operations fail on memory before they fail on time (Iceberg's v3 deletion-vector MERGE where v2 holds,
apache/iceberg #17209; Hudi's record index at initialisation, apache/hudi #19670). Per configuration and route,
and on two tables (the payments table of the scale, and the file-size steps' largest files), a bisection over
driver memories (``bench.measure.needed``, rungs from ``memory_min_mb`` to ``memory_max_mb``): each attempt starts the
family's Spark application with that much, restores the base table (built once with the run's own memory), runs the
update, and counts the changed rows. A failure is recorded with the JVM's own words, and told apart when it was
for memory. In local mode the driver is the executor, so the driver's memory is the whole engine's.

Run with:  pytest scenarios/test_memory_needed.py --scale small --formats iceberg --routes join,pruned
Grid:      every selected configuration x locate route (``--routes``; the scale's ``memory_routes`` where set) x table
           (hotfix, largest file-size step).
"""

from __future__ import annotations

import pytest

from bench.core.ledger import DATA, LEDGER
from bench.measure.needed import ladder, memory_failure, next_rung, verdict
from bench.workload.datagen import HOTFIX_STATUS, TXN_ID_BASE, generate_payments

pytestmark = pytest.mark.spark
GRID = {"table": lambda scale: [("hotfix", "hotfix"), ("largest_file_step", "largest-file-step")]}
WEIGHT = lambda params: 4.0  # noqa: E731 - a few applications started per test, each restoring and updating


def ROUTES(scale, selected: list[str]) -> list[str]:  # noqa: N802 - the plugin's hook name (bench/run/plugin.py)
    """The selected routes the scale's ``memory_routes`` keeps; where it keeps none of them, the first selected."""
    return scale.kept_routes(scale.memory_routes, selected)


def _largest_file_step(cowmor):
    """The file-size scenario's last step: its files, its touched rows (one in the middle of each touched file)."""
    scale = cowmor.scale
    per_file = scale.file_size_first_rows * 4 ** (scale.file_size_steps - 1)
    with LEDGER.spend(DATA):
        data = generate_payments(cowmor.workspace.data_dir, scale.file_size_files, 1, per_file, cowmor.seed, progress=None)
    step = max(1, scale.file_size_files // scale.file_size_touched)
    touched = list(range(0, scale.file_size_files, step))[: scale.file_size_touched]
    return data, [TXN_ID_BASE + f * per_file + per_file // 2 for f in touched]


def test_memory_needed(benchmark, lab, payments, cowmor, config_id, route, table, progress, capfd):
    scale = cowmor.scale
    if table == "hotfix":
        data, keys, name = payments, payments.hotfix_keys(scale.hotfix_rows), "payments"  # the hotfix's own table
    else:
        data, keys = _largest_file_step(cowmor)
        name = "memory_largest_step"
        lab = lab.with_target_file_bytes(max(scale.target_file_bytes, int(2 * data.bytes / len(data.files))))
    fmt = lab.fmt
    progress(f"{config_id} ({route}) {table}: base table with the run's {cowmor.spark_options.driver_memory}")
    cowmor.tables.base_table(lab.spark, fmt, name, data)
    rungs = ladder(scale.memory_min_mb, scale.memory_max_mb)
    attempts: list[dict] = []

    def attempt(mb: int) -> dict:
        capfd.readouterr()  # what the JVM prints from here on is this attempt's
        try:
            done = lab.update_with_driver_memory(mb, name, data, keys, HOTFIX_STATUS)
        except Exception as err:  # noqa: BLE001 - any failure of the attempt is its result, recorded with its words
            words = memory_failure(str(err), capfd.readouterr().err)
            first = (str(err).strip().splitlines() or [type(err).__name__])[0][:300]
            return {"driver_memory_mb": mb, "completed": False, "out_of_memory": words is not None,
                    "reason": words or first, "error": first}
        assert done["rows_changed_verified"] == len(keys), \
            f"{config_id} with {mb} MB: {done['rows_changed_verified']} rows changed, expected {len(keys)}"
        return {"driver_memory_mb": mb, "completed": True, **done}

    def search() -> None:
        done: dict[int, bool] = {}
        while (mb := next_rung(rungs, done)) is not None:
            progress(f"{config_id} ({route}) {table}: the update with a {mb} MB driver")
            result = attempt(mb)
            done[mb] = result["completed"]
            attempts.append(result)

    benchmark.pedantic(search, rounds=1, iterations=1)
    found = verdict(rungs, attempts)
    least = " (the least tried: it may need less)" if found["needed_mb"] == rungs[0] else ""
    progress(f"{config_id} ({route}) {table}: needs {found['needed_mb'] or f'more than {rungs[-1]}'} MB{least}")
    lab.record(benchmark, "memory_needed", "search", param=table, table=table, attempts=attempts,
               rows_targeted=len(keys), files_total=len(data.files), file_bytes_mean=data.bytes / len(data.files),
               table_bytes=int(data.bytes), master=cowmor.spark_options.master, route=route, **found)
