"""Finding the rows: what each update read to find its rows, per locate route, and copy-on-write ÷ merge-on-read per
route (renders ``report.locate``'s aggregation only)."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from bench.core import uncertainty
from bench.core.units import human_bytes
from bench.report.html_parts import note as _note
from bench.report.html_parts import table as _table
from bench.report.locate import ROUTE_TEXT, Located, Ratio


def _seconds(x: Located) -> str:
    figure = uncertainty.describe(x.seconds)
    return uncertainty.median_text(figure["median"], figure["ci95"], figure["n"], unit=" s")


def _read(x: Located) -> str:
    if x.files_read is None:
        return (f"no SQL scan: the write client looked the keys up itself ({human_bytes(x.bytes_read)} read by its tasks)"
                if x.bytes_read is not None else "not measured")
    touched = f" to change rows in {x.files_touched:,} files" if x.files_touched is not None else ""
    return f"read {x.files_read:,} of {x.table_files:,} files ({human_bytes(x.bytes_read)}){touched}"


def section(items: list[Located], ratios: list[Ratio]) -> str:
    if not items:
        return _note("No update recorded its locate route (runs before routes existed took 'join').")
    routes = list(dict.fromkeys(x.route for x in items))
    parts = ["<p>Before an update writes anything it must find its rows. " + "; ".join(
        f"<b>{html.escape(r)}</b>: {html.escape(ROUTE_TEXT.get(r, r))}" for r in routes)
        + ". Files read are the largest scan's (Spark's own scan metrics; Iceberg counts file splits), bytes those "
          "the statement's tasks read.</p>"]
    flagged = [x for x in items if x.flagged]
    if flagged:
        parts.append('<p class="warn">' + html.escape(
            "Promised pruning, read the whole table: " + ", ".join(f"{x.config_id} {x.route} {x.step or ''}".strip()
                                                                     for x in flagged)) + "</p>")
    rows = [{"scenario": x.scenario, "file size": x.step or "–", "configuration": x.config_id, "route": x.route,
             "update median (interval)": _seconds(x), "finding the rows": _read(x), "written": human_bytes(x.bytes_written),
             "full scan": {True: "yes" + (" (flagged)" if x.flagged else ""), False: "no", None: "–"}[x.full_scan],
             **({"requests (GET / PUT / LIST)": _requests(x.requests)} if any(y.requests for y in items) else {})}
            for x in sorted(items, key=lambda x: (x.scenario, x.layout or "", _mb(x.param), x.config_id, routes.index(x.route)))]
    parts.append(_table(pd.DataFrame(rows)))
    if ratios:
        table = [{"scenario": r.scenario, "file size": r.step or "–", "route": r.route, "pair": f"{r.cow} ÷ {r.mor}",
                  "CoW ÷ MoR": r.cell(),
                  "verdict": r.verdict}
                 for r in sorted(ratios, key=lambda r: (r.scenario, r.layout or "", _mb(r.param), r.cow, r.mor, routes.index(r.route)))]
        parts.append("<h3>Copy-on-write ÷ merge-on-read, per route</h3>" + _table(pd.DataFrame(table)))
    return "".join(parts)


def _requests(made: dict | None) -> str:
    if not made:
        return "–"
    return f"{made.get('total', 0):,} ({made.get('GET', 0):,} / {made.get('PUT', 0):,} / {made.get('LIST', 0):,})"


def _mb(param: str | None) -> float:
    try:
        return float((param or "0").removesuffix("MB"))
    except ValueError:
        return np.inf
