"""The same operations on each storage the runs were measured on (local disk, an object store, one with S3-like
latency per request): timings move with the storage, bytes and files do not, and requests say why."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bench.core import uncertainty
from bench.core.units import human_bytes
from bench.report import charts
from bench.report.html_parts import img as _img
from bench.report.html_parts import note as _note
from bench.report.html_parts import table as _table
from bench.results import load
from bench.results.contract import HOTFIX, REFERENCE_ENGINE
from bench.results.schema import TOTAL_REQUESTS, HotfixUpdate

SCENARIO = HOTFIX
READ_PHASE = {"update": "after", "compaction": "after_compaction"}


def _requests(op) -> str:
    if pd.isna(getattr(op, "req_total", None)):
        return "–"
    kinds = [f"{k} {int(getattr(op, f'req_{k.lower()}'))}" for k in load.REQUEST_KINDS if k != TOTAL_REQUESTS
             if pd.notna(getattr(op, f"req_{k.lower()}", None)) and getattr(op, f"req_{k.lower()}")]
    return f"{int(op.req_total):,} ({', '.join(kinds)})"


def _dashboards(reads: pd.DataFrame, op) -> str:
    """The dashboards after the operation on Spark: the sum of each query's median, and of its min and max."""
    mine = reads[(reads.config_id == op.config_id) & (reads.operation == op.operation)
                 & (reads.phase == READ_PHASE.get(op.operation, "after"))]
    if mine.empty:
        return "–"
    text = f"{mine.median_s.sum():.2f} ({mine.min_s.sum():.2f}–{mine.max_s.sum():.2f})"
    per_read = mine.requests_per_read.dropna()
    return text + (f" · {per_read.sum():,.0f} requests" if not per_read.empty else "")


def per_route(labelled: list[tuple[str, load.Run]]) -> pd.DataFrame | None:
    """Every locate route's hotfix update on each storage: does merge-on-read's saving survive on an object store once
    the update stops reading the whole table? None where the runs hold the baseline route only."""
    records = [(label, r) for label, run in labelled for r in run.records(SCENARIO, "update", route=None)]
    if len({r.route for _, r in records}) < 2:
        return None
    rows = []
    for label, r in records:
        summary, update = r.spread, r.view(HotfixUpdate)
        locate, requests = update.locate, update.requests
        rows.append({"configuration": r.config_id, "route": r.route, "storage": label,
                     "median s (interval)": uncertainty.median_text(summary.median or 0.0, summary.ci95, summary.n),
                     "requests": f"{int(requests.get(TOTAL_REQUESTS, 0)):,}" if requests else "–",
                     "files read / table": f"{locate.largest_scan_files if locate.largest_scan_files is not None else '?'}/"
                                           f"{update.table_data_files if update.table_data_files is not None else '?'}"
                     if locate and locate.scans else "–",
                     "bytes read": human_bytes(locate.bytes_read) if locate else "–",
                     "written": human_bytes(update.filesystem.bytes_added if update.filesystem else None)})
    return pd.DataFrame(rows).sort_values(["configuration", "route", "storage"], kind="stable")


def section_storage(runs: list[load.Run], out: Path) -> str:
    labelled = [(load.storage_kind(r.environment), r) for r in runs]
    if len({label for label, _ in labelled}) < 2:
        return ""
    rows: list[dict] = []
    samples: list[dict] = []
    first: dict = {}
    for label, run in labelled:
        ops = load.operations(run)
        ops = ops[ops.scenario == SCENARIO] if not ops.empty else ops
        reads = load.reads(run)
        reads = reads[(reads.engine == REFERENCE_ENGINE) & reads.unsupported.isna() & (reads.scenario == SCENARIO)]
        for op in ops.itertuples():
            base = first.setdefault((op.config_id, op.operation), op.median_s)
            rows.append({"configuration": op.config_id, "operation": op.operation, "storage": label,
                         "median s (interval)": uncertainty.median_text(
                             op.median_s, (op.ci_low_s, op.ci_high_s) if pd.notna(op.ci_low_s) else None,
                             int(op.rounds) if pd.notna(op.rounds) else None),
                         f"× {labelled[0][0]}": f"{op.median_s / base:.2f}" if base else "–",
                         "requests (by kind)": _requests(op), "written": human_bytes(op.fs_bytes_added),
                         "+files": f"{int(op.fs_data_files_added or 0) + int(op.fs_delete_files_added or 0)}",
                         "dashboards after s (min–max)": _dashboards(reads, op), "run": run.run_id})
        samples += [{"config_id": r.config_id, "storage": label, "seconds": s}
                    for r in run.records(SCENARIO, "update") for s in r.seconds]
    if not rows:
        return _note("the runs on different storage hold no payments-hotfix operation to set side by side")
    frame = pd.DataFrame(rows).sort_values(["operation", "configuration"], kind="stable", ascending=[False, True])
    parts = []
    if samples:
        parts.append(_img(charts.by_storage(pd.DataFrame(samples), "Hotfix update on each storage"), "update by storage",
                          out, "update_by_storage"))
    parts.append(_table(frame))
    routed = per_route(labelled)
    if routed is not None:
        parts += ["<h3>The hotfix update per locate route on each storage</h3>", _table(routed)]
    parts.append(_note(
        "The same scenario, scale and configurations on each storage (one run each; the summary names them). "
        "Requests are the object store's own counters for the measured operation (last round) and for each "
        "dashboard read; 'written' and '+files' come from the storage listing and should match across storages. "
        "With an added delay every request of Spark and the read engines waits that long before the server sees "
        "it; the harness's own listings and table resets do not."))
    return "".join(parts)
