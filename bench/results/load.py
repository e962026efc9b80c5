"""Flatten recorded runs (read through the results contract) into tidy frames for the report, compare and history.

Never imports pyspark: the report reads only result files.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from bench.core import resident
from bench.results.contract import (  # noqa: F401 (the readers' API)
    LOCAL_DISK,
    MEMORY_FIELDS,
    ORIGIN,
    REFERENCE_ENGINE,
    Matrix,
    Record,
    Run,
    load_run,
)
from bench.results.schema import AVAILABLE, EngineUsed


def _get(d: dict, *keys: str, default: Any = None) -> Any:
    for key in keys:
        if not isinstance(d, dict) or key not in d:
            return default
        d = d[key]
    return d


REQUEST_KINDS = ("GET", "PUT", "POST", "LIST", "COPY", "DELETE", "total")


def operations(run: Run) -> pd.DataFrame:
    """One row per measured operation (benchmark): timing stats and what it wrote."""
    rows = [_operation(run, b) for b in run.records()]  # a test timed, then failed before recording, is a failed outcome
    return pd.DataFrame(rows, columns=list(_operation(run, Record("", "", {}, {}))))  # columns even with no row


def _operation(run: Run, b: Record) -> dict[str, Any]:
    x, stats = b.info, b.stats
    fs, meta = x.get("filesystem") or {}, x.get("metadata") or {}
    return {
        "run_id": run.run_id, "scale": x.get("scale", run.scale), "scenario": x.get("scenario"),
        "operation": x.get("operation"), "config_id": x.get("config_id"), "family": x.get("family"),
        "mode": x.get("mode"), "param": x.get("param"), "name": b.name,
        "median_s": stats.get("median"), "min_s": stats.get("min"), "max_s": stats.get("max"),
        "iqr_s": stats.get("iqr"), "stddev_s": stats.get("stddev"), "rounds": stats.get("rounds"),
        "ci_low_s": (_get(x, "uncertainty", "ci95") or [None, None])[0],
        "ci_high_s": (_get(x, "uncertainty", "ci95") or [None, None])[1], "cv": _get(x, "uncertainty", "cv"),
        "fs_bytes_added": fs.get("bytes_added"), "fs_files_added": fs.get("files_added"),
        "fs_bytes_removed": fs.get("bytes_removed"), "fs_files_removed": fs.get("files_removed"),
        "fs_data_bytes_added": _get(fs, "data", "bytes_added"), "fs_data_files_added": _get(fs, "data", "files_added"),
        "fs_delete_bytes_added": (_get(fs, "delete", "bytes_added", default=0) or 0) + (_get(fs, "log", "bytes_added", default=0) or 0),
        "fs_delete_files_added": (_get(fs, "delete", "files_added", default=0) or 0) + (_get(fs, "log", "files_added", default=0) or 0),
        "fs_metadata_bytes_added": _get(fs, "metadata", "bytes_added"),
        "meta_bytes_added": meta.get("bytes_added"), "meta_bytes_removed": meta.get("bytes_removed"),
        "meta_data_files_added": meta.get("data_files_added"), "meta_data_files_removed": meta.get("data_files_removed"),
        "meta_delete_files_added": meta.get("delete_files_added"), "meta_delete_files_removed": meta.get("delete_files_removed"),
        "rows_changed_reported": meta.get("rows_changed"), "rows_changed_verified": x.get("rows_changed_verified"),
        "write_amplification": x.get("write_amplification"), "logical_bytes": x.get("logical_bytes"),
        "table_bytes_on_disk": x.get("table_bytes_on_disk"),
        # object-store requests of the operation by kind (absent on local disk)
        **{f"req_{k.lower()}": _get(x, "requests", k) for k in REQUEST_KINDS},
        "live_data_files_after": _get(x, "live_files_after", "data_files"),
        "live_delete_files_after": _get(x, "live_files_after", "delete_files"),
        "answers_verified": x.get("answers_verified"),
        # what the written data files hold (bench/measure/anatomy.py), and writes a format keeps apart (Hudi's metadata table)
        "data_table_columns_bytes": _get(x, "data_file_anatomy", "table_columns"),
        "data_format_columns_bytes": _get(x, "data_file_anatomy", "format_columns"),
        "data_footer_index_bytes": _get(x, "data_file_anatomy", "footer_index"),
        "fs_metadata_table_bytes_added": _get(fs, "parts", "metadata_table", "bytes_added"),
    }


MEMORY_COLUMNS = ["run_id", "scenario", "operation", "config_id", "route", "param", "file_bytes_mean", "median_s",
                  "ci_low_s", "ci_high_s", "rounds", *MEMORY_FIELDS]


def _interval(r: Record) -> dict[str, float | None]:
    ci = r.spread.ci95
    return {"ci_low_s": ci[0] if ci else None, "ci_high_s": ci[1] if ci else None, "rounds": r.spread.n}


def memory(run: Run) -> pd.DataFrame:
    """One row per measured operation that recorded its peak memory, every route: each figure the largest of its
    rounds, beside the operation's median time and its table's file size."""
    heap = resident.jvm_size_bytes(run.env.spark.driver_memory if run.env.spark else "")
    rows = [{"run_id": run.run_id, "scenario": r.scenario, "operation": r.operation, "config_id": r.config_id,
             "route": r.route, "param": r.param, "file_bytes_mean": r.get("file_bytes_mean"),
             "median_s": r.stats.get("median"), **_interval(r), **r.memory}
            for r in run.records(route=None) if r.memory]
    for row in rows:  # runs recorded before the driver's figure was capped at its heap: the heap never held more
        if heap and row.get("driver_heap_peak_bytes"):
            row["driver_heap_peak_bytes"] = min(row["driver_heap_peak_bytes"], heap)
    return pd.DataFrame(rows, columns=MEMORY_COLUMNS)


READ_COLUMNS = ["run_id", "scenario", "operation", "param", "config_id", "phase", "query", "mode", "engine", "requests_per_read", "median_s", "min_s",
                "max_s", "n", "answer_ok", "unsupported", "seconds"]


def reads(run: Run) -> pd.DataFrame:
    """One row per (operation, phase, query, engine): read latencies before/after changes and after compaction.

    Runs recorded before the engine dimension existed read on Spark only; an engine that could not read a
    configuration has a row with its reason in ``unsupported`` and no timing.
    """
    rows = []
    for b in run.records():
        x = b.info
        for phase in ("reads_before", "reads_after", "reads_after_compaction"):
            for query, r in (x.get(phase) or {}).items():
                for engine, e in (r.get("engines") or {REFERENCE_ENGINE: r}).items():
                    rows.append({"run_id": run.run_id, "scenario": x.get("scenario"), "operation": x.get("operation"),
                                 "param": x.get("param"), "config_id": x.get("config_id"), "phase": phase.removeprefix("reads_"),
                                 "query": query, "mode": r.get("mode"), "engine": engine, "median_s": e.get("median"),
                                 "min_s": e.get("min"), "max_s": e.get("max"), "n": e.get("n"),
                                 "answer_ok": e.get("answer_ok"), "unsupported": e.get("unsupported"),
                                 "requests_per_read": (e["requests"]["total"] / max(e["requests"].get("repeats", 1), 1))
                                 if isinstance(e.get("requests"), dict) else None,
                                 "seconds": e.get("seconds")})
    return pd.DataFrame(rows, columns=READ_COLUMNS)


def engines(run: Run) -> dict[str, EngineUsed]:
    """The run's engine record (version, settings, support per configuration); Spark alone for older runs."""
    return run.env.engines or {REFERENCE_ENGINE: EngineUsed(AVAILABLE, "spark")}


