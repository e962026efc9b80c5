"""The choice for a workload: the decision maps of the run's whole cycles and of its update sweep
(bench.report.workloads), their readings and tables; the report's section and the findings page both draw it here."""

from __future__ import annotations

import html
from pathlib import Path

from bench.report import charts, workloads
from bench.report.html_parts import img, note, table
from bench.report.model import UserTable
from bench.results.contract import Run


def section(run: Run, out: Path, name: str = "decision-map", tables: list[UserTable] | None = None) -> str:
    """Empty where the run measured no dinner peak, settlements or sweep with reads (the section is then left out);
    ``tables`` (``report --table``) are placed on the map along the update's shape."""
    return _cycles(run, out, name) + _shapes(run, out, f"{name}-shape", [placed(t) for t in tables or []])


def placed(t: UserTable) -> workloads.Placed:
    """A user's table as the map places it: its reads per write and the share of its files an update touches."""
    return workloads.Placed(t.name, t.reads_per_day / max(t.updates_per_day, 1e-9),
                            t.drivers["files_touched"] / max(t.files, 1.0), t.route)


def _cycles(run: Run, out: Path, name: str) -> str:
    cycles = workloads.samples(run)
    if not cycles:
        return ""
    mapped = workloads.decision_map(cycles)
    if mapped.empty:
        return "<p>One configuration per workload and route: nothing to set it against.</p>" + table(workloads.cycle_table(cycles))
    return (f"<p>{html.escape(workloads.sentence(mapped))}</p>"
            + img(charts.decision_map(mapped, workloads.SEED_WORKLOADS, "The cheapest configuration per write"),
                  "the decision map: the cheapest configuration against reads per write", out, name)
            + table(workloads.at_seed_ratios(mapped, run.matrix.merges_on_read)) + "<h3>Each cycle as measured</h3>"
            + table(workloads.cycle_table(cycles)))


def _shapes(run: Run, out: Path, name: str, tables: list[workloads.Placed]) -> str:
    """The second axis: one update of each sweep point's shape (the share of the table's files it touches) and the
    dashboards after it, priced per write along reads per write, per route."""
    points = workloads.shape_samples(run)
    mapped = workloads.decision_map(points) if points else None
    if mapped is None or mapped.empty:
        return ""
    parts = ["<h3>Along the update's shape</h3><p>Each point of the update sweep: one update touching that share of the "
             "table's files (its rounds) and the dashboards read after it, priced per write as a cycle of one write "
             "(compaction not counted: the sweep runs none). " + html.escape(workloads.sentence(mapped)) + "</p>"]
    placed = workloads.place(mapped, tables)
    for route, part in mapped.groupby("route", sort=True):
        marks = [(p.strip, p.x, p.table) for p in placed.itertuples() if p.route == route and isinstance(p.strip, str)] \
            if "strip" in placed else []
        parts.append(img(charts.decision_map(part, {}, f"The cheapest configuration per write by the update's shape ({route})",
                                             marks), f"the decision map along the update's shape, {route}", out, f"{name}-{route}"))
    if not placed.empty:
        parts.append("<h4>Your tables on the map</h4>" + table(placed.drop(columns=["strip", "x"], errors="ignore")))
    return "".join(parts) + note("A strip per sweep point, the share of the table's files its update touched; grey where "
                                 "no configuration is cheapest in enough resamples, or fewer than 5 rounds a side.")
