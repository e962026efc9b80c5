"""What ``report --table`` prints for each of the user's tables: its update predicted by the cost model, the memory
each configuration needed nearest it, how often to compact it, and where it lands on the decision map."""

from __future__ import annotations

from bench.report import workloads
from bench.report.cadence import cadences, checks
from bench.report.fitted import models
from bench.report.model import UserTable
from bench.report.sections.choice import placed
from bench.report.sections.file_size import table_text
from bench.report.sections.memory import needed_for
from bench.results.contract import Run


def lines(tables: list[UserTable], run: Run) -> list[str]:
    """The terminal's account of each table, from one (merged) run."""
    out = []
    shapes = workloads.shape_samples(run)
    mapped = workloads.decision_map(shapes) if shapes else None
    for t in tables:
        out.append(table_text(t, models(run, t.route) or models(run)))
        out.extend(needed_for(t, run))
        for c in cadences(run, t.reads_per_day / max(t.updates_per_day, 1e-9)):
            out.append(f"compaction {c.config_id}: {c.verdict}; {c.costs[c.best_k - 1]:.3f} s per write against "
                       f"{c.costs[0]:.3f} s compacting after every write")
        for checked in checks(run):
            out.append(f"compaction {checked.config_id} checked at {checked.reads_per_write:g} reads per write: "
                       f"{checked.verdict}")
        if mapped is not None and not mapped.empty:
            for row in workloads.place(mapped, [placed(t)]).to_dict("records"):
                out.append(f"map ({row['route']}): {row['reads per write']} reads per write, {row['files an update touches']} "
                           f"of the files an update: {row['cheapest']} ({row['share of resamples']} of resamples) at "
                           f"{row['nearest measured point']}")
    return out
