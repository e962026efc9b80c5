"""The choice for a workload: the decision map of the run's whole cycles (bench.report.workloads) and their table."""

from __future__ import annotations

import html
from pathlib import Path

from bench.report import charts, workloads
from bench.report.html_parts import img, table
from bench.results.contract import Run


def section(run: Run, out: Path) -> str:
    """Empty where the run measured no dinner peak or settlements cycle (the section is then left out)."""
    cycles = workloads.samples(run)
    if not cycles:
        return ""
    mapped = workloads.decision_map(cycles)
    if mapped.empty:
        return "<p>One configuration per workload and route: nothing to set it against.</p>" + table(workloads.cycle_table(cycles))
    return (f"<p>{html.escape(workloads.sentence(mapped))}</p>"
            + img(charts.decision_map(mapped, workloads.SEED_WORKLOADS, "The cheapest configuration per write"),
                  "the decision map: the cheapest configuration against reads per write", out, "decision-map")
            + table(workloads.at_seed_ratios(mapped, run.matrix.merges_on_read)) + "<h3>Each cycle as measured</h3>" + table(workloads.cycle_table(cycles)))
