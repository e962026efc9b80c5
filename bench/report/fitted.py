"""The cost model per configuration and locate route, fitted on every measured update (file-size steps, the hotfix,
table growth, the sweep) and checked on a point it did not see: the report's computation, which sections render."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bench.report.model import MB, Fit, HeldOut, Point, files_touched, fit, held_out, locate_bytes, table_drivers
from bench.results import load
from bench.results.contract import BASELINE_ROUTE, FILE_SIZE, HOTFIX, TABLE_GROWTH, UPDATE_SWEEP, Record
from bench.results.schema import FileSizeUpdate, GrowthUpdate, HotfixUpdate, Reads, SweepUpdate

# the update's drivers: the files it rewrites or marks, the partitions they lie in, the bytes in them, and the bytes
# its search goes through
W_DRIVERS = ["files_touched", "partitions_touched", "bytes_in_touched_files", "locate_bytes"]
R_DRIVERS = ["table_bytes", "files_touched"]
C_DRIVERS = ["files_touched", "bytes_in_touched_files"]
UNITS = {"files_touched": (1.0, "file touched"), "partitions_touched": (1.0, "partition touched"),
         "bytes_in_touched_files": (MB, "MB in touched files"),
         "table_bytes": (MB, "MB of table"), "locate_bytes": (MB, "MB searched to find the rows")}


def mean_read(reads: Reads | None) -> list[float]:
    """The dashboards' mean latency per repeat (Spark, the reference): one sample per warm repeat."""
    series = [q.seconds or [q.median] for q in (reads or {}).values() if q.median is not None]
    if not series:
        return []
    n = min(len(s) for s in series)
    return [float(np.mean([s[i] for s in series])) for i in range(n)]


def drivers_of(r: Record) -> dict[str, float] | None:
    """The drivers of a recorded update: files it touched, the partitions they lie in (where known), bytes in them,
    bytes of the table, bytes its route searched."""
    out: dict[str, float] | None = None
    if r.operation != "update":
        return None
    if r.scenario == FILE_SIZE:  # one file per partition (settlement day) at every step
        step = r.view(FileSizeUpdate)
        out = {"files_touched": step.files_touched, "bytes_in_touched_files": step.bytes_in_touched_files,
               "table_bytes": step.table_bytes,
               "partitions_touched": step.files_touched if step.partitions_touched is None else step.partitions_touched}
    elif r.scenario in (TABLE_GROWTH, UPDATE_SWEEP):
        point = r.view(GrowthUpdate) if r.scenario == TABLE_GROWTH else r.view(SweepUpdate)
        if point.files_touched is None or not point.files_total:
            return None
        per_file = (point.file_bytes_mean if isinstance(point, GrowthUpdate) else None) \
            or ((point.table_bytes_on_disk or 0) / point.files_total)
        out = {"files_touched": point.files_touched, "bytes_in_touched_files": point.files_touched * per_file,
               "table_bytes": per_file * point.files_total}
        if point.partitions_touched is not None:
            out["partitions_touched"] = point.partitions_touched
    elif r.scenario == HOTFIX:
        update = r.view(HotfixUpdate)
        base = update.base
        if not base or not base.files or base.bytes is None:
            return None
        per_file = base.bytes / base.files
        touched = update.files_touched or table_drivers(base.files, 1.0, update.rows_targeted or 0)["files_touched"]
        out = {"files_touched": touched, "bytes_in_touched_files": touched * per_file, "table_bytes": base.bytes,
               # recorded since the partition driver; before it, the days the scattered rows are expected to touch
               "partitions_touched": update.partitions_touched
               or min(touched, files_touched(base.days or base.files, update.rows_targeted or 0))}
    if out is not None:
        out["locate_bytes"] = locate_bytes(r.route, out["table_bytes"], out["bytes_in_touched_files"])
    return out


def layout_of(r: Record) -> str:
    """``90 days x 4 files`` for an update of the payments table (its layout tells its points apart), else ''."""
    if (r.scenario, r.operation) != (HOTFIX, "update"):
        return ""
    base = r.view(HotfixUpdate).base
    return f"{base.days} days x {base.files_per_day} files" if base and base.days else ""


