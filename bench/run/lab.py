"""What a scenario holds for one configuration (``Lab``), and the scenario steps shared by several scenarios."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bench.formats.base import Keys
from bench.measure.locate import full_scan, update_keys
from bench.measure.memory import MemoryWatch
from bench.measure.reads import run_reads
from bench.measure.rounds import Arm, Rounds, adaptive_pedantic, measured, replay, take_turns, timed
from bench.results import contract

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from bench.engines.base import ReadEngine
    from bench.formats.base import TableFormat, TableRef
    from bench.run.session import BenchSession
    from bench.workload.queries import Query
    from bench.writers.several import SeveralWriters


# the saved state of a configuration's table after its last round in turn, per route: routes that share one base
# table name (the join and literal keys) each keep their own, or one route's test would put back the other's
TURNS_LABEL = "after-its-turn"


@dataclass
class Turns:
    """What the configurations of one test function share when they take their rounds in turn (``--interleave``):
    the arms measured so far per (family, route), and which (configuration, route) the run selected (``-k`` may
    leave some out: they are not measured for nothing)."""

    selected: set[tuple[str, str]]
    arms: dict[tuple[str, str], dict[str, Arm]] = dataclasses.field(default_factory=dict)


@dataclass
class Lab:
    """What a scenario needs for one configuration: the adapter, its Spark session, the run session."""

    fmt: TableFormat
    spark: SparkSession
    session: BenchSession
    engines: list[ReadEngine]

    def reads(self, table: TableRef, queries: list[Query], expected: dict[str, list[tuple]], repeats: int,
              mode: str = "snapshot") -> dict[str, dict]:
        """The dashboard ``queries`` on every read engine, each answer checked (see ``measure.run_reads``)."""
        return run_reads(self.engines, self.fmt, table, queries, expected, repeats, mode)

    def measure(self, benchmark: Any, build: Callable[[Lab], Arm], turns: Turns) -> tuple[Arm, dict[str, Any]]:
        """This configuration's timed rounds, as ``build`` makes them for a lab: on their own (``adaptive_pedantic``),
        or with ``--interleave`` in turn with the other configurations of its family on its route that the run
        selected, so a drifting machine drifts them alike. The first of them to get here measures them all
        (``turns`` keeps the arms); each records its own from there (``replay``).

        Raises:
            Exception: whatever this configuration's rounds raised while taking turns.
        """
        plan = self.session.rounds_plan
        assert plan is not None
        if not self.session.interleave:
            arm = build(self)
            return arm, adaptive_pedantic(benchmark, arm.target, arm.setup, plan)
        group = (self.fmt.family, self.fmt.route)
        measured_here = turns.arms.setdefault(group, {})
        if self.fmt.config_id not in measured_here:
            labs = [self] + [lab for lab in self.siblings()
                             if (lab.fmt.config_id, self.fmt.route) in turns.selected and lab.fmt.config_id not in measured_here]
            arms, by_id = [build(lab) for lab in labs], {lab.fmt.config_id: lab for lab in labs}
            take_turns(arms, plan, after_round=lambda arm: by_id[arm.config_id].keep(arm.state["table"]))
            for arm in arms:
                arm.partners = [a.config_id for a in arms]
            measured_here.update({a.config_id: a for a in arms})
        arm = measured_here[self.fmt.config_id]
        if arm.error is not None:
            raise arm.error
        self.session.tables.bring_back(self.spark, self.fmt, arm.state["table"], f"{TURNS_LABEL}-{self.fmt.route}")
        return arm, replay(benchmark, arm, plan)

    def keep(self, table: TableRef) -> None:
        """This configuration's table as its last round left it, kept aside: the family's next configuration
        restores its own table in the same place."""
        self.session.tables.keep(self.fmt, table, f"{TURNS_LABEL}-{self.fmt.route}")

    def siblings(self) -> list[Lab]:
        """The run's other configurations of this family, on this route where they have it, each warmed up as
        its own test's lab would be (one family, one Spark application)."""
        out = []
        for config in self.session.configs:
            if config.family != self.fmt.family or config.id == self.fmt.config_id:
                continue
            fmt = self.session.adapter(config.id, route=self.fmt.route)
            if self.fmt.route != "join" and fmt.route_unsupported():
                continue
            self.session.tables.warm_up(self.spark, fmt)
            out.append(dataclasses.replace(self, fmt=fmt))
        return out

    def header(self, scenario: str, operation: str, param: str | None = None) -> dict[str, Any]:
        """The record header every scenario's ``benchmark.extra_info`` starts with (the results contract)."""
        return contract.header(scenario, operation, self.fmt.config_id, self.fmt.family, self.fmt.mode,
                               self.session.scale.name, self.session.seed, [vars(s) for s in self.fmt.settings()], param)

    def with_target_file_bytes(self, target: int) -> Lab:
        """The same configuration with another target file size (recorded in its settings), for files that the
        scale's target would split."""
        return dataclasses.replace(self, fmt=self.session.adapter(self.fmt.config_id, target, self.fmt.route))

    def keys_view(self, name: str, keys: list[int], key: str = "txn_id") -> str:
        self.spark.createDataFrame([(k,) for k in keys], f"{key} bigint").createOrReplaceTempView(name)
        return name

    def keys(self, name: str, keys: list[int], data: Any = None) -> Keys:
        """The keys an update changes, as literals and as a view (made here, outside any timed region); with the
        generated ``data``, also with each row's ordering value (a correction feed's rows, for an indexed MERGE)."""
        if data is None:
            return Keys(tuple(int(k) for k in keys), self.keys_view(name, keys))
        return update_keys(self.spark, self.fmt.route, name, keys, data)

    def update(self, table: TableRef, keys: Keys, assignments: dict[str, str]) -> None:
        """The update, its rows found by this configuration's locate route."""
        self.fmt.update_keys(self.spark, table, keys, assignments)

    def located(self, rounds: Rounds, table_data_files: int, files_touched: int, partitions_touched: int,
                table_partitions: int) -> dict[str, Any]:
        """How the update found its rows, against the table's files and partitions and those holding a changed row."""
        return {"route": self.fmt.route, "table_data_files": int(table_data_files), "files_touched": int(files_touched),
                "partitions_touched": int(partitions_touched), "table_partitions": int(table_partitions),
                "locate_full_scan": full_scan(rounds.last.get("locate"), table_data_files, files_touched)}

    def status_update_rounds(self, benchmark: Any, name: str, data: Any, keys: list[int], rounds: int, label: str,
                             progress: Callable[[str], None], status: str) -> tuple[TableRef, Rounds, int]:
        """``status_update_rounds`` for this configuration (the scenarios' entry point: they never import run/)."""
        return status_update_rounds(benchmark, self, name, data, keys, rounds, label=label, progress=progress, status=status)

    def update_with_driver_memory(self, driver_memory_mb: int, name: str, data: Any, keys: list[int],
                                  status: str) -> dict[str, Any]:
        """Set ``status`` on ``keys`` of table ``name`` (its base state restored) in this family's application started
        with ``driver_memory_mb`` of driver memory: the update's time, its peak memory and the rows that carry the
        status after it. Raises whatever the attempt raised (the memory search records it)."""
        spark = self.session.spark(self.fmt.family, f"{driver_memory_mb}m")
        table = self.session.tables.base_table(spark, self.fmt, name, data)
        self.fmt.attach(spark, table)
        targets = update_keys(spark, self.fmt.route, "memory_keys", keys, data)
        watch = MemoryWatch.start()
        seconds, _ = timed(self.fmt.update_keys, spark, table, targets, {"status": f"'{status}'"})
        memory = watch.finish()
        changed = spark.sql(f"SELECT COUNT(*) FROM {self.fmt.relation(spark, table)} WHERE status = '{status}'").collect()[0][0]
        return {"seconds": seconds, "memory": memory, "rows_changed_verified": int(changed)}

    def several_writers(self, kind: str, control: str) -> SeveralWriters:
        """This configuration on the catalog and lock several applications share (``writers/several.py``).

        Raises:
            NotSupported: no such concurrency control, or separate applications are not safe for it here.
            MissingArtifact: the catalog or lock server cannot be started here.
        """
        from bench.writers.several import SeveralWriters

        return SeveralWriters.prepare(self, kind, control, self.session.scale.files_per_day)

    def record(self, benchmark: Any, scenario: str, operation: str, rounds: Rounds | None = None,
               param: str | None = None, **fields: Any) -> None:
        """Write the operation's record: the header, the last round's measurements and every round, then ``fields``,
        checked against the contract's typed spec (``contract.record`` raises on a missing or undeclared field)."""
        last = {k: v for k, v in rounds.last.items() if k in contract.LAST_ROUND} if rounds else {}
        body = {**last, **({"rounds": rounds.records} if rounds else {}), **fields}
        benchmark.extra_info.update(contract.record(scenario, operation, self.header(scenario, operation, param), body))


