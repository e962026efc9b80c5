"""``python -m bench`` (``cowmor``): a thin wrapper over pytest (run), the report, the gate, the history, the validator.

Exit codes: 0 done; 1 a regression found (compare) or a scenario failed (run); 2 bad input (one line on stderr);
3 nothing comparable (compare); 70 an internal error (a bug: the traceback is printed).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.resources
import signal
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.exceptions import BadOption, CowmorError
from bench.run.options import add_options, parse_finite, parse_positive_int

EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_INCOMPARABLE, EXIT_INTERNAL = 1, 2, 3, 70
ROOT = Path(__file__).resolve().parent.parent
# the default run fills the report's write cost (file size included), read cost, break-even and claims sections;
# the degradation curve (over time) is one --scenario away
DEFAULT_SCENARIOS = ("test_payments_hotfix.py", "test_file_size.py")
# seconds per configuration at `small` on 2 cores, for the up-front estimate: hotfix and degradation (mean over the seven
# configurations, both engines, two make bench runs of 36:46 and 36:41) and dinner peak (Delta and Hudi) as measured;
# settlements and the sweep not yet measured at `small`
EXPECTED_SMALL_S = {"test_payments_hotfix.py": 150, "test_degradation.py": 150, "test_dinner_peak.py": 51,
                    "test_monthly_settlements.py": 120, "test_update_sweep.py": 200, "test_table_growth.py": 300,
                    "test_file_size.py": 250, "test_compaction_cadence.py": 150,  # default-small-1: 47:01 for hotfix + file size
                    "test_several_writers.py": 1230}  # writers-small-iceberg-mor-m1: 20:34 for one configuration's grid
JVM_START_S = 30  # a family's JVM start and warm-up


def scenarios_dir() -> Path:
    """scenarios/ of a source checkout, or the copy installed with the package (``bench.scenarios``)."""
    if (ROOT / "scenarios" / "test_payments_hotfix.py").exists():
        return ROOT / "scenarios"
    return Path(str(importlib.resources.files("bench.scenarios")))


def scenario_files(names: list[str] | None) -> list[Path]:
    """``--scenario`` values (``all``, or file names under scenarios/) as paths; the default pair if none.

    Raises:
        CowmorError: a name that is no scenario (paths are refused: scenarios are named, not located).
    """
    folder = scenarios_dir()
    available = sorted(folder.glob("test_*.py"))
    if names and "all" in names:
        return available
    known = {p.name: p for p in available}
    paths = []
    for name in names or DEFAULT_SCENARIOS:
        if name not in known:
            raise CowmorError(f"no scenario {name!r}; available: all, {', '.join(known)}")
        paths.append(known[name])
    return paths


def expected_seconds(scenarios: list[Path], configs: int, families: int, rows: int, small_rows: int) -> float:
    """A rough duration: per-scenario cost at `small`, scaled by the table's rows, plus one JVM start per family."""
    per_config = sum(EXPECTED_SMALL_S.get(p.name, 60) for p in scenarios)
    return per_config * configs * max(rows / small_rows, 0.05) + JVM_START_S * families


# The test suite's per-test timeout (pyproject.toml) is not a benchmark's: a scenario's test holds every round of its
# configuration, and with --interleave its family's (the seeds' join, three Iceberg configurations: over an hour), so
# its length is the run's, not a hang. `-- --timeout N` after the run's options sets one (pytest's last word wins)
NO_TEST_TIMEOUT = ("-o", "timeout=0")


def _pytest_options(raw: list[str]) -> list[str]:
    """The user's own option tokens, minus the ones only `run` takes: pytest's plugin parses the rest itself."""
    only = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    only.add_argument("--scenario", action="append")
    only.add_argument("--no-report", action="store_true")
    return only.parse_known_args(raw)[1]


