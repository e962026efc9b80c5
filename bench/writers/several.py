"""The several-writers steps a scenario asks for: the shared catalog and lock, the table, the race, the checks.

Scenarios reach this through ``Lab.several_writers`` (they never import run/). Writers find their rows by literal
keys (the ``pruned`` route), so a writer reads what its keys' files hold, not the whole table; ``--param
writer_route=join`` makes each batch a MERGE from a view of its keys instead (a control: the same race without
column-statistics skipping); ``--param writer_names_partition=1`` has the literal-key UPDATE name its keys' days too (a
control for conflict checks that filter by the statement's condition).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bench.core import failures, uncertainty
from bench.core.ledger import LEDGER, RACES
from bench.core.storage import Files, is_local
from bench.exceptions import MissingArtifact, NotSupported
from bench.formats.base import INDEX, Coordinator
from bench.formats.hudi import HEARTBEAT_MS, HEARTBEAT_TOLERABLE_MISSES
from bench.formats.iceberg import NAMESPACE
from bench.measure import digest, invariants
from bench.measure.locate import update_keys
from bench.measure.writers import BLIND, CHANGED_COLUMNS, CHECKED
from bench.workload.datagen import FIRST_DAY, PAYMENTS_SCHEMA
from bench.writers.race import PROCESSES, Cadence, RaceResult, race

if TYPE_CHECKING:
    from bench.formats.base import Setting, TableFormat, TableRef
    from bench.workload.contention import Contention
    from bench.workload.datagen import PaymentsData

RETRIES = 2  # the harness's retries of a batch whose commit failed (as a job scheduler would retry it)
EVIDENCE_MAX_BYTES = 512 * 2**20  # a violating race's table is copied whole up to this size (tiny and small: a few MB)
EXPIRY_MARGIN_S = 2.0


def named_days(contention: Contention) -> list[list[list[str]]]:
    """Each writer's batches' days as the partition column's ISO dates (``--param writer_names_partition=1``)."""
    return [[[(FIRST_DAY + dt.timedelta(days=d)).isoformat() for d in days] for days in writer]
            for writer in contention.days]


class Bench(Protocol):
    """What the several writers use of a scenario's lab (``run/lab.py``, which hands itself over): its Spark
    application, read engines, adapter and session (scale, catalog and lock, tables, writer pool, run folder)."""

    spark: Any
    engines: list[Any]
    fmt: TableFormat
    session: Any