def status_update_rounds(benchmark: Any, lab: Lab, name: str, data: Any, keys: list[int], rounds: int,
                         label: str, progress: Callable[[str], None], status: str) -> tuple[TableRef, Rounds, int]:
    """Set ``status`` on ``keys`` for ``rounds`` pytest-benchmark rounds, each on table ``name`` restored from
    ``data`` (outside the timed region), then check that exactly those rows carry it.

    Raises:
        AssertionError: a different number of rows carries ``status``.
    """
    fmt, spark = lab.fmt, lab.spark
    targets = lab.keys("status_update_keys", keys, data)
    record, state = Rounds(len(keys) * data.bytes_per_row), {}

    def setup():
        record.close()
        progress(f"{label}: round {record.number}/{rounds}")
        state["table"] = lab.session.tables.base_table(spark, fmt, name, data)
        record.start(fmt, state["table"])
        return (state["table"],), {}

    benchmark.pedantic(measured(lambda table: lab.update(table, targets, {"status": f"'{status}'"})),
                       setup=setup, rounds=rounds, iterations=1)
    record.close()
    rel = fmt.relation(spark, state["table"])
    changed = spark.sql(f"SELECT COUNT(*) FROM {rel} WHERE status = '{status}'").collect()[0][0]
    assert changed == len(keys), f"{changed} rows changed, expected {len(keys)}"
    return state["table"], record, changed