def _run(args: argparse.Namespace, raw: list[str], pytest_args: list[str]) -> int:
    import pytest

    from bench.core.storage import is_local
    from bench.report.summary import text_summary
    from bench.results import contract
    from bench.results.history import append
    from bench.run.session import BenchSession, new_run_id
    from bench.run.spark import java_version
    from bench.workload.scales import PRESETS

    session = BenchSession.from_options(args)  # fail fast, in one line, on any bad option
    java_version()
    scenarios = scenario_files(args.scenario)
    if args.param or getattr(args, "like", None):
        when = "with --param or --like the presets' measured durations do not apply; no estimate"
    elif pytest_args:
        when = "with pytest's own options (-k …) the tests run are not known here; no estimate"
    elif getattr(args, "object_store", None) or not is_local(str(args.warehouse)) or args.spark_master != "local[*]":
        when = "the measured durations are for local disk and local Spark; no estimate for this storage or master"
    else:
        estimate = expected_seconds(scenarios, len(session.configs), len({c.family for c in session.configs}),
                                    session.scale.rows, PRESETS["small"].rows)
        when = f"expect roughly {estimate / 60:.0f} min on 2 cores"
    print(f"cowmor: {len(scenarios)} scenario(s) x {len(session.configs)} configuration(s) at {args.scale}: "
          f"{when} ({', '.join(p.name for p in scenarios)})", flush=True)
    run_id = args.run_id or new_run_id(args.scale)
    argv = [*(str(p) for p in scenarios), "-p", "bench.run.plugin", "-p", "no:cacheprovider", "-rs",
            "--benchmark-columns", "min,median,max,rounds", *NO_TEST_TIMEOUT, *_pytest_options(raw)]
    if (ROOT / "pyproject.toml").exists() and scenarios_dir() == ROOT / "scenarios":
        argv += ["--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml")]
    else:
        argv += ["--rootdir", str(scenarios_dir()), "-c", "/dev/null"]
    if not args.run_id:
        argv += ["--run-id", run_id]
    code = pytest.main(argv + pytest_args)
    run_dir = Path(args.results_dir) / run_id
    try:
        run = contract.load_run(run_dir)
    except CowmorError as err:
        print(f"cowmor: {err}", file=sys.stderr)
        run = None
    if run is not None:
        try:
            print(text_summary(run))
            append(Path(args.results_dir) / "history.csv", run)
            if args.report:
                from bench.report.build import build_report

                print(f"report: {build_report([run_dir], Path('reports') / run_id)}")
        finally:
            print(f"results: {run_dir}/" + (f" (partial: {run.why_partial})" if run.partial else ""))
    else:
        print(f"results: {run_dir}/")
    return int(code)


def _compare(args: argparse.Namespace) -> int:
    from bench.results.compare import compare
    from bench.results.contract import load_run

    baseline, current = load_run(args.baseline), load_run(args.current)
    if baseline.scale != current.scale:
        print(f"cowmor: warning: comparing scale {baseline.scale} with {current.scale}", file=sys.stderr)
    result = compare(baseline, current, args.threshold, args.byte_tolerance)
    print(result.text())
    if args.markdown:
        args.markdown.write_text(result.markdown(baseline, current))
    if not result.comparable:
        print(f"cowmor: nothing to compare: {result.why_incomparable}", file=sys.stderr)
        return EXIT_INCOMPARABLE
    return EXIT_REGRESSION if result.failed else 0


def _report(args: argparse.Namespace) -> int:
    from bench.report.build import build_report
    from bench.results.contract import iter_runs

    runs = [Path(r) for r in args.runs]
    if not runs:
        recorded = list(iter_runs(Path("results")))
        if not recorded:
            raise CowmorError("no recorded run under results/: run 'make bench' (or give RESULTS folders)")
        runs = [recorded[-1]]
    from bench.report.model import parse_table
    from bench.report.your_table import lines
    from bench.results.contract import load_run
    from bench.results.load import merge

    tables = [parse_table(t) for t in args.table]
    print(f"report: {build_report(runs, args.output, profiles=args.profile, tables=tables, prices=args.prices)}")
    if tables:
        print("\n".join(lines(tables, merge([load_run(r) for r in runs]))))
    return 0


def _history(args: argparse.Namespace) -> int:
    from bench.results.contract import load_run
    from bench.results.history import append

    for path in args.runs:
        frame = append(args.file, load_run(path))
    print(f"history: {args.file} ({frame.run_id.nunique()} runs, {len(frame)} rows)")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from bench.results.contract import SCHEMA_VERSION, load_run, validate

    worst = 0
    for path in args.runs:
        problems = validate(path)
        if not problems:
            run = load_run(path)
            print(f"{path}: valid (results schema {SCHEMA_VERSION}; {len(run.records(route=None))} records, "
                  f"{len(run.outcomes)} outcomes, {len(run.matrix.configs)} configurations)")
            continue
        worst = EXIT_BAD_INPUT
        for problem in problems:
            print(f"cowmor: {problem}", file=sys.stderr)
    return worst


