"""The compaction cadence, checked: the cost per write measured when compacting every k writes, at the recommended k
and at its neighbours.

The report's "how often to compact" prices a cadence from the degradation scenario (the read after j un-compacted
writes, one compaction after K writes). This scenario runs the cycle itself: per point k, ``cadence_cycles`` cycles of
k writes (the same update of ``hotfix_rows`` scattered rows, new rows each write), the dashboard read in every state
before a write, and the compaction after the k-th write. The cost per write of a cycle is its writes, its
compaction, and ``cadence_reads_per_write`` x each state's read, over k: what the model predicts, measured at that k.
The cheapest measured k is the check of the recommendation; every read's answer is checked on every engine. One
unmeasured cycle runs first on each configuration (the first point measured would otherwise pay the JVM's warm-up
on the table's size: 30% more per write at `small`), where the run warms up (`warm_up`, off at `tiny`).

Run with:  pytest scenarios/test_compaction_cadence.py --scale small --formats iceberg-mor,hudi-mor --param cadence_k=3
Grid:      writes per compaction (cadence_k - 1 where at least 1, cadence_k, cadence_k + 1; cadence_k alone with
           cadence_neighbours=0, as at `tiny`) x every selected merge-on-read configuration (copy-on-write has
           nothing to compact).
"""

from __future__ import annotations

import statistics

import pytest

from bench.exceptions import NotSupported
from bench.measure.rounds import timed
from bench.workload.datagen import HOTFIX_STATUS
from bench.workload.queries import status_batches

pytestmark = pytest.mark.spark
TABLE = "payments"  # the hotfix's base table, restored before every point
WARMED: set[str] = set()  # configurations whose first cycle has been run unmeasured


def cadences(scale) -> list[int]:
    """The recommended writes per compaction (``cadence_k``) and its neighbours (none below 1), or k alone."""
    k = scale.cadence_k
    return [n for n in (k - 1, k, k + 1) if n >= 1] if scale.cadence_neighbours else [k]


GRID = {"every": lambda scale: [(n, f"every{n}") for n in cadences(scale)]}
WEIGHT = lambda params: params["every"]  # noqa: E731 - the cycle's writes


@pytest.fixture(scope="module")
def plan(payments, cowmor):
    """Disjoint scattered keys for the most writes any point makes, and the read's expected answer after each."""
    scale = cowmor.scale
    writes = scale.cadence_cycles * max(cadences(scale))
    return status_batches(payments, writes, scale.hotfix_rows, HOTFIX_STATUS)


@pytest.mark.merge_on_read  # copy-on-write has nothing to compact: no cadence to check
def test_compaction_cadence(benchmark, lab, payments, plan, every, config_id, progress):
    scale, fmt, spark = lab.session.scale, lab.fmt, lab.spark
    query, expected, reads_per_write = plan.query, plan.expected, scale.cadence_reads_per_write
    state: dict = {}
    label = f"{config_id}: every {every} write{'s' if every > 1 else ''}"

    def read(table, written: int) -> dict:
        return lab.reads(table, [query], {query.name: expected[written]}, scale.read_repeats)[query.name]

    def cycle(table, k: int, written: int) -> dict:
        """k writes, the read in the state before each, then the compaction: their seconds and the cost per write."""
        writes, reads = [], []
        for number in range(written, written + k):
            reads.append(read(table, number))
            lab.keys_view("cadence_keys", plan.batches[number])
            seconds, _ = timed(fmt.update, spark, table, "cadence_keys", {"status": f"'{HOTFIX_STATUS}'"})
            writes.append(seconds)
        compaction_s, _ = timed(fmt.compact, spark, table)
        assert fmt.live_files(spark, table)["delete_files"] == 0, f"{config_id}: deletes left after compaction"
        read_s = [r["median"] for r in reads]
        return {"update_s": writes, "read_s": read_s, "reads": reads, "compaction_s": compaction_s,
                "cost_per_write_s": (sum(writes) + compaction_s + reads_per_write * sum(read_s)) / k}

    def setup():
        progress(f"{label}: base table")
        if scale.warm_up and config_id not in WARMED:  # the first cycle pays the JVM's warm-up: run one, unmeasured
            progress(f"{config_id}: a cycle of one write, unmeasured (warm-up: the first point measured would pay it)")
            table = lab.session.tables.base_table(spark, fmt, TABLE, payments)
            cycle(table, 1, 0)
            read(table, 1)  # and the read of a compacted table
            WARMED.add(config_id)
        state["table"] = lab.session.tables.base_table(spark, fmt, TABLE, payments)  # restored byte-identical
        return (state["table"],), {}

    def run_cycles(table):
        cycles = []
        for number in range(1, scale.cadence_cycles + 1):
            cycles.append({"cycle": number, **cycle(table, every, (number - 1) * every)})
            progress(f"{label}: cycle {number}: {cycles[-1]['cost_per_write_s']:.3f} s per write")
        state["cycles"], state["after"] = cycles, read(table, scale.cadence_cycles * every)

    try:
        benchmark.pedantic(run_cycles, setup=setup, rounds=1, iterations=1)
    except NotSupported as why:
        pytest.skip(str(why))
    cycles = state["cycles"]
    lab.record(benchmark, "compaction_cadence", "sequence", param=f"every{every}", writes_per_compaction=every,
               reads_per_write=reads_per_write, query=query.name, cycles=cycles, read_after_s=state["after"]["median"],
               cost_per_write_s=statistics.median(c["cost_per_write_s"] for c in cycles))