@dataclass
class SeveralWriters:
    """One configuration made safe for several writers: its adapter on the shared catalog / lock, the settings
    every writer's application applies."""

    lab: Bench
    fmt: TableFormat
    kind: str
    control: str
    coordinator: Coordinator
    settings: list[Setting]
    pointer_from_spark: str | None = None  # set where a non-Spark engine's Iceberg pointer could not come from the catalog

    @property
    def retry(self) -> str:
        """How a failed batch is retried: checked first (the default), or blind (``--param writer_blind_retry=1``)."""
        return BLIND if self.lab.session.scale.writer_blind_retry else CHECKED

    @classmethod
    @LEDGER.charged(RACES)
    def prepare(cls, lab: Bench, kind: str, control: str, files_per_partition: int) -> SeveralWriters:
        """Raises:
            NotSupported: the configuration has no such control, or writers in separate applications are not safe.
            MissingArtifact: the catalog or lock server cannot be started here.
        """
        fmt = lab.session.adapter(lab.fmt.config_id, route=lab.session.scale.writer_route)
        reason = fmt.processes_unsupported() if kind == PROCESSES else None
        if reason:
            raise NotSupported(reason)
        fmt.shape_like(files_per_partition)
        coordination = lab.session.coordination
        assert coordination is not None
        coordinator = fmt.coordinator(coordination)
        scale = lab.session.scale
        settings = fmt.several_writers(coordinator, control, bool(scale.writer_inline_clean), scale.writer_heartbeat_ms)
        return cls(lab, fmt, kind, control, coordinator, settings)

    @property
    def cadence(self) -> Cadence:
        scale = self.lab.session.scale
        return Cadence(scale.writer_service_every, float(scale.writer_keep_snapshots_s))

    def setup(self) -> dict[str, Any]:
        """The race's set-up (``writer_stress`` and the values it sets, scales.py), recorded with every race."""
        scale = self.lab.session.scale
        return {"name": "stress" if scale.writer_stress else "realistic", "service": bool(scale.writer_service),
                **self.cadence.record(), "writers_clean": bool(scale.writer_inline_clean),
                "heartbeat_ms": scale.writer_heartbeat_ms or None, "retry": self.retry, "route": self.fmt.route,
                "names_partition": bool(scale.writer_names_partition)}

    def record(self) -> dict[str, Any]:
        """What coordinated the writers, and how the race was set up (recorded with the race)."""
        coordination = self.lab.session.coordination
        return {"kind": self.kind, "control": self.control, "retry": self.retry, "settings": [vars(s) for s in self.settings],
                "servers": coordination.record() if coordination else {}, "setup": self.setup()}

    def heartbeat_expiry_s(self) -> float:
        """How long after its last heartbeat a failed writer's instant may be rolled back (Hudi: interval x misses)."""
        return (self.fmt.heartbeat_ms or HEARTBEAT_MS) * HEARTBEAT_TOLERABLE_MISSES / 1000

    @LEDGER.charged(RACES)
    def table(self, name: str, data: PaymentsData, contention: Contention) -> tuple[TableRef, set[str]]:
        """A fresh table from the base data, the ``contention``'s deleted keys deleted; also its history's commits then."""
        spark, fmt = self.lab.spark, self.fmt
        for s in self.settings:  # the shared catalog now; the concurrency control once the table is made by one writer
            if s.scope == "concurrency":  # (as a team's first load is)
                spark.conf.unset(s.key)
            else:
                spark.conf.set(s.key, s.value)
        name = fmt.table_name(name)
        fmt.drop(spark, name)
        table = self.lab.session.tables.fresh_table(spark, fmt, name, data)
        deleted = update_keys(spark, INDEX, "race_deleted", contention.deleted, data)
        fmt.delete(spark, table, deleted.ordered_view or deleted.view)
        left = spark.sql(f"SELECT COUNT(*) FROM {fmt.relation(spark, table)} WHERE {table.key} IN "
                         f"({', '.join(map(str, contention.deleted))})").collect()[0][0]
        if left:
            raise RuntimeError(f"{fmt.config_id}: {left} of the {len(contention.deleted)} keys deleted before the race are still there")
        for s in self.settings:  # from here on, the run's application is one of several (its table service)
            if s.scope == "concurrency":
                spark.conf.set(s.key, s.value)
        return table, {e.id for e in fmt.history(spark, table)}

    @LEDGER.charged(RACES)
    def race(self, table: TableRef, contention: Contention, progress: Callable[[str], None]) -> RaceResult:
        """The race, each failed attempt with its cause as the format words it (``TableFormat.failure_cause``)."""
        scale = self.lab.session.scale
        result = race(self.fmt, self.lab.spark, table, contention.batches, self.kind, self.settings, self.coordinator,
                      RETRIES, self.lab.session.writer_pool, progress, service=bool(scale.writer_service),
                      retry=self.retry, cadence=self.cadence,
                      partitions=named_days(contention) if scale.writer_names_partition else None)
        for batch in result.batches:
            for failure in batch["failures"]:
                failure["cause"] = self.fmt.failure_cause(failure)
                failure["kind"] = failures.kind(failure, self.fmt.failure_kind(failure), batch["writer"], result.batches,
                                                result.services)
        causes = failure_causes(result.batches)
        committed = sum(bool(b.get("committed")) for b in result.batches)
        progress(f"{self.fmt.config_id}: {committed} of {len(result.batches)} batches committed in {result.wall_s:.0f} s"
                 + (", failed attempts: " + "; ".join(f"{c} x{n}" for c, n in causes.items()) + " (by kind: " +
                    "; ".join(f"{k} x{n}" for k, n in failures.counted(result.batches).items()) + ")" if causes else
                    ", no failed attempt"))
        return result

    @LEDGER.charged(RACES)
    def check(self, table: TableRef, data: PaymentsData, contention: Contention, result: RaceResult,
              history_before: set[str]) -> dict[str, Any]:
        """The invariants on every engine, the answer before and after a last table service, and the history."""
        spark, fmt = self.lab.spark, self.fmt
        ended = [f["ended_at"] for b in result.batches for f in b["failures"] if f.get("ended_at")]
        if ended and fmt.failed_attempts_pending(spark, table):
            # a failed writer's instant left behind: the last clean rolls it back once its heartbeat has expired
            time.sleep(max(0.0, max(ended) + self.heartbeat_expiry_s() + EXPIRY_MARGIN_S - time.time()))
        keys = sorted(set(contention.touched) | set(contention.deleted))
        generated = data.read(PAYMENTS_SCHEMA.names)  # read once: the touched rows' values and the whole-table digest
        ids = generated.column("txn_id")
        frame = generated.filter(pc.is_in(ids, pa.array(keys, ids.type))).select(["txn_id", "amount", "notes"]).to_pandas()
        base = {int(r.txn_id): (Decimal(r.amount), r.notes) for r in frame.itertuples()}
        rule = invariants.EVENT_TIME if self.control == "nbcc" else invariants.SERIALIZABLE
        expected_rows = generated.num_rows - len(contention.deleted)
        whole = digest.expected(generated, "txn_id", set(contention.touched),
                                set(contention.deleted), CHANGED_COLUMNS)
        by_engine: dict[str, Any] = {}
        reference = self.lab.engines[0].name
        before = self._state(self.lab.engines[0], table, keys, contention.touched)
        try:
            keep = self.cadence.keep_s
            service = fmt.table_service(spark, table, expire_before=time.time() - keep if keep else result.released_at)
        except NotSupported as why:
            service = f"not applicable: {why}"
        history_now = fmt.history(spark, table)
        labelled = invariants.attach_commits(result.batches, history_now)
        states = {}
        for engine in self.lab.engines:
            try:
                states[engine.name] = state = self._state(engine, table, keys, contention.touched)
            except Exception as err:  # noqa: BLE001 - an engine that cannot read this table is recorded, not a result
                by_engine[engine.name] = {"read": f"unsupported: {type(err).__name__}: {str(err).splitlines()[0][:200]}"}
                continue
            checks = {**invariants.check_rows(base, state["rows"], result.batches, set(contention.deleted), rule),
                      **invariants.check_counts(state["row_count"], state["distinct_keys"], expected_rows),
                      **invariants.check_whole_table(whole, state["digest"])}
            by_engine[engine.name] = {"read": "reads", "checks": checks,
                                      **({"pointer": self.pointer_from_spark} if engine.name != reference and self.pointer_from_spark else {})}
        history = invariants.check_history(history_now, history_before, sum(bool(b.get("committed")) for b in result.batches))
        # the isolation level each writer commit was checked under, where the format records it (Delta's commitInfo)
        isolation = dict(Counter(e.isolation for e in history_now if e.by_writer and e.id not in history_before and e.isolation))
        if labelled:
            history.update(invariants.check_labelled_commits(result.batches))
        history["answer_unchanged_by_the_last_service"] = invariants.verdict(
            [] if states.get(reference) == before else [f"the rows changed across {service}"])
        failed = [f"{engine}: {line}" for engine, e in by_engine.items() if "checks" in e
                  for line in invariants.violations(e["checks"])] + invariants.violations(history)
        kept = self.keep_evidence(table) if failed else None
        return {"engines": by_engine, "history": history, "last_service": service, "violations": failed, "rule": rule,
                "evidence": kept, "commit_isolation": isolation or None}

    def keep_evidence(self, table: TableRef) -> str:
        """A table that broke an invariant, copied into the run's folder before the next race makes it afresh: its
        history, commit metadata and data files as the race left them (which log file holds a lost update, which
        compaction or clean passed over it), read afterwards with the format's own tools. Above
        ``EVIDENCE_MAX_BYTES`` (or on an object store) only the list of its files (path, bytes) is kept."""
        root = self.lab.session.run_dir / "evidence"
        root.mkdir(parents=True, exist_ok=True)
        dest = Path(tempfile.mkdtemp(prefix=f"{self.fmt.config_id}-{self.control}-{self.kind}-", dir=root))
        files = Files.of(table.location)
        listing = files.walk()
        (dest / "files.json").write_text(json.dumps(listing, indent=1, sort_keys=True))
        if is_local(table.location) and sum(listing.values()) <= EVIDENCE_MAX_BYTES:
            files.copy_tree(Files.of(dest / "table"))
        return str(dest)

    def _state(self, engine: Any, table: TableRef, keys: list[int], touched: list[int]) -> dict[str, Any]:
        """The rows of ``keys``, the table's row and key counts and its digests (``measure/digest.py``: the rows
        outside ``touched``, every column; those inside, every column a batch does not change), as ``engine`` reads
        the table now."""
        fmt, target = self.fmt, table
        if fmt.jdbc_catalog and engine.name != "spark":  # a JDBC table: the catalog names its metadata file
            target = dataclasses.replace(table, location=self.catalog_pointer(table))
        listed = ", ".join(map(str, keys))
        rows = engine.query(fmt, target, f"SELECT txn_id, amount, notes FROM {{table}} WHERE txn_id IN ({listed})", "snapshot")
        counts = engine.query(fmt, target, "SELECT COUNT(*), COUNT(DISTINCT txn_id) FROM {table}", "snapshot")[0]
        columns = [(f.name, f.type) for f in PAYMENTS_SCHEMA]
        digests = engine.query(fmt, target, digest.sql(columns, table.key, set(touched), CHANGED_COLUMNS, engine), "snapshot")
        return {"rows": {int(k): (Decimal(str(a)), n) for k, a, n in rows},
                "row_count": int(counts[0]), "distinct_keys": int(counts[1]), "digest": digest.from_row(digests[0])}


    def catalog_pointer(self, table: TableRef) -> str:
        """An Iceberg table's current metadata file as the JDBC catalog's own row holds it (what an engine that
        follows the catalog reads); Spark's view of it only where no ``psql`` can ask the catalog (a user's server
        with no PostgreSQL client here), and the race then records so."""
        coordination = self.lab.session.coordination
        try:
            assert coordination is not None
            return coordination.catalog().metadata_location(self.fmt.catalog, NAMESPACE, table.name)  # type: ignore[attr-defined]
        except MissingArtifact as why:
            self.pointer_from_spark = f"the metadata pointer came from Spark, not the catalog: {why}"
            return self.fmt.current_metadata(self.lab.spark, table)  # type: ignore[attr-defined]

    @staticmethod
    def summarize_races(raced: list[tuple[RaceResult, dict[str, Any]]], writers: int) -> dict[str, Any]:
        """The races of one grid point in one record (``summarize_races``)."""
        return summarize_races(raced, writers)


