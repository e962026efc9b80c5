"""The report's "Concurrency and late data" section, and the claims it checks."""

from __future__ import annotations

import pandas as pd

from bench.report.html_parts import note, table
from bench.results import load
from bench.results.contract import CONCURRENT_COMPACTION, LATE_ARRIVALS, Record
from bench.results.schema import (
    GUARDED_MERGE,
    UPSERT,
    ConcurrentCompactionSequence,
    FileChanges,
    LateArrivalsSequence,
    LateStrategy,
    RacingCompaction,
)

ONEHOUSE_MOR = "cowmor seeds: the Onehouse deep dive on merge-on-read (Hudi MVCC between writers and table services)"
COW_MOR_CHAPTER = "cowmor seeds: the copy-on-write vs merge-on-read chapter (late-arriving CDC updates)"


def _compactions(runs: list[RacingCompaction]) -> str:
    """How the compaction attempts ended: committed, lost (with the exception), or found nothing left to do."""
    if not runs:
        return "not applicable (copy-on-write)"
    lost = [c for c in runs if not c.committed and c.conflict_class]
    idle = [c for c in runs if not c.committed and not c.conflict_class]
    parts = [f"{sum(c.committed for c in runs)} of {len(runs)} committed"]
    if lost:
        parts.append(f"{len(lost)} lost ({', '.join(sorted({c.root_cause or c.conflict_class or '' for c in lost}))})")
    if idle:
        parts.append(f"{len(idle)} found nothing left to compact")
    return "; ".join(parts)


def _races(run: load.Run) -> list[tuple[Record, ConcurrentCompactionSequence]]:
    return [(r, r.view(ConcurrentCompactionSequence)) for r in run.records(CONCURRENT_COMPACTION)]


def _late(run: load.Run) -> list[tuple[Record, LateArrivalsSequence]]:
    return [(r, r.view(LateArrivalsSequence)) for r in run.records(LATE_ARRIVALS)]


def concurrency_rows(run: load.Run) -> pd.DataFrame:
    rows = []
    for r, x in _races(run):
        applicable = [c for c in x.compactions if c.not_applicable is None]
        rows.append({
            "configuration": r.config_id,
            "commits attempted / succeeded": f"{x.commits_attempted} / {x.commits_succeeded}",
            "lost to conflicts": x.commits_failed_by_conflict,
            "conflict classes": ", ".join(x.conflict_classes) or "–",
            "retries per commit": f"{x.retries_per_commit:.2f}",
            "batches lost": x.batches_lost,
            "compaction": _compactions(applicable),
            "upsert p50 alone → racing s": (f"{x.upsert_alone_p50_s:.2f} → {x.upsert_racing_p50_s:.2f}"
                                           if x.upsert_alone_p50_s and x.upsert_racing_p50_s else "–"),
            "wall s": f"{x.concurrent_wall_s:.1f}" if x.concurrent_wall_s else "–",
            "final table": "equals the committed batches" if r.answers_verified else "–",
        })
    return pd.DataFrame(rows)


def late_rows(run: load.Run) -> pd.DataFrame:
    rows = []
    for r, x in _late(run):
        for s in x.strategies.values():
            if s.skipped is not None:
                continue
            fs = s.filesystem or FileChanges()
            rows.append({"configuration": r.config_id, "strategy": s.strategy,
                         "late rows": s.rows_late, "went back in time": s.rows_back_in_time,
                         "finding": "loses newer data" if s.loses_data else "keeps the newer version",
                         "late batch s": f"{s.seconds:.2f}", "bytes written": fs.bytes_added,
                         "files written": fs.files_added, "source": s.source or "–"})
    return pd.DataFrame(rows)


def claims(run: load.Run) -> list[dict]:
    """Claims-check rows: the seeds on compaction racing writers, and on late data."""
    out = []
    conc = {r.config_id: x for r, x in _races(run)}
    text = "Hudi compacts without blocking writers; in Iceberg a writer and a compaction on the same files conflict"
    if "hudi-mor" in conc and ("iceberg-mor" in conc or "iceberg-dv" in conc):
        hudi = conc["hudi-mor"]
        ice = [c for c in ("iceberg-mor", "iceberg-dv") if c in conc]
        ice_conflict = any(conc[c].commits_failed_by_conflict or not conc[c].compaction_committed for c in ice)
        hudi_free = hudi.batches_lost == 0 and hudi.compaction_committed
        measured = "; ".join(f"{c}: {conc[c].commits_failed_by_conflict} lost commits, compaction "
                             f"{'committed' if conc[c].compaction_committed else 'never committed'}" for c in ["hudi-mor", *ice])
        verdict = "holds" if hudi_free and ice_conflict else "does not hold"
        out.append({"claim": text, "source": ONEHOUSE_MOR, "measured": measured, "verdict": verdict})
    else:
        out.append({"claim": text, "source": ONEHOUSE_MOR, "measured": "concurrent compaction not in these runs",
                    "verdict": "not measurable at this scale"})
    late = _late(run)
    text = "Hudi's ordering field keeps the newest event; Iceberg and Delta apply the last writer unless MERGE guards on event time"
    if late:
        none = LateStrategy()
        by = {r.config_id: (x.strategies.get(UPSERT, none), x.strategies.get(GUARDED_MERGE, none)) for r, x in late}
        hudi_ok = all(upsert.rows_back_in_time == 0 for c, (upsert, _) in by.items() if c.startswith("hudi"))
        others_lose = all((upsert.rows_back_in_time or 0) > 0 for c, (upsert, _) in by.items() if not c.startswith("hudi"))
        guard_ok = all(not guarded.rows_back_in_time for _, guarded in by.values())
        measured = "; ".join(f"{c}: plain upsert {upsert.rows_back_in_time}/{upsert.rows_late} back in time"
                             + (f", guarded {guarded.rows_back_in_time}" if guarded.rows_back_in_time is not None else "")
                             for c, (upsert, guarded) in sorted(by.items()))
        out.append({"claim": text, "source": COW_MOR_CHAPTER, "measured": measured,
                    "verdict": "holds" if hudi_ok and others_lose and guard_ok else "does not hold"})
    else:
        out.append({"claim": text, "source": COW_MOR_CHAPTER, "measured": "late-arrivals scenario not in these runs",
                    "verdict": "not measurable at this scale"})
    return out


def section(run: load.Run) -> str:
    conc, late = concurrency_rows(run), late_rows(run)
    if conc.empty and late.empty:
        return note("Neither the concurrent-compaction nor the late-arrivals scenario is in these runs "
                    "(make bench SCENARIOS=all runs them).")
    parts = []
    if not conc.empty:
        parts += ["<h3>Compaction racing the writer</h3>", table(conc),
                  note("One writer thread upserts small batches, alone and then while a second thread of the same Spark "
                       "application compacts the same table. A batch that loses a conflict is retried up to 3 times; "
                       "isolation, retry and lock settings are recorded with every result.")]
    if not late.empty:
        parts += ["<h3>Late data</h3>", table(late),
                  note("The current versions land first, then older versions of half of the same orders. 'Went back in "
                       "time' counts orders whose newer version was overwritten by the older one, checked against pandas.")]
    return "".join(parts)
