"""Payments hotfix: one statement sets ``status`` on N rows scattered over a date-clustered table.

Measures, per configuration: the update (pytest-benchmark, each round on the base table restored), the
bytes and files it wrote and removed (filesystem and the format's own metadata), write amplification,
the dashboard reads before and after it, and, where the configuration merges on read, the compaction
and the reads after that. Every answer is checked against pandas on the generated data.

Run with:  pytest scenarios/test_payments_hotfix.py --scale tiny --formats iceberg --benchmark-json out.json
Grid:      every selected configuration (``--formats``) x locate route (``--routes``: join, pruned, index) x one scale
           (``--scale``, ``--param``); the compaction starts from the update by the baseline route (``join``).
"""

from __future__ import annotations

import pytest

from bench.core.ledger import LEDGER, PROBES
from bench.measure.rounds import Arm, Rounds, adaptive_pedantic, measured
from bench.workload.datagen import HOTFIX_STATUS
from bench.workload.queries import PAYMENTS_FRAME_COLUMNS, payments_frame, payments_queries

pytestmark = pytest.mark.spark
TABLE = "payments"
ASSIGNMENT = {"status": f"'{HOTFIX_STATUS}'"}


@pytest.fixture(scope="module")
def hotfix(payments, cowmor):
    """The N target keys, the dashboards, and their expected answers before and after the hotfix."""
    keys = payments.hotfix_keys(cowmor.scale.hotfix_rows)
    queries = payments_queries(payments.last_day, lookup_id=keys[0])
    frame = payments_frame(payments.read_in_parts(PAYMENTS_FRAME_COLUMNS), keep=keys)  # the lookup is keys[0]
    before = {q.name: q.expected(frame) for q in queries}
    frame.loc[frame["txn_id"].isin(keys), "status"] = HOTFIX_STATUS
    after = {q.name: q.expected(frame) for q in queries}
    return {"keys": keys, "queries": queries, "before": before, "after": after,
            "logical_bytes": len(keys) * payments.bytes_per_row, "read_before": {}}


@LEDGER.charged(PROBES)
def verify_hotfix(lab, table, hotfix, payments) -> dict:
    """Exactly the N target rows carry the new status and the row count is unchanged."""
    rel = lab.fmt.relation(lab.spark, table)
    changed = sorted(r[0] for r in lab.spark.sql(f"SELECT txn_id FROM {rel} WHERE status = '{HOTFIX_STATUS}'").collect())
    total = lab.spark.sql(f"SELECT COUNT(*) FROM {rel}").collect()[0][0]
    assert changed == hotfix["keys"], f"{len(changed)} rows carry {HOTFIX_STATUS}, expected the {len(hotfix['keys'])} target rows"
    assert total == payments.rows, f"row count {total} != {payments.rows}"
    return {"rows_changed_verified": len(changed), "row_count": total}


def hotfix_rounds(lab, payments, hotfix, route, progress) -> Arm:
    """One configuration's rounds of the hotfix: each restores the base table (the dashboards read before the
    first), then times the update."""
    config_id, scale = lab.fmt.config_id, lab.session.scale
    keys = lab.keys("hotfix_keys", hotfix["keys"], payments)
    rounds = Rounds(hotfix["logical_bytes"])
    state: dict = {"base": (config_id, lab.fmt.table_name(TABLE))}

    def setup():
        rounds.close()
        first = rounds.number == 1
        read = hotfix["read_before"].get(state["base"])
        progress(f"{config_id} ({route}): round {rounds.number}/{lab.session.rounds_plan.min_rounds}+: restore the base table"
                 + ("" if not first else ", dashboards before" if read is None else f" (dashboards before: {read[0]}'s reading)"))
        table = lab.session.tables.base_table(lab.spark, lab.fmt, TABLE, payments)
        state["table"] = table
        state["live_before"] = lab.fmt.live_files(lab.spark, table)
        # every round starts from the same files (the reset test proves it), so the dashboards before the update
        # are read once, like those after it, not again on every restored copy; nor again by a route that restores
        # the same base table (one without table settings of its own, ``TableFormat.table_name``)
        if first and state["base"] not in hotfix["read_before"]:
            hotfix["read_before"][state["base"]] = (route, lab.reads(table, hotfix["queries"], hotfix["before"], scale.read_repeats))
        rounds.start(lab.fmt, table, **({"reads_before": hotfix["read_before"][state["base"]][1]} if first else {}))
        return (table,), {}

    return Arm(config_id, setup, measured(lambda table: lab.update(table, keys, ASSIGNMENT)), rounds, state)


def test_hotfix_update(benchmark, lab, payments, hotfix, config_id, route, progress, turns):
    """The hotfix per locate route (``--routes``): the same rows changed, found by a join, by literal keys, or by an
    index; with ``--interleave``, a family's configurations take their rounds in turn."""
    scale = lab.session.scale
    arm, plan = lab.measure(benchmark, lambda each: hotfix_rounds(each, payments, hotfix, route, progress), turns)
    rounds, state = arm.rounds, arm.state
    rounds.close()
    table = state["table"]
    progress(f"{config_id} ({route}): verify and read after the update")
    verified = verify_hotfix(lab, table, hotfix, payments)
    reads_after = lab.reads(table, hotfix["queries"], hotfix["after"], scale.read_repeats)
    reported = rounds.last["metadata"]["rows_changed"]
    if reported is not None:
        assert reported == len(hotfix["keys"]), f"format reports {reported} rows changed"
    touched = payments.files_holding(hotfix["keys"])
    lab.record(benchmark, "payments_hotfix", "update", rounds,
               rows_targeted=len(hotfix["keys"]), rows_changed_reported=reported, **verified, base=payments.describe(),
               live_files_before=state["live_before"], live_files_after=lab.fmt.live_files(lab.spark, table),
               rounds_plan=plan, reads_before=rounds.records[0]["reads_before"], reads_after=reads_after,
               reads_before_route=hotfix["read_before"][state["base"]][0],
               **lab.located(rounds, state["live_before"]["data_files"], touched, payments.days_holding(hotfix["keys"]),
                             payments.days))


@pytest.mark.merge_on_read
def test_hotfix_compaction(benchmark, lab, payments, hotfix, config_id, progress):
    scale = lab.session.scale
    keys = lab.keys("hotfix_keys", hotfix["keys"])
    rounds = Rounds()
    state: dict = {}

    def setup():
        rounds.close()
        progress(f"{config_id}: round {rounds.number}/{lab.session.rounds_plan.min_rounds}+: restore the updated table (update untimed, once)")
        table = lab.session.tables.base_table(lab.spark, lab.fmt, TABLE, payments, prepare=(
            "hotfix", lambda t: lab.update(t, keys, ASSIGNMENT)))
        state["table"], state["live_before"] = table, lab.fmt.live_files(lab.spark, table)
        rounds.start(lab.fmt, table)
        return (table,), {}

    plan = adaptive_pedantic(benchmark, measured(lambda table: lab.fmt.compact(lab.spark, table)), setup,
                             lab.session.rounds_plan)
    rounds.close()
    table = state["table"]
    verified = verify_hotfix(lab, table, hotfix, payments)
    live_after = lab.fmt.live_files(lab.spark, table)
    assert live_after["delete_files"] == 0, f"compaction left {live_after['delete_files']} delete files / logs"
    reads_after = lab.reads(table, hotfix["queries"], hotfix["after"], scale.read_repeats)
    lab.record(benchmark, "payments_hotfix", "compaction", rounds, **verified, live_files_before=state["live_before"],
               live_files_after=live_after, rounds_plan=plan, reads_after_compaction=reads_after)