def summarize_races(raced: list[tuple[RaceResult, dict[str, Any]]], writers: int) -> dict[str, Any]:
    """Every race's batches (each tagged with its race) counted together; committed rows per second per race with
    the median's 95% interval over the races; the last race's invariants, every race's violations (named by race
    where there were several)."""
    several = len(raced) > 1
    batches = [{**b, "race": n} for n, (result, _) in enumerate(raced, 1) for b in result.batches]
    combined = RaceResult(batches, [s for result, _ in raced for s in result.services],
                          sum(result.wall_s for result, _ in raced), sum(result.startup_s for result, _ in raced),
                          [e for result, _ in raced for e in result.writer_errors],
                          sum(result.writers_started for result, _ in raced))
    per_race = [summarize(result, writers) for result, _ in raced]
    rates = [x["committed_rows_per_s"] for x in per_race]
    violations = [f"race {n}: {v}" if several else v for n, (result, checked) in enumerate(raced, 1)
                  for v in checked["violations"] + result.writer_errors]
    return {**summarize(combined, writers), "batches": batches, "invariants": raced[-1][1], "violations": violations,
            "races": len(raced), "committed_rows_per_s_by_race": rates,
            "committed_rows_per_s_uncertainty": uncertainty.describe(rates),
            "conflicts_by_race": [x["conflicts"] for x in per_race],
            "evidence": [checked["evidence"] for _, checked in raced if checked.get("evidence")]}