@dataclass
class ConfigModel:
    config_id: str
    write: Fit | None
    read: Fit | None
    compaction: Fit | None
    checks: dict[str, HeldOut | None]
    unidentified: list[str] = field(default_factory=list)  # update drivers the run's points cannot separate
    route: str = BASELINE_ROUTE


def routes_of(run: load.Run) -> list[str]:
    """The locate routes the run's file-size steps were measured on (the baseline first)."""
    found = {r.route for r in run.records(FILE_SIZE, route=None)}
    return [BASELINE_ROUTE, *sorted(found - {BASELINE_ROUTE})] if found else []


def models(run: load.Run, route: str = BASELINE_ROUTE) -> dict[str, ConfigModel]:
    """Per configuration: the update W fitted on every point measured by ``route``; the read after it R and the
    compaction C on the baseline's (how the rows were found changes neither); each checked on a held-out point."""
    w: dict[str, list[Point]] = {}
    rd: dict[str, list[Point]] = {}
    c: dict[str, list[Point]] = {}
    hotfix_drivers: dict[str, dict[str, float]] = {}
    main_hotfix = run.records(HOTFIX, "update")  # not a layout a merge kept aside: it has no compaction
    for r in run.records(route=None, other_layouts=True):
        drivers = drivers_of(r)
        if drivers is None or r.operation != "update" or r.route not in (route, BASELINE_ROUTE):
            continue
        label = f"{r.scenario} {r.param or layout_of(r)}".strip()
        if r.route == route:
            w.setdefault(r.config_id, []).append(Point(drivers, r.seconds, label))
        if r.route != BASELINE_ROUTE:
            continue
        if r.scenario == HOTFIX and r in main_hotfix:  # the layout its compaction record belongs to
            hotfix_drivers[r.config_id] = drivers
        update = r.view(FileSizeUpdate) if r.scenario == FILE_SIZE else r.view(HotfixUpdate) if r.scenario == HOTFIX else None
        after = mean_read(update.reads_after) if update else []
        if after:
            rd.setdefault(r.config_id, []).append(Point(drivers, after, label))
        comp = update.compaction if isinstance(update, FileSizeUpdate) else None
        if comp and comp.seconds is not None:
            c.setdefault(r.config_id, []).append(Point(drivers, [comp.seconds], label))
    for r in run.records(HOTFIX, "compaction"):
        if r.config_id in hotfix_drivers:
            c.setdefault(r.config_id, []).append(Point(hotfix_drivers[r.config_id], r.seconds, HOTFIX))
    out = {}
    for config_id, points in w.items():
        if not any(p.label.startswith(FILE_SIZE) for p in points):
            continue
        comp_drivers = C_DRIVERS
        wd, rdd, cd = (identified(ps, ds) for ps, ds in ((points, W_DRIVERS), (rd.get(config_id, []), R_DRIVERS),
                                                          (c.get(config_id, []), comp_drivers)))
        out[config_id] = ConfigModel(
            config_id, fit(points, wd), fit(rd.get(config_id, []), rdd), fit(c.get(config_id, []), cd),
            {"update": held_out(points, wd, "bytes_in_touched_files"),
             "read after the update": held_out(rd.get(config_id, []), rdd, "table_bytes"),
             "compaction": held_out(c.get(config_id, []), cd, "bytes_in_touched_files")},
            sorted(set(W_DRIVERS) - set(wd)), route)
    return out


def identified(points: list[Point], drivers: list[str]) -> list[str]:
    """The drivers every point knows that vary over the points and are not another driver under a new name (one
    that never varies cannot be told from the constant term: e.g. files touched, the same at every file-size step,
    until the hotfix adds a point with many; the bytes a pruned route searches are the bytes in the touched files).
    A driver that differs from a kept one at a single point is that driver too: one point would set the split
    between them alone (the partitions touched, one per file touched at every file-size step, need two layouts
    with several touched files in a partition)."""
    kept: list[str] = []
    for d in drivers:
        if not all(d in p.drivers for p in points):
            continue
        values = [round(p.drivers[d], 6) for p in points]
        if len(set(values)) > 1 and not any(_differ_at(values, [round(p.drivers[k], 6) for p in points]) < 2 for k in kept):
            kept.append(d)
    return kept


def _differ_at(a: list[float], b: list[float]) -> int:
    return sum(x != y for x, y in zip(a, b))
