"""File size: the same scattered update on tables whose files grow by steps of 4x.

Copy-on-write rewrites every file a changed row sits in, so its cost is (files touched) x (bytes per file);
merge-on-read and deletion vectors write in proportion to the rows changed. Every step has the same
``file_size_files`` files (one settlement day each) and the same update: ``file_size_touched`` rows, one in each
of as many files. Only the rows per file grow: 4x per step from ``file_size_first_rows`` (at `small` about
0.34, 1.3, 5, 21 and 66 MB per file; at `medium` to ~260 MB; two small steps at `tiny`).

Per configuration and step: the update (rounds, each on the table restored), bytes and files written and removed,
the dashboards before and after, and where the configuration merges on read, one compaction (its time, bytes
and files) and the dashboards after it. Every step's data is generated once and shared by every configuration;
each step's tables are removed when the step is done, and the workspace's peak size is recorded. The formats'
target file size is set to at least twice the step's file size, so no file is split (``settings`` say so).

Run with:  pytest scenarios/test_file_size.py --scale tiny --formats iceberg
Grid:      every selected configuration x file_size_steps file sizes x locate route (``--routes``; the scale's
           ``file_size_routes`` where set: the join at `tiny`) x one scale.
"""

from __future__ import annotations

import functools

import pytest

from bench.core.ledger import DATA, LEDGER
from bench.core.storage import Files
from bench.formats.base import JOIN
from bench.measure.rounds import Observation, timed
from bench.workload.datagen import HOTFIX_STATUS, TXN_ID_BASE, PaymentsData, generate_payments
from bench.workload.queries import PAYMENTS_FRAME_COLUMNS, payments_frame, payments_queries
from bench.workload.scales import PRESETS, Scale

pytestmark = pytest.mark.spark
PEAK = {"bytes": 0}  # the workspace's largest size seen at the end of a step, over the whole run


def rows_per_file(first: int, step: int) -> int:
    return first * 4 ** step


def step_id(scale: Scale, step: int) -> str:
    """``8400rpf``; a layout other than the preset's (``--param file_size_files=8 --param file_size_touched=1``) is
    named too, so its points sit beside the preset's when runs are reported together instead of replacing them."""
    preset = PRESETS.get(scale.name)
    layout = (scale.file_size_files, scale.file_size_touched)
    named = preset is None or layout != (preset.file_size_files, preset.file_size_touched)
    return f"{rows_per_file(scale.file_size_first_rows, step)}rpf" + (f"-{layout[1]}of{layout[0]}" if named else "")


# the grid, per the run's scale (the plugin parametrizes it): one point per file size
GRID = {"size_step": lambda scale: [(s, step_id(scale, s)) for s in range(scale.file_size_steps)]}


def ROUTES(scale, selected: list[str]) -> list[str]:  # noqa: N802 - the plugin's hook name (bench/run/plugin.py)
    """The selected routes the scale's ``file_size_routes`` keeps; where it keeps none of them, the first selected."""
    return scale.kept_routes(scale.file_size_routes, selected)
# a step's time relative to the first, for the time-left estimate: a fixed part, then the data, 4x per step (at
# `small`, 1-of-8 layout, a test took on average 6.1, 5.4, 7.5, 15.9 and 48.9 s at the five steps: 1, 0.9, 1.2, 2.6, 8)
WEIGHT = lambda params: 1 + 4 ** params["size_step"] / 32  # noqa: E731


@functools.lru_cache(maxsize=16)
def _expected(data: PaymentsData, lookup_id: int, keys: tuple[int, ...]):
    """The dashboards' answers before and after the update, from pandas on the generated files, read a part at a time
    (the largest step's 8.6 million rows would otherwise sit in Arrow and pandas at once); kept per step: every
    configuration reads the same."""
    queries = payments_queries(data.last_day, lookup_id=lookup_id)
    frame = payments_frame(data.read_in_parts(PAYMENTS_FRAME_COLUMNS), keep=[*keys, lookup_id])
    before = {q.name: q.expected(frame) for q in queries}
    frame.loc[frame["txn_id"].isin(keys), "status"] = HOTFIX_STATUS
    return queries, before, {q.name: q.expected(frame) for q in queries}


def test_file_size(benchmark, lab, cowmor, config_id, size_step, route, progress):
    scale = cowmor.scale
    per_file = rows_per_file(scale.file_size_first_rows, size_step)
    with LEDGER.spend(DATA):
        data = generate_payments(cowmor.workspace.data_dir, scale.file_size_files, 1, per_file, cowmor.seed, progress=None)
    file_bytes = data.bytes / len(data.files)
    lab = lab.with_target_file_bytes(max(scale.target_file_bytes, int(2 * file_bytes)))  # never split a file
    step = max(1, scale.file_size_files // scale.file_size_touched)
    touched = list(range(0, scale.file_size_files, step))[: scale.file_size_touched]
    keys = [TXN_ID_BASE + f * per_file + per_file // 2 for f in touched]  # one row in the middle of each touched file
    queries, before, after = _expected(data, keys[0], tuple(keys))
    name = f"filesize_{size_step}"
    label = f"{config_id} ({route}) {file_bytes / 2**20:.2f} MB files ({len(keys)} rows in {len(touched)} of {len(data.files)} files)"

    progress(f"{label}: base table and dashboards before")
    base = lab.session.tables.base_table(lab.spark, lab.fmt, name, data)
    repeats = min(scale.read_repeats, scale.file_size_read_repeats)
    reads_before = lab.reads(base, queries, before, repeats)
    table, rounds, changed = lab.status_update_rounds(benchmark, name, data, keys, scale.sweep_rounds,
                                                  progress=progress, status=HOTFIX_STATUS, label=label)
    reads_after = lab.reads(table, queries, after, repeats)
    compaction, reads_compacted = None, None
    if lab.fmt.merges_on_read and route == JOIN:  # what compaction folds does not depend on how the rows were found
        progress(f"{label}: compaction")
        observed = Observation.start(lab.fmt, table)
        seconds, _ = timed(lab.fmt.compact, lab.spark, table)
        compaction = {"seconds": seconds, **observed.finish(), "live_files_after": lab.fmt.live_files(lab.spark, table)}
        reads_compacted = lab.reads(table, queries, after, repeats)
    workspace = sum(Files.of(str(cowmor.workspace.root)).walk().values())
    PEAK["bytes"] = max(PEAK["bytes"], workspace)
    lab.session.tables.drop(lab.spark, lab.fmt, name)  # this step's tables are done: free the disk
    progress(f"{label}: done; workspace {workspace / 2**20:,.0f} MB, peak so far {PEAK['bytes'] / 2**20:,.0f} MB")
    lab.record(benchmark, "file_size", "update", rounds, param=f"{file_bytes / 2**20:.3g}MB",
               file_bytes_mean=file_bytes, rows_per_file=per_file, files_total=len(data.files), rows_targeted=len(keys),
               rows_changed_verified=changed, bytes_in_touched_files=file_bytes * len(touched), table_bytes=data.bytes,
               reads_before=reads_before, reads_after=reads_after, compaction=compaction,
               reads_after_compaction=reads_compacted, workspace_bytes=workspace, workspace_peak_bytes=PEAK["bytes"],
               target_file_bytes=lab.fmt.target_file_bytes,
               **lab.located(rounds, len(data.files), len(touched), data.days_holding(keys), data.days))
