"""Measuring one operation: time it over rounds, diff the table directory, read the format's own account, verify rows.

Reads on every engine are in ``reads.py``.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench.core import requests, uncertainty
from bench.core.ledger import LEDGER, OPERATIONS, PROBES
from bench.exceptions import WrongAnswer
from bench.formats.base import DATA
from bench.measure.anatomy import anatomy
from bench.measure.locate import ScanWatch
from bench.measure.memory import MemoryWatch
from bench.measure.probe import Listing, diff, list_files, table_size
from bench.workload.queries import among, money, normalize

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from bench.formats.base import TableFormat, TableRef


def timed(fn: Callable[..., Any], *args: Any, category: str = OPERATIONS) -> tuple[float, Any]:
    """Time one measured call, charging it to ``category`` of the run's ledger."""
    with LEDGER.spend(category):
        start = time.perf_counter()
        result = fn(*args)
        return time.perf_counter() - start, result


def measured(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` charged to the ledger's measured operations (for ``benchmark.pedantic`` targets)."""
    return LEDGER.charged(OPERATIONS)(fn)


@dataclass(frozen=True)
class RoundsPlan:
    """How many rounds an operation gets: at least ``min_rounds``, then more until the 95% interval of its median
    is within ±``target_ci`` of it, or ``max_rounds`` is reached."""

    min_rounds: int
    max_rounds: int
    target_ci: float


def adaptive_pedantic(benchmark: Any, target: Callable[..., Any], setup: Callable[[], Any], plan: RoundsPlan) -> dict[str, Any]:
    """pytest-benchmark's pedantic mode for ``min_rounds``, then an outer loop of further rounds (the same setup,
    the same timer) appended to the same benchmark's statistics until ``plan`` is met; returns what happened."""
    benchmark.pedantic(target, setup=setup, rounds=plan.min_rounds, iterations=1)
    meta = getattr(benchmark, "stats", None)  # None with --benchmark-disable: nothing was timed
    timer = getattr(benchmark, "_timer", time.perf_counter)
    while meta is not None and len(meta.stats.data) < plan.max_rounds and _width(meta.stats.data) > plan.target_ci:
        args, kwargs = setup()
        start = timer()
        target(*args, **kwargs)
        meta.stats.update(timer() - start)
    return _reached(plan, meta.stats.data if meta is not None else [])


def _reached(plan: RoundsPlan, data: list[float]) -> dict[str, Any]:
    """What a plan asked and what the rounds reached (one round: no interval, never met)."""
    width = uncertainty.half_width(uncertainty.describe(data)) if data else None
    return {**vars(plan), "rounds": len(data), "ci_half_width": width,
            "target_met": width is not None and width <= plan.target_ci}


@dataclass
class Arm:
    """One configuration's part of a measurement taken in turns (``take_turns``): its round's setup (untimed), the
    timed call, what closes a round, and whatever the scenario keeps for its record (``rounds``, ``state``: its
    ``table`` is the table its rounds change, which the configurations of a family may share one location for)."""

    config_id: str
    setup: Callable[[], tuple[tuple, dict]]
    target: Callable[..., Any]
    rounds: Rounds
    state: dict[str, Any]
    seconds: list[float] = field(default_factory=list)
    error: BaseException | None = None
    partners: list[str] = field(default_factory=list)  # the configurations it took turns with, itself included


def take_turns(arms: list[Arm], plan: RoundsPlan, timer: Callable[[], float] = time.perf_counter,
               after_round: Callable[[Arm], None] = lambda arm: None) -> None:
    """Round k of every arm before round k + 1 of any (A B C A B C …), so a machine that drifts during the
    measurement drifts every configuration alike; ``min_rounds`` each, then further rounds, all arms together,
    until every arm's 95% interval is within ±``target_ci`` or ``max_rounds``. An arm that raises drops out with
    its error kept (its test raises it); the others go on. ``after_round`` runs after each arm's round, untimed
    (``Lab.measure`` keeps the round's table there, before the next arm's setup restores its own in its place)."""
    while True:
        live = [a for a in arms if a.error is None]
        done = min((len(a.seconds) for a in live), default=plan.max_rounds)
        if done >= plan.max_rounds or (done >= plan.min_rounds and all(_width(a.seconds) <= plan.target_ci for a in live)):
            return
        for arm in live:
            try:
                args, kwargs = arm.setup()
                start = timer()
                arm.target(*args, **kwargs)
                arm.seconds.append(timer() - start)
                arm.rounds.close()  # before the next arm's round: its listing and memory are this round's alone
                after_round(arm)
            except Exception as err:  # noqa: BLE001 - kept and raised by the arm's own test
                arm.error = err


def replay(benchmark: Any, arm: Arm, plan: RoundsPlan) -> dict[str, Any]:
    """An arm's rounds, measured in turns with its partners, handed to its own test's pytest-benchmark fixture as the
    statistics ``pedantic`` would have filled (the same timer, one call a round); returns what happened, as
    ``adaptive_pedantic`` does, naming the configurations it took turns with."""
    if not getattr(benchmark, "disabled", False):
        benchmark._mode = "benchmark.pedantic(...)"  # noqa: SLF001 - the fixture's own record of how it was used
        stats = benchmark._make_stats(1)  # noqa: SLF001
        for seconds in arm.seconds:
            stats.update(seconds)
    return {**_reached(plan, arm.seconds), "interleaved_with": arm.partners}


def _width(seconds: list[float]) -> float:
    """The median's relative half-interval; infinite without one (a round alone). Zero is a width: identical rounds."""
    width = uncertainty.half_width(uncertainty.describe(seconds)) if seconds else None
    return float("inf") if width is None else width


def degradation_rate(latencies: list[float]) -> float:
    """LST-Bench's degradation rate: the mean of the relative change between consecutive measurements."""
    steps = [(b - a) / a for a, b in zip(latencies, latencies[1:]) if a > 0]
    return statistics.fmean(steps) if steps else 0.0


@dataclass
class Observation:
    """Filesystem and metadata state taken before an operation, closed after it."""

    fmt: TableFormat
    table: TableRef
    before: Listing
    marker: object
    requests_before: Counter | None = None
    scans: ScanWatch | None = None
    memory: MemoryWatch | None = None

    @classmethod
    @LEDGER.charged(PROBES)
    def start(cls, fmt: TableFormat, table: TableRef) -> Observation:
        """Listed and marked first, then Spark's queries so far and the request counter read last: the probe's own
        requests and queries are not counted."""
        observation = cls(fmt, table, list_files(table.location), fmt.commit_marker(table))
        observation.scans = ScanWatch.start()
        observation.memory = MemoryWatch.start()
        observation.requests_before = requests.snapshot()
        return observation

    @LEDGER.charged(PROBES)
    def finish(self, logical_bytes: float | None = None) -> dict[str, Any]:
        """Bytes and files from the filesystem and from the format's metadata, write amplification, the
        object-store requests the operation made (counted before this method lists anything) and its peak memory
        (taken before the listing and the format's metadata add their own)."""
        made = requests.since(self.requests_before)
        memory = self.memory.finish() if self.memory is not None else None
        located = self.scans.finish() if self.scans is not None else None
        after = list_files(self.table.location)
        fs = diff(self.before, after, self.fmt.classify, self.fmt.parts)
        meta = self.fmt.describe_commits(self.table, self.marker)
        written = [rel for rel in after.files if rel not in self.before.files and rel.endswith(".parquet")
                   and self.fmt.classify(rel) == DATA]
        record: dict[str, Any] = {
            "filesystem": fs.as_dict(),
            "data_file_anatomy": anatomy(self.table.location, written) if written else {},
            "metadata": meta.as_dict(),
            "table_on_disk": table_size(after, self.fmt.classify),
            "table_bytes_on_disk": after.bytes,
        }
        if made is not None:
            record["requests"] = made
        if located is not None:
            record["locate"] = located
        if memory is not None:
            record["memory"] = memory
        if logical_bytes:
            record["logical_bytes"] = logical_bytes
            record["write_amplification"] = fs.bytes_added / logical_bytes
            record["write_amplification_metadata"] = meta.bytes_added / logical_bytes
        return record


class Rounds:
    """Per-round records for ``benchmark.pedantic``, which has no teardown: ``setup`` first closes the previous
    round (before the table is rebuilt, or the rebuild would count as written), then ``start``s the next one;
    the last round is closed after the benchmark."""

    def __init__(self, logical_bytes: float | None = None) -> None:
        self.logical_bytes = logical_bytes
        self.records: list[dict[str, Any]] = []
        self._open: Observation | None = None
        self._extra: dict[str, Any] = {}

    def start(self, fmt: TableFormat, table: TableRef, **extra: Any) -> None:
        """Observe ``table`` from now; ``extra`` is stored with this round, with a fingerprint of the starting
        files (so a record shows that every round started from the same table state)."""
        assert self._open is None, "close() the previous round before rebuilding the table"
        self._open = Observation.start(fmt, table)
        self._extra = {"start_listing": self._open.before.fingerprint(), **extra}

    def close(self) -> None:
        if self._open is not None:
            self.records.append(self._open.finish(self.logical_bytes) | self._extra)
            self._open = None

    @property
    def number(self) -> int:
        """The round about to start (1-based), for progress lines."""
        return len(self.records) + 1

    @property
    def last(self) -> dict[str, Any]:
        return self.records[-1]


@LEDGER.charged(PROBES)
def verify_rows(spark: SparkSession, relation: str, expected, key: str, changed_keys: list[int], total_rows: int,
                columns: tuple[str, ...] = ("status", "amount")) -> dict[str, Any]:
    """The table equals the expected state: the row count, and every changed key's columns exactly.

    Raises:
        WrongAnswer: a missing, extra or different row.
    """
    count = spark.sql(f"SELECT COUNT(*) FROM {relation}").collect()[0][0]
    if count != total_rows:
        raise WrongAnswer(f"{relation}: {count} rows, expected {total_rows}")
    got = normalize(spark.sql(f"SELECT {key}, {', '.join(columns)} FROM {relation} WHERE {among(key, changed_keys)}").collect())
    want_frame = expected[expected[key].isin(changed_keys)]
    want = normalize([tuple([int(getattr(r, key))] + [money(r.amount_cents) if c == "amount" else getattr(r, c) for c in columns])
                      for r in want_frame.itertuples()])
    if got != want:
        differing = sorted(set(want) ^ set(got))
        raise WrongAnswer(f"{relation}: {len(differing)} changed rows differ, e.g. {differing[:3]}")
    return {"row_count": count, "rows_changed_verified": len(got)}


