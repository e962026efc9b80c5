"""The short text table ``make bench`` ends with."""

from __future__ import annotations

import statistics

import pandas as pd

from bench.core.ledger import describe
from bench.core.units import human_bytes
from bench.results import load
from bench.results.contract import FILE_SIZE, HOTFIX, REFERENCE_ENGINE
from bench.results.schema import FileSizeUpdate, HotfixUpdate


def _count(value) -> int:
    return 0 if value is None or pd.isna(value) else int(value)


def _read_median(reads: pd.DataFrame, op: pd.Series, phase: str) -> float | None:
    """The dashboards' summed medians around one operation: its own scenario and file-size step, not another's."""
    if reads.empty:
        return None
    same_param = reads.param.isna() if not isinstance(op.param, str) else reads.param == op.param
    sel = reads[(reads.config_id == op.config_id) & (reads.scenario == op.scenario) & (reads.operation == op.operation)
                & same_param & (reads.phase == phase)]
    return None if sel.empty else float(sel["median_s"].sum())


def _routes(run: load.Run) -> list[str]:
    """The payments hotfix and the file-size steps per locate route: what each update read to find its rows, beside
    its time, its writes and its peak memory (the driver JVM's resident memory)."""
    lines: list[str] = []
    for scenario in (HOTFIX, FILE_SIZE):
        records = run.records(scenario, "update", route=None)
        if len({r.route for r in records}) < 2 and not any(r.memory for r in records):
            continue
        lines += ["", f"finding the rows ({scenario.replace('_', ' ')} update): files the largest scan read / the "
                      "table's data files, bytes read; peak resident memory of the driver JVM",
                  f"{'configuration':<13} {'step':<10} {'route':<7} {'median s':>9} {'files read':>11} {'bytes read':>10} "
                  f"{'written':>9} {'peak JVM':>9}  full scan"]
        lines += [_route_line(r) for r in sorted(records, key=_route_order)]
    return lines


def _route_order(r: load.Record) -> tuple:
    routes = ("join", "pruned", "index")
    return (r.config_id, float((r.param or "0MB").removesuffix("MB") or 0) if (r.param or "").endswith("MB") else 0,
            routes.index(r.route) if r.route in routes else 9)


def _route_line(r: load.Record) -> str:
    update = r.view(HotfixUpdate) if r.scenario == HOTFIX else r.view(FileSizeUpdate)
    locate, table_files = update.locate, update.table_data_files if update.table_data_files is not None else "?"
    files = f"{locate.largest_scan_files or 0}/{table_files}" if locate and locate.scans else f"-/{table_files}"
    full = {True: "yes", False: "no", None: "-"}[update.locate_full_scan]
    return (f"{r.config_id:<13} {(r.param or '-'):<10} {r.route:<7} {statistics.median(r.seconds):>9.2f} {files:>11} "
            f"{human_bytes(locate.bytes_read if locate else None):>10} {human_bytes(update.filesystem.bytes_added):>9} "
            f"{human_bytes(r.peak_memory.jvm_rss_peak_bytes):>9}  {full}")


def text_summary(run: load.Run) -> str:
    ops = load.operations(run)
    reads = load.reads(run)
    reads = reads[(reads.engine == REFERENCE_ENGINE) & reads.unsupported.isna()]
    outcomes = load.outcomes(run)
    lines = [f"cowmor run {run.run_id} (scale {run.scale}; {load.storage_label(run.environment)})", ""]
    header = f"{'configuration':<13} {'operation':<16} {'median s':>9} {'min-max s':>13} {'written':>9} {'+data':>6} {'+del':>5} {'-files(meta)':>12} {'write amp':>9} {'dash s before→after':>21}"
    lines += [header, "-" * len(header)]
    ordered = ops.sort_values(["scenario", "operation", "param", "config_id"], na_position="first") if not ops.empty else ops
    for _, r in ordered.iterrows():
        before = _read_median(reads, r, "before")
        after = _read_median(reads, r, "after") or _read_median(reads, r, "after_compaction")
        dash = f"{before:.2f}→{after:.2f}" if before is not None and after is not None else (f"→{after:.2f}" if after else "-")
        removed = _count(r.meta_data_files_removed) + _count(r.meta_delete_files_removed)
        amp = f"{r.write_amplification:,.0f}x" if pd.notna(r.write_amplification) else "-"
        operation = f"{r.operation}:{r.param}" if isinstance(r.param, str) else (r.operation if r.scenario == HOTFIX else r.scenario)
        lines.append(f"{r.config_id:<13} {operation:<16} {r.median_s:>9.2f} {f'{r.min_s:.2f}-{r.max_s:.2f}':>13} "
                     f"{human_bytes(r.fs_bytes_added):>9} {_count(r.fs_data_files_added):>6} {_count(r.fs_delete_files_added):>5} "
                     f"{int(removed):>12} {amp:>9} {dash:>21}")
    lines += _routes(run)
    skipped = outcomes[outcomes.outcome == "skipped"] if not outcomes.empty else outcomes
    failed = outcomes[outcomes.outcome == "failed"] if not outcomes.empty else outcomes
    by_route = skipped.reason.fillna("").str.startswith("route ") if not skipped.empty else pd.Series(dtype=bool)
    for reason, group in skipped[by_route].groupby(skipped[by_route].reason.str.split(":").str[0]) if by_route.any() else ():
        lines.append(f"NO ROUTE {reason.removeprefix('route ')} for {', '.join(sorted(set(group.config_id)))}: "
                     f"{group.reason.iloc[0].split(': ', 1)[-1]}")
    skipped = skipped[~by_route] if by_route.any() else skipped
    for family, group in skipped.groupby(skipped.config_id.map(run.matrix.family_of), sort=True) if not skipped.empty else ():
        lines.append(f"SKIPPED {family} ({', '.join(sorted(set(group.config_id)))}): {group.reason.iloc[0]}")
    for _, o in failed.iterrows():
        lines.append(f"FAILED  {o.config_id} ({o.test}): {o.reason}")
    breakdown = run.time_breakdown
    if breakdown:
        lines.append(f"time: {describe(breakdown)}")
    lines.append("")
    lines.append("written = bytes added to the table directory (filesystem); +data/+del = data and delete/DV/log files added; "
                 "-files(meta) = files the commit removed per the format's metadata; write amp = written / bytes of the changed rows")
    return "\n".join(lines)