def failure_causes(batches: list[dict[str, Any]]) -> dict[str, int]:
    """The batches' failed attempts counted by cause (``SeveralWriters.race`` gives each one), most first."""
    return failures.counted(batches, by="cause")


def lock_wait_per_commit(batches: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The committed batches' lock waits: how many, their median and the longest (None: none was measured)."""
    waits = [b["lock_wait_s"] for b in batches if b.get("committed") and b.get("lock_wait_s") is not None]
    if not waits:
        return None
    return {"commits": len(waits), "median": float(np.median(waits)), "max": max(waits)}


def summarize(result: RaceResult, writers: int) -> dict[str, Any]:
    """Per writer and in all: batches attempted, committed, failed by conflict (by exception class), retried, the
    time to commit, committed rows per second of the race."""
    per_writer = []
    for w in range(writers):
        mine = [b for b in result.batches if b["writer"] == w]
        committed = [b for b in mine if b.get("committed")]
        rows = sum(len(b["keys"]) for b in committed)
        per_writer.append({"writer": w, "batches_attempted": len(mine), "batches_committed": len(committed),
                           "batches_failed": len(mine) - len(committed),
                           "conflicts": sum(len(b["failures"]) for b in mine),
                           "retries": sum(b["attempts"] - 1 for b in mine),
                           "commit_seconds_median": float(np.median([b["seconds"] for b in committed])) if committed else None,
                           "rows_committed": rows})
    classes: dict[str, int] = {}
    for b in result.batches:
        for f in b["failures"]:
            name = f.get("root_cause") or f["class"]
            classes[name] = classes.get(name, 0) + 1
    committed_rows = sum(p["rows_committed"] for p in per_writer)
    attempts = sum(b["attempts"] for b in result.batches)
    return {"per_writer": per_writer, "batches_attempted": sum(p["batches_attempted"] for p in per_writer),
            "batches_committed": sum(p["batches_committed"] for p in per_writer),
            "batches_failed": sum(p["batches_failed"] for p in per_writer), "commit_attempts": attempts,
            "conflicts": sum(p["conflicts"] for p in per_writer), "conflict_rate": (sum(p["conflicts"] for p in per_writer) / attempts) if attempts else 0.0,
            "retries": sum(p["retries"] for p in per_writer), "conflict_classes": classes,
            "failure_causes": failure_causes(result.batches), "failure_kinds": failures.counted(result.batches),
            # statements that raised after their commit had landed (found by the checked retry, which then stops)
            "raised_after_commit": sum(bool(b.get("raised_after_commit")) for b in result.batches),
            # the seconds each committed batch's writer waited for the format's lock (Hudi's, from its own log lines;
            # None where the writers take no lock or, as threads of one application, log no lock of their own)
            "lock_wait_per_commit_s": lock_wait_per_commit(result.batches),
            "rows_committed": committed_rows, "committed_rows_per_s": committed_rows / result.wall_s if result.wall_s else 0.0,
            "race_wall_s": result.wall_s, "startup_s": result.startup_s, "writers_started": result.writers_started,
            "services": result.services, "services_committed": sum(bool(s.get("committed")) for s in result.services),
            "services_failed": sum(not s.get("committed") and "not_applicable" not in s for s in result.services),
            "writer_errors": result.writer_errors}