def _reference(args: argparse.Namespace) -> int:
    from bench.results import reference

    folder = Path(args.folder)
    backs = [b for b in args.backs.split(",") if b]
    if args.action in ("add", "backs"):
        from bench.report.figures import BACKABLE

        unknown = [b for b in backs if b not in BACKABLE]
        if unknown:
            raise BadOption(f"--backs {','.join(unknown)}: no such figure (figures: {', '.join(sorted(BACKABLE))})")
    if args.action == "add":
        for path in args.runs:
            entry = reference.add(Path(path), backs, folder, args.command_line)
            print(f"reference: added {entry.run_id} ({entry.machine_label}, {entry.storage}; backs {', '.join(entry.backs)})")
        return 0
    if args.action == "backs":
        for run_id in args.runs:
            entry = reference.also_backs(run_id, backs, folder)
            print(f"reference: {entry.run_id} backs {', '.join(entry.backs)}")
        return 0
    if args.action == "retire":
        for run_id in args.runs:
            entry = reference.retire(run_id, folder)
            print(f"reference: retired {entry.run_id} (backed {', '.join(entry.backs)}; git history keeps it)")
        return 0
    problems = reference.check(folder)
    for problem in problems:
        print(f"cowmor: {problem}", file=sys.stderr)
    if not problems:
        print(f"{folder}: {len(reference.load_manifest(folder))} reference runs, every one as it was added")
    return EXIT_BAD_INPUT if problems else 0


def _findings(args: argparse.Namespace) -> int:
    from bench.report.findings import build_findings

    build_findings(Path(args.folder), args.output, progress=lambda line: print(f"findings: {line}", flush=True))
    return 0


def _inspect(args: argparse.Namespace) -> int:
    import json

    from bench.inspect import read_facts
    from bench.inspect.profile import profile, text

    found = profile(read_facts(args.table, args.format, args.key, args.catalog), args.keys_per_update, args.reads_per_day)
    print(text(found))
    if args.output:
        args.output.write_text(json.dumps(found, indent=2, default=str) + "\n")
        print(f"profile: {args.output}")
    return 0