def outcomes(run: Run) -> pd.DataFrame:
    frame = pd.DataFrame(run.outcomes)
    if frame.empty:
        return pd.DataFrame(columns=["config_id", "test", "outcome", "reason"])
    if "reason" not in frame:
        frame["reason"] = None
    return frame


def merge(runs: list[Run]) -> Run:
    """One view of several runs: for each benchmark (and each test outcome) the newest run's record wins; the same
    benchmark measured on another table layout is kept aside (``Run.records(other_layouts=True)``), and so is every
    record a newer one replaced (``Run.records(superseded=True)``: a ratio takes both sides from one run)."""
    if len(runs) == 1:
        return runs[0]
    benchmarks: dict[str, dict] = {}
    layouts: dict[tuple[str, str], dict] = {}
    outcomes: dict[str, dict] = {}
    superseded: list[dict] = []
    for run in runs:
        origin = run.origin.as_dict()
        superseded += run.cowmor.get("superseded", [])
        for b in [*run.cowmor.get("other_layouts", []), *run.benchmarks]:  # a run's own record wins over what it held aside
            b = b if ORIGIN in b else {**b, ORIGIN: origin}  # which run, host and commit measured it (never divided across)
            name, layout = identity(b), table_layout(b)
            if name in benchmarks and table_layout(benchmarks[name]) == layout:
                superseded.append(benchmarks[name])
            benchmarks[name] = b
            layouts[(name, layout)] = b
        for o in run.outcomes:
            outcomes[o.get("nodeid") or f"{o.get('test')}[{o.get('config_id')}]"] = o
    newest = runs[-1]
    configs: dict[str, Any] = {}
    for run in runs:  # the matrix of the merged view is every run's
        configs.update(run.environment.get("configs") or {})
    # the same test on another table layout: a point of its own for the cost model, never a second answer elsewhere
    others = [b for (name, layout), b in layouts.items() if table_layout(benchmarks[name]) != layout]
    data = {**newest.data, "benchmarks": list(benchmarks.values()),
            "cowmor": {**newest.cowmor, "environment": {**newest.environment, "configs": configs},
                       "outcomes": list(outcomes.values()), "other_layouts": others, "superseded": superseded}}
    return Run(newest.path, data, partial=any(r.partial for r in runs))


