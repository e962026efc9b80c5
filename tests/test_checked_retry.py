"""The retry that checks before it repeats: a statement that raised after its commit landed is not run again (checked),
and is run again by a blind retry; a format that cannot tell falls back to retrying, saying so."""

from __future__ import annotations

from bench.formats.base import Keys, TableFormat, TableRef
from bench.measure.writers import BLIND, CHECKED, attempt_label, run_batches, tag


class RaisesAfterCommit:
    """A format whose first attempt of every batch commits, then raises (Hudi's post-commit clean losing a race)."""

    labels_commits = True

    def __init__(self, can_tell: bool = True, route: str = "pruned") -> None:
        self.route = route  # the writers' default: literal keys; ``join``: a MERGE from a view of the keys
        self.keys_seen: list[str] = []
        self.partitions_seen: list[tuple[str, ...]] = []
        self.committed: list[str] = []
        self.label = ""
        self.can_tell = can_tell

    def label_commits(self, spark, label):
        self.label = label

    def see_other_writers(self, spark, table):
        pass

    def update_keys(self, spark, table, keys, assignments):
        """The adapter's dispatch by route (``TableFormat.update_keys``): a join reads the keys' view."""
        if self.route == "join":
            self.keys_seen.append(f"{keys.view}: {spark.views[keys.view]}")
        self.partitions_seen.append(keys.partitions)
        self.committed.append(self.label)
        if self.label.endswith("#1"):
            raise RuntimeError("HoodieException: clean failed after the commit")

    def attempt_landed(self, spark, table, label, since, own_application):
        return (label in self.committed) if self.can_tell else None


class Table:
    key = "txn_id"


class Session:
    """What the join route asks of a Spark session: a view of the batch's keys."""

    def __init__(self) -> None:
        self.views: dict[str, list] = {}

    def createDataFrame(self, rows, schema):  # noqa: N802 - Spark's name
        session = self

        class Frame:
            def createOrReplaceTempView(self, name):  # noqa: N802
                session.views[name] = [r[0] for r in rows]
        return Frame()


def _run(fmt, retry, spark=None):
    records: list[dict] = []
    run_batches(fmt, spark, Table(), 0, [[1, 2], [3]], 2, records.append, retry)
    return records


def test_on_the_join_route_each_batch_merges_from_a_view_of_its_own_keys():
    fmt = RaisesAfterCommit(route="join")
    records = _run(fmt, CHECKED, Session())
    assert fmt.keys_seen == ["writer_0_keys: [1, 2]", "writer_0_keys: [3]"]
    assert all(r["committed"] and r["raised_after_commit"] and r["attempts"] == 1 for r in records)


def test_a_checked_retry_finds_the_commit_and_does_not_apply_the_batch_twice():
    fmt = RaisesAfterCommit()
    records = _run(fmt, CHECKED)
    assert fmt.committed == [attempt_label(tag(0, 0), 1), attempt_label(tag(0, 1), 1)]  # once each
    assert all(r["committed"] and r["raised_after_commit"] and r["attempts"] == 1 for r in records)
    assert all(r["failures"][0]["landed"] is True for r in records)


def test_a_blind_retry_applies_a_landed_batch_again():
    fmt = RaisesAfterCommit()
    records = _run(fmt, BLIND)
    assert len(fmt.committed) == 4  # every batch committed twice: the finding a blind retry makes
    assert all(r["committed"] and r["attempts"] == 2 and "raised_after_commit" not in r for r in records)
    assert all("landed" not in r["failures"][0] for r in records)


def test_where_the_format_cannot_tell_the_checked_retry_says_so_and_retries():
    fmt = RaisesAfterCommit(can_tell=False)
    records = _run(fmt, CHECKED)
    assert len(fmt.committed) == 4
    assert all(r["failures"][0]["landed"] is None and r["attempts"] == 2 for r in records)


def test_a_writer_told_its_batches_days_names_them_in_each_statement_and_otherwise_names_none():
    fmt = RaisesAfterCommit()
    run_batches(fmt, None, Table(), 0, [[1, 2], [3]], 2, [].append, CHECKED,
                partitions=[["2026-01-01"], ["2026-01-02", "2026-01-03"]])
    assert fmt.partitions_seen == [("2026-01-01",), ("2026-01-02", "2026-01-03")]
    keys_alone = RaisesAfterCommit()
    _run(keys_alone, CHECKED)
    assert keys_alone.partitions_seen == [(), ()]


class LiteralUpdates:
    """What ``TableFormat.update_keys`` asks of an adapter on the literal-key route: its predicate, its UPDATE."""

    route = "pruned"

    def __init__(self) -> None:
        self.predicates: list[str] = []

    def route_unsupported(self):
        return None

    def pruning_predicate(self, key, values):
        return f"{key} IN ({', '.join(map(str, values))})"

    def update_where(self, spark, table, predicate, assignments):
        self.predicates.append(predicate)


def test_the_literal_key_update_names_the_partition_before_the_keys_when_told_its_days():
    fmt = LiteralUpdates()
    table = TableRef("t", "/tmp/t", "txn_id", "settled_date", "created_at")
    TableFormat.update_keys(fmt, None, table, Keys((7, 9), "v", partitions=("2026-01-02",)), {})  # type: ignore[arg-type]
    TableFormat.update_keys(fmt, None, table, Keys((7,), "v"), {})  # type: ignore[arg-type]
    assert fmt.predicates == ["settled_date IN (DATE '2026-01-02') AND txn_id IN (7, 9)", "txn_id IN (7)"]
