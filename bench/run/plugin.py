"""cowmor's pytest plugin: options, the run session, per-configuration fixtures and the run record.

Loaded by the top-level conftest.py. Fixtures stay thin: they hand a scenario a Spark session of the
right family, an adapter and the base data; the scenario does the measuring.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from bench.core import ledger, uncertainty
from bench.exceptions import CowmorError, JavaNotFound, MissingArtifact
from bench.formats import CONFIGS, FAMILIES
from bench.formats.base import JOIN
from bench.run import stopping
from bench.run.lab import Lab, Turns
from bench.run.options import add_options
from bench.run.session import BenchSession

if TYPE_CHECKING:

    pass

SESSION_KEY = pytest.StashKey[BenchSession]()
OUTCOMES_KEY = pytest.StashKey[dict]()
NOISY_KEY = pytest.StashKey[list]()  # benchmarks whose rounds vary by more than uncertainty.CV_FLAG
PLAN_KEY = pytest.StashKey[dict]()  # scenario tests collected / finished, for the time-left estimate


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cowmor", "cowmor benchmark harness")
    add_options(group.addoption)


class _RunJson:
    """A file object for pytest-benchmark's JSON that opens results/<run-id>/benchmark.json only when written."""

    def __init__(self, session: BenchSession) -> None:
        self.session = session
        self._fh = None

    def __enter__(self):
        self._fh = open(self.session.run_dir / "benchmark.json", "wb")
        return self._fh

    def __exit__(self, *exc: object) -> None:
        self._fh.close()

    def __str__(self) -> str:
        return str(self.session.results_dir / self.session.run_id / "benchmark.json")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "merge_on_read: run only on configurations that merge on read")
    config.addinivalue_line("markers", "spark: needs a JVM and Spark (deselect with -m 'not spark')")
    try:
        session = BenchSession.from_options(config.option, start=True)
    except CowmorError as err:
        raise pytest.UsageError(str(err)) from None
    config.stash[SESSION_KEY] = session
    config.stash[OUTCOMES_KEY] = {}
    _stop_cleanly_on_signals(session)
    ledger.LEDGER.restart()
    if getattr(config.option, "benchmark_json", None) is None:
        config.option.benchmark_json = _RunJson(session)


