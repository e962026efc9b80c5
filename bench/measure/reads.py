"""Reads on every engine: each dashboard query timed on each, every answer checked against the expected one."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

from bench.core import requests
from bench.engines import PRIMARY
from bench.exceptions import WrongAnswer
from bench.measure.memory import MemoryWatch
from bench.workload.queries import Query, normalize

if TYPE_CHECKING:
    from bench.engines.base import ReadEngine
    from bench.formats.base import TableFormat, TableRef


def summarize(seconds: list[float]) -> dict[str, float]:
    return {"min": min(seconds), "median": statistics.median(seconds), "max": max(seconds), "n": len(seconds)}


def run_reads(engines: list[ReadEngine], fmt: TableFormat, table: TableRef, queries: list[Query],
              expected: dict[str, list[tuple]], repeats: int, mode: str = "snapshot") -> dict[str, dict[str, Any]]:
    """Run each dashboard query ``repeats`` times on every engine; every answer must equal the expected one.

    The first engine (Spark, which wrote the table) is the reference: its figures stay at the top level of each
    query's record, every engine's (its own included) are under ``engines``. Where another engine cannot read
    the configuration at all, that is recorded as unsupported (with the engine's error) and the run goes on.

    Raises:
        WrongAnswer: an engine's answer differs (a fast wrong answer is a failure, not a result).
    """
    out: dict[str, dict[str, Any]] = {}
    for query in queries:
        by_engine = {engine.name: _read_on(engine, fmt, table, query, expected[query.name], repeats, mode)
                     for engine in engines}
        out[query.name] = {**by_engine[engines[0].name], "mode": mode, "engines": by_engine}
    return out


def _read_on(engine: ReadEngine, fmt: TableFormat, table: TableRef, query: Query, expected: list[tuple],
             repeats: int, mode: str) -> dict[str, Any]:
    seconds, answer = [], []
    memory = MemoryWatch.start()
    before = requests.snapshot()
    for _ in range(repeats):
        result = engine.attempt(fmt, table, query.sql, mode, reference=engine.name == PRIMARY)
        if isinstance(result, str):
            return {"unsupported": result, "version": engine.version()}
        seconds.append(result[0])
        answer = normalize(result[1])
    if answer != expected:
        raise WrongAnswer(disagreement(engine.version(), fmt.config_id, mode, query.name, answer, expected))
    made = requests.since(before)
    out = {**_cold_and_warm(seconds), "rows": len(answer), "answer_ok": True, "version": engine.version(),
           "memory": memory.finish()}  # over every repeat, the cold first read's included
    if made is not None:  # every repeat's requests, the cold first read's included
        out["requests"] = made | {"repeats": repeats}
    return out


def _cold_and_warm(seconds: list[float]) -> dict[str, Any]:
    """The first read of a query on a table state is cold (metadata and footers not cached yet) and is kept apart;
    the figures (``seconds``, median, ...) are the warm repeats, or the one read where there is no repeat."""
    cold, warm = seconds[:1], (seconds[1:] or seconds)
    return {"seconds": warm, **summarize(warm), "cold_s": cold}


def disagreement(engine: str, config_id: str, mode: str, query: str, got: list[tuple], want: list[tuple]) -> str:
    """One line naming the engine, configuration, query and a few differing rows."""
    extra, lacking = sorted(set(got) - set(want)), sorted(set(want) - set(got))
    return (f"{engine} answered {query} on {config_id} ({mode} read) wrongly: {len(got)} rows, expected {len(want)}; "
            f"rows it returned that are not expected: {extra[:3]}; expected rows it did not return: {lacking[:3]}")