def identity(benchmark: dict) -> str:
    """What one benchmark measured: its test id, and where it records one, the set-up it ran under (several writers'
    realistic set-up, the stress variant, a control): the same test under another set-up is another answer, kept
    beside it in a merge, never replaced by it."""
    name = benchmark.get("fullname") or benchmark["name"]
    setup = ((benchmark.get("extra_info") or {}).get("coordination") or {}).get("setup")
    return f"{name} {json.dumps(setup, sort_keys=True)}" if setup else name


def table_layout(benchmark: dict) -> str:
    """The shape of the table a benchmark updated (``90x4x5000``: days x files per day x rows per file), where it
    records one: the same test on another layout (``--param days=8 --param files_per_day=45``) is another point."""
    base = (benchmark.get("extra_info") or {}).get("base") or {}
    return "x".join(str(base[k]) for k in ("days", "files_per_day", "rows_per_file")) if "days" in base else ""


# settings that name this run's paths, jars, endpoints or credentials: they differ between any two runs and say
# nothing about how fast Spark ran (the storage itself is compared by storage_kind)
RUN_OWN_SETTINGS = ("spark.app.name", "spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions", "spark.jars",
                    "spark.hadoop.fs.s3a.")


def spark_settings(env: dict) -> dict[str, str]:
    """The Spark settings a run's timings depend on (sizing, planning, compression), as recorded."""
    conf = (env.get("spark") or {}).get("conf") or {}
    return {k: str(v) for k, v in conf.items() if not k.startswith(RUN_OWN_SETTINGS)}


def settings_that_differ(runs: list[Run]) -> dict[str, dict[str, list[str]]]:
    """Each Spark setting recorded with different values across ``runs``: setting -> value ("unset") -> run ids."""
    settings = {r.run_id: spark_settings(r.environment) for r in runs}
    differ: dict[str, dict[str, list[str]]] = {}
    for key in sorted(set().union(*settings.values())) if settings else []:
        values: dict[str, list[str]] = {}
        for run_id, s in settings.items():
            values.setdefault(s.get(key, "unset"), []).append(run_id)
        if len(values) > 1:
            differ[key] = values
    return differ


def storage_kind(env: dict) -> str:
    """The storage as timings depend on it (local disk, an object store, its added latency per request), not where
    on it the workspace was: runs from two checkouts on one disk were measured on the same storage."""
    storage = env.get("storage") or {"kind": LOCAL_DISK}
    if storage.get("kind") == LOCAL_DISK:
        return LOCAL_DISK
    delay = storage.get("delay_ms_per_request") or 0
    return f"object store +{delay:g} ms/request" if delay else "object store"


def runs_by_storage(runs: list[Run]) -> dict[str, list[str]]:
    """Run ids per storage kind (``storage_kind``), in the runs' order."""
    kinds: dict[str, list[str]] = {}
    for r in runs:
        kinds.setdefault(storage_kind(r.environment), []).append(r.run_id)
    return kinds


def storage_label(env: dict) -> str:
    """Which storage the timings were taken on: they hold for that storage (and delay) only."""
    storage = env.get("storage") or {"kind": LOCAL_DISK}
    if storage.get("kind") == LOCAL_DISK:
        return f"local disk ({env.get('workspace', '?')})"
    delay = storage.get("delay_ms_per_request") or 0
    return (f"object store: {storage.get('kind')}, {env.get('workspace', '?')}; requests "
            + ("counted by the server" if storage.get("requests_counted") else "not counted")
            + (f"; every request of Spark and the read engines held {delay:g} ms (S3-like latency)" if delay
               else "; no added latency"))