def _stop_cleanly_on_signals(session: BenchSession) -> None:
    """A run stopped by Ctrl-C, a CI timeout or a closed terminal still writes what it measured, marked interrupted
    (the first signal says why)."""

    def record(name: str) -> None:
        if session.interrupted is None:
            session.interrupted = name

    stopping.install(record)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A scenario's own grid (its module's ``GRID``: name -> scale -> [(value, id)]), then the configurations, then
    the locate routes where the scenario takes a ``route`` (of those selected, the ones its module's ``ROUTES``
    keeps at the scale, where it has one)."""
    session = metafunc.config.stash.get(SESSION_KEY, None)
    for name, points in getattr(metafunc.module, "GRID", {}).items():
        if name in metafunc.fixturenames and session is not None:
            values = points(session.scale)
            metafunc.parametrize(name, [v for v, _ in values], ids=[i for _, i in values])
    _parametrize_configs(metafunc)
    if "route" in metafunc.fixturenames and SESSION_KEY in metafunc.config.stash:  # after the configuration: [iceberg-cow-join]
        session = metafunc.config.stash[SESSION_KEY]
        routes = getattr(metafunc.module, "ROUTES", lambda scale, selected: selected)(session.scale, session.routes)
        metafunc.parametrize("route", routes, ids=routes)


def _parametrize_configs(metafunc: pytest.Metafunc) -> None:
    if "config_id" not in metafunc.fixturenames or any(
            "config_id" in str(m.args[0]) for m in metafunc.definition.iter_markers("parametrize")):
        return  # not a scenario, or the test parametrizes configurations itself
    session = metafunc.config.stash[SESSION_KEY]
    configs = session.configs
    if metafunc.definition.get_closest_marker("merge_on_read"):
        configs = [c for c in configs if c.merges_on_read]
    if not configs:  # e.g. compaction with only copy-on-write selected: nothing applies, say so
        skip = pytest.mark.skip(reason="no selected configuration merges on read (--formats)")
        metafunc.parametrize("config_id", [pytest.param(None, marks=skip)], ids=["no-configuration"])
        return
    metafunc.parametrize("config_id", [c.id for c in configs], ids=[c.id for c in configs])


def _config_id(item: pytest.Item) -> str | None:
    """The configuration a test item runs on (None for unit tests, and for a scenario whose marker filter left
    no configuration: its single ``no-configuration`` item is skipped and never recorded as an outcome)."""
    callspec = getattr(item, "callspec", None)
    config_id = callspec.params.get("config_id") if callspec else None
    return config_id if isinstance(config_id, str) and config_id in CONFIGS else None


def scenario_weight(item: pytest.Item) -> float:
    """How long a scenario test takes relative to the others, for the time-left estimate: its module's ``WEIGHT``
    (a function of the test's parameters) where one grid point costs far more than another, else 1."""
    weight = getattr(getattr(item, "module", None), "WEIGHT", None)
    callspec = getattr(item, "callspec", None)
    return float(weight(callspec.params)) if weight and callspec else 1.0


def _family_rank(item: pytest.Item) -> int:
    config_id = _config_id(item)
    return list(FAMILIES).index(CONFIGS[config_id].family) if config_id else -1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group tests by format family (stable), so each family's JVM starts once; within a family the memory search
    runs last, for its attempts start applications with other memories."""
    items.sort(key=lambda item: (_family_rank(item), getattr(item, "originalname", "") == "test_memory_needed"))
    bench_session = getattr(config, "_benchmarksession", None)
    if bench_session is not None and isinstance(bench_session.json, _RunJson) and \
            not any("benchmark" in getattr(item, "fixturenames", ()) for item in items):
        bench_session.json = None  # nothing will be measured (unit tests): no results folder, no warning


def pytest_collection_finish(session: pytest.Session) -> None:
    """The plan for the time-left estimate, from the tests that will run (after ``-k`` and ``-m`` deselected some:
    counted before, a run of 2 of 4 tests said twice the time it had left)."""
    session.config.stash[PLAN_KEY] = {"total": sum(scenario_weight(i) for i in session.items if _config_id(i)), "done": 0}


JVM_FATAL = re.compile(r"java\.lang\.(?:OutOfMemoryError|StackOverflowError|InternalError)[^\n]*")


def jvm_death(stderr: str) -> str:
    """Why the Spark JVM died, from what it printed during the test: py4j then reports only a lost connection or
    "<exception str() failed>", so without this the recorded reason never names the cause."""
    fatal = JVM_FATAL.search(stderr or "")
    if not fatal:
        return ""
    advice = " (give the driver more with --driver-memory)" if "OutOfMemoryError" in fatal.group(0) else ""
    return f"; the Spark JVM printed {fatal.group(0).strip()}{advice}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Record every configuration's outcome (and skip reason) as it happens; nothing is lost on a crash. A stop
    signal a library turned into its own error (py4j makes Ctrl-C during a JVM call a ``Py4JError``, so pytest sees
    a failed test, not an interrupt) still ends the run after this test."""
    outcome = yield
    report = outcome.get_result()
    stopped_by = item.config.stash[SESSION_KEY].interrupted if SESSION_KEY in item.config.stash else None
    if stopped_by:
        item.session.shouldstop = f"cowmor: stopped by {stopped_by}"
    callspec = getattr(item, "callspec", None)
    config_id = _config_id(item)
    if config_id is None or "lab" not in item.fixturenames or (report.when != "call" and report.passed):
        return
    if report.when == "call" or not report.passed:
        item.config.stash[PLAN_KEY]["done"] += scenario_weight(item)
        item.config.stash[PLAN_KEY]["finished_at"] = ledger.LEDGER.elapsed()
    entry = {"nodeid": report.nodeid, "test": item.originalname, "config_id": config_id,
             "params": {k: str(v) for k, v in callspec.params.items()}, "outcome": report.outcome,
             "when": report.when, "duration_s": round(report.duration, 3)}
    if report.skipped and isinstance(report.longrepr, tuple):
        entry["reason"] = report.longrepr[2].removeprefix("Skipped: ")
    elif report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        entry["reason"] = (crash.message if crash else str(report.longrepr)[-500:]) + jvm_death(report.capstderr)
    outcomes = item.config.stash[OUTCOMES_KEY]
    outcomes[report.nodeid] = entry
    item.config.stash[SESSION_KEY].write_json("outcomes.json", list(outcomes.values()))


def pytest_benchmark_update_machine_info(config: pytest.Config, machine_info: dict) -> None:
    session = config.stash[SESSION_KEY]
    machine_info["cowmor"] = {"java": session.java, "jvm": session.apps.versions() or None}


def pytest_benchmark_update_json(config: pytest.Config, benchmarks: list, output_json: dict) -> None:
    """Make the JSON self-contained: the environment and every outcome (skips included) travel with it."""
    session = config.stash[SESSION_KEY]
    noisy = []
    for b in output_json.get("benchmarks", []):  # every timed figure carries its uncertainty (bench/core/uncertainty.py)
        figure = uncertainty.describe(b["stats"].get("data") or [b["stats"]["median"]])
        b.setdefault("extra_info", {})["uncertainty"] = figure
        if figure["cv"] > uncertainty.CV_FLAG:
            noisy.append(f"{b['name']} (CV {figure['cv']:.0%}, n={figure['n']})")
    config.stash[NOISY_KEY] = noisy
    output_json["cowmor"] = {"environment": session.environment(),
                             "outcomes": list(config.stash[OUTCOMES_KEY].values()),
                             "time_breakdown": ledger.LEDGER.breakdown().as_json()}


@pytest.hookimpl(hookwrapper=True, tryfirst=True, specname="pytest_sessionfinish")
def pytest_sessionfinish_drops_unfinished_benchmarks(session: pytest.Session) -> Any:
    """A signal that lands inside a measurement leaves pytest-benchmark a benchmark with no rounds, on which its
    JSON writer fails (``min()`` of nothing) and saves nothing at all: drop it before pytest-benchmark saves, so the
    finished ones are kept (its test's outcome says it was interrupted)."""
    benchmarks = getattr(getattr(session.config, "_benchmarksession", None), "benchmarks", None)
    if benchmarks:
        benchmarks[:] = [b for b in benchmarks if getattr(getattr(b, "stats", None), "data", None)]
    yield


def pytest_sessionfinish(session: pytest.Session) -> None:
    bench = session.config.stash.get(SESSION_KEY, None)
    if bench is None:
        return
    try:
        bench.apps.stop()
        if session.config.stash[OUTCOMES_KEY]:
            bench.write_json("environment.json", bench.environment())
            bench.write_json("time_breakdown.json", ledger.LEDGER.breakdown().as_json())
    finally:
        bench.close()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    outcomes = config.stash.get(OUTCOMES_KEY, {})
    if not outcomes:
        return
    bench = config.stash[SESSION_KEY]
    for family, reason in skipped_families(outcomes.values()).items():
        terminalreporter.write_line(f"cowmor: {family} skipped: {reason}", yellow=True)
    noisy = config.stash.get(NOISY_KEY, [])
    if noisy:
        terminalreporter.write_line(f"cowmor: noisy (coefficient of variation over {uncertainty.CV_FLAG:.0%}): "
                                    + "; ".join(noisy), yellow=True)
    for name, reason in bench.readers.skipped().items():
        terminalreporter.write_line(f"cowmor: engine {name} skipped: {reason}", yellow=True)
    for name, engine in bench.readers.record().items():
        for config_id, modes in (engine.get("support") or {}).items():
            for mode, status in modes.items():
                if status != "reads":
                    terminalreporter.write_line(f"cowmor: {name} cannot read {config_id} ({mode}): {status}", yellow=True)
    breakdown = ledger.LEDGER.breakdown()
    terminalreporter.write_line(f"cowmor: time: {ledger.describe(breakdown)}")
    second = breakdown.seconds[ledger.SECOND_READS]
    if second:
        terminalreporter.write_line(f"cowmor: reads on engines besides Spark took {second:.0f}s, "
                                    f"{second / breakdown.wall_s:.1%} of the run's wall time")
    terminalreporter.write_line(f"cowmor: run recorded in {bench.results_dir / bench.run_id}/", bold=True)


def skipped_families(outcomes) -> dict[str, str]:
    """One reason per family that was skipped everywhere (its configurations share the missing jars); a family that
    ran somewhere and skipped a grid point (a route, a kind of writer) is not a skipped family."""
    outcomes = list(outcomes)
    ran = {CONFIGS[o["config_id"]].family for o in outcomes if o["outcome"] != "skipped"}
    out: dict[str, str] = {}
    for o in outcomes:
        if o["outcome"] == "skipped" and CONFIGS[o["config_id"]].family not in ran:
            out.setdefault(CONFIGS[o["config_id"]].family, o["reason"])
    return dict(sorted(out.items()))


# --- fixtures ---------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def cowmor(request: pytest.FixtureRequest) -> BenchSession:
    return request.config.stash[SESSION_KEY]


def progress_prefix(elapsed: float, done: float, total: float, finished_at: float | None = None) -> str:
    """``[elapsed]``, and once a scenario test has finished, ``~left`` estimated from the tests done so far (their
    weights: see ``scenario_weight``): their pace up to the last one's end (``finished_at``), less what the test
    under way has already spent (counted in elapsed but not in done, it made a seed run's estimate climb)."""
    def clock(seconds: float) -> str:
        minutes, sec = divmod(int(round(seconds)), 60)
        return f"{minutes // 60}:{minutes % 60:02d}:{sec:02d}" if minutes >= 60 else f"{minutes}:{sec:02d}"
    if done <= 0 or total <= done:
        return f"[{clock(elapsed)}]"
    finished_at = elapsed if finished_at is None else finished_at
    return f"[{clock(elapsed)}, ~{clock(max(0.0, finished_at / done * (total - done) - (elapsed - finished_at)))} left]"


@pytest.fixture(scope="session")
def progress(request: pytest.FixtureRequest):
    """Print a progress line even while pytest captures output (long runs should say what they do)."""
    capman = request.config.pluginmanager.getplugin("capturemanager")
    reporter = request.config.pluginmanager.getplugin("terminalreporter")
    plan = request.config.stash.get(PLAN_KEY, {"total": 0, "done": 0})

    def say(message: str) -> None:
        if reporter is None:
            return
        prefix = progress_prefix(ledger.LEDGER.elapsed(), plan["done"], plan["total"], plan.get("finished_at"))
        with capman.global_and_fixture_disabled():
            reporter.write_line(f"  · {prefix} {message}")
    session = request.config.stash.get(SESSION_KEY, None)
    if session is not None:
        session.tables.say = say  # the base tables' builds, the longest silent step of a large run
    return say


@pytest.fixture(scope="session")
def payments(cowmor: BenchSession, progress):
    progress(f"base data: payments at scale {cowmor.scale.name} ({cowmor.scale.rows:,} rows, {cowmor.scale.files} files)")
    return cowmor.payments()


TURNS_KEY = pytest.StashKey[dict]()


@pytest.fixture
def turns(request: pytest.FixtureRequest) -> Turns:
    """The test function's configurations taking turns (``Lab.measure`` with ``--interleave``): one ``Turns`` per
    test function of a module, knowing which of its items the run selected."""
    node = request.node
    name, module = getattr(node, "originalname", node.name), node.module
    selected = {(item.callspec.params.get("config_id"), item.callspec.params.get("route", JOIN))
                for item in request.session.items
                if getattr(item, "originalname", None) == name and getattr(item, "module", None) is module
                and getattr(item, "callspec", None) is not None}
    store = request.config.stash.setdefault(TURNS_KEY, {})
    return store.setdefault((module.__name__, name), Turns(selected))


@pytest.fixture
def lab(config_id: str, cowmor: BenchSession, progress, request: pytest.FixtureRequest) -> Lab:
    """Skip (with the reason) where the family's jars are missing or the configuration has no such locate route;
    start its Spark app and warm it up."""
    family = CONFIGS[config_id].family
    callspec = getattr(request.node, "callspec", None)
    route = callspec.params.get("route", JOIN) if callspec else JOIN
    unsupported = cowmor.adapter(config_id, route=route).route_unsupported() if route != JOIN else None
    if unsupported:
        pytest.skip(f"route {route}: {unsupported}")
    try:
        cowmor.resolution(family)
    except MissingArtifact as err:
        pytest.skip(str(err))
    try:
        if not cowmor.apps.running(family):
            again = "" if cowmor.apps.family != family else \
                " again, with the run's driver memory (the memory search's last attempt had its own)" \
                if cowmor.apps.running(family, cowmor.apps.conf.get("spark.driver.memory")) else \
                " again: its JVM stopped (the failure before says why)"
            progress(f"starting Spark application for {family} ({cowmor.spark_options.master}){again}")
        spark = cowmor.spark(family)
    except JavaNotFound as err:
        pytest.exit(str(err), returncode=3)
    fmt = cowmor.adapter(config_id, route=route)
    cowmor.tables.warm_up(spark, fmt)
    return Lab(fmt, spark, cowmor, cowmor.readers.for_spark(spark))


def pytest_report_header(config: pytest.Config) -> list[str]:
    session = config.stash.get(SESSION_KEY, None)
    if session is None:
        return []
    return [f"cowmor: scale={session.scale.name} seed={session.seed} configs={','.join(c.id for c in session.configs)} "
            f"engines={','.join(session.engine_names)} master={session.spark_options.master} workspace={session.workspace.root}"]