def doc_files() -> list[Path]:
    """README.md and every page under docs/: where figure blocks may stand."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _docs(args: argparse.Namespace) -> int:
    from bench.report import figures

    folder, grids = Path(args.folder), ROOT / figures.GRIDS_DIR
    if args.check:
        problems = figures.drift(doc_files(), folder) + figures.grid_drift(doc_files(), grids, folder)
        for problem in problems:
            print(f"cowmor: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT if problems else 0
    for path in doc_files():
        text = path.read_text()
        new = figures.rewrite(text, folder)
        if new != text:
            path.write_text(new)
            print(f"docs: rewrote the figures of {path.relative_to(ROOT)}")
    for path in figures.write_grids(doc_files(), grids, folder):
        print(f"docs: wrote {path.relative_to(ROOT)}")
    return 0


def parser() -> argparse.ArgumentParser:
    main_parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                          formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = main_parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run scenarios (pytest + pytest-benchmark) and record them under results/",
                         epilog="Arguments after -- go to pytest unchanged.", allow_abbrev=False)
    add_options(run.add_argument)
    run.add_argument("--scenario", action="append", metavar="FILE",
                     help=f"scenario module under scenarios/ (repeatable), or 'all'. Default: {', '.join(DEFAULT_SCENARIOS)}")
    run.add_argument("--no-report", dest="report", action="store_false", help="do not build the HTML report")
    report = sub.add_parser("report", help="build the HTML report from recorded runs")
    report.add_argument("runs", nargs="*", metavar="RESULTS",
                        help="results/<run-id>/ folders or benchmark JSON files (default: the newest recorded run)")
    report.add_argument("-o", "--output", metavar="DIR", type=Path, default=None, help="output folder (default reports/<run-id>/)")
    report.add_argument("--profile", action="append", default=[], metavar="NAME:reads_per_write=N[,…]",
                        help="an extra workload profile for the recommendation (repeatable)")
    report.add_argument("--prices", metavar="KEY=USD[,…]", default=None,
                        help="price sheet for the cost view of object-store runs: put, post, copy, list, get, delete "
                             "(per 1,000 requests), storage_gb_month, core_hour. Default: AWS S3 Standard us-east-1 "
                             "list prices and $0.05 per core-hour (illustrative)")
    report.add_argument("--table", action="append", default=[],
                        metavar="NAME:files=N,file_mb=M,rows_per_update=R[,updates_per_day=U,reads_per_day=D,"
                                "writes_per_compaction=K,partitions=P,route=join|pruned|index]",
                        help="predict W, R, C and the cost per day of every configuration on your own table, from the "
                             "cost model fitted on the runs (repeatable); partitions defaults to one per file. Or a profile "
                             "file from `inspect -o PROFILE.json`")
    gate = sub.add_parser("compare", help="regression gate: exit 1 if CURRENT regressed against BASELINE, 3 if nothing compares")
    gate.add_argument("baseline", metavar="BASELINE", help="results/<run-id>/ or its benchmark.json")
    gate.add_argument("current", metavar="CURRENT", help="results/<run-id>/ or its benchmark.json")
    gate.add_argument("--threshold", type=parse_finite(0.0), default=0.25, metavar="RATIO",
                      help="timing slowdown that fails when the medians' 95%% intervals do not overlap. Default: %(default)r")
    gate.add_argument("--byte-tolerance", type=parse_finite(0.0, inclusive=True), default=0.02, metavar="RATIO",
                      help="growth of bytes/files tolerated before failing. Default: %(default)r")
    gate.add_argument("--markdown", type=Path, metavar="FILE", help="also write a Markdown summary (CI job summary)")
    hist = sub.add_parser("history", help="append runs to the history file (safe under concurrent writers, idempotent per run id)")
    hist.add_argument("runs", nargs="+", metavar="RESULTS")
    hist.add_argument("--file", type=Path, default=Path("results/history.csv"), help="Default: %(default)s")
    check = sub.add_parser("validate", help="check recorded runs against the results contract (exit 2 on any problem)")
    check.add_argument("runs", nargs="+", metavar="RESULTS")
    ref = sub.add_parser("reference", help="the reference runs behind the project's figures: add a run, name more figures it backs, retire one, or check the set")
    ref.add_argument("action", choices=("add", "backs", "retire", "check"))
    ref.add_argument("runs", nargs="*", metavar="RESULTS", help="add: results/<run-id>/ folders; backs, retire: run ids")
    ref.add_argument("--backs", default="", metavar="FIGURE[,…]",
                     help="add, backs: the figures the runs back (bench/report/figures.py)")
    ref.add_argument("--command", dest="command_line", default=None, metavar="TEXT",
                     help="add: the command that made the run, where its record does not say")
    ref.add_argument("--folder", default=str(REFERENCE_FOLDER), metavar="DIR", help="Default: results/reference")
    find = sub.add_parser("findings", help="render the findings page from the reference runs (no JVM)")
    find.add_argument("--folder", default=str(REFERENCE_FOLDER), metavar="DIR", help="Default: results/reference")
    find.add_argument("-o", "--output", type=Path, default=Path("reports/findings"), metavar="DIR",
                      help="Default: %(default)s")
    docs = sub.add_parser("docs", help="rewrite the figure blocks of README.md and docs/ from the reference runs")
    docs.add_argument("--check", action="store_true", help="only compare: exit 2 where a figure differs from the data")
    docs.add_argument("--folder", default=str(REFERENCE_FOLDER), metavar="DIR", help="Default: results/reference")
    look = sub.add_parser("inspect", help="read a table's shape and workload from its own metadata (read-only, no Spark)")
    look.add_argument("table", metavar="TABLE", help="the table's root folder (Delta, Hudi, Iceberg) or an Iceberg metadata file, local or s3a:// (AWS_* "
                           "variables); with --catalog, namespace.table")
    look.add_argument("--format", choices=("delta", "iceberg", "hudi"), default=None, help="default: told by what the folder holds")
    look.add_argument("--catalog", default=None, metavar="NAME",
                      help="TABLE is namespace.table in this Iceberg catalog, as pyiceberg's configuration names it "
                           "(~/.pyiceberg.yaml or PYICEBERG_CATALOG__NAME__URI …)")
    look.add_argument("--key", default=None, metavar="COLUMN", help="the record key (Hudi's is read from the table)")
    look.add_argument("--keys-per-update", type=parse_positive_int, default=None, metavar="N",
                      help="keys an update changes (default: the median the history records)")
    look.add_argument("--reads-per-day", type=parse_finite(0.0, inclusive=True), default=None, metavar="N",
                      help="reads a day: no metadata records them")
    look.add_argument("-o", "--output", type=Path, default=None, metavar="FILE", help="write the profile as JSON")
    return main_parser


REFERENCE_FOLDER = ROOT / "results" / "reference"
COMMANDS = {"run": _run, "compare": _compare, "report": _report, "history": _history, "validate": _validate,
            "reference": _reference, "findings": _findings, "docs": _docs, "inspect": _inspect}


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP (a timeout, a closed terminal) stop a report, findings or docs command as Ctrl-C does, so
    its ``finally`` removes the half-written staging folder instead of leaving it beside the output. (``run`` has its
    own: the stop is recorded with the run.)"""
    def interrupt(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    names = [n for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    before = {n: signal.signal(getattr(signal, n), interrupt) for n in names}
    try:
        yield
    finally:
        for n, handler in before.items():
            signal.signal(getattr(signal, n), handler)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    pytest_args: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, pytest_args = argv[:at], argv[at + 1:]
    args = parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args, argv[1:], pytest_args)
        with _terminate_as_interrupt():
            return COMMANDS[args.command](args)
    except CowmorError as err:
        print(f"cowmor: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("cowmor: interrupted", file=sys.stderr)
        return 130
    except Exception:  # a bug, not a regression: a distinct exit code so CI can tell them apart
        traceback.print_exc()
        print("cowmor: internal error (the traceback above is a bug in cowmor; please report it)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
