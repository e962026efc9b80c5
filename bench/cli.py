"""``python -m bench``: a thin wrapper over pytest (run), the report generator (report)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.exceptions import CowmorError
from bench.options import add_options

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
# the default run fills the report's write cost, read cost, over time, break-even and claims sections
DEFAULT_SCENARIOS = ("test_payments_hotfix.py", "test_degradation.py")
# seconds per configuration at `small` on 2 cores, for the up-front estimate: hotfix and degradation (mean over the seven
# configurations, both engines, two make bench runs of 36:46 and 36:41) and dinner peak (Delta and Hudi) as measured;
# settlements and the sweep not yet measured at `small`
EXPECTED_SMALL_S = {"test_payments_hotfix.py": 150, "test_degradation.py": 150, "test_dinner_peak.py": 51,
                    "test_monthly_settlements.py": 120, "test_update_sweep.py": 200, "test_table_growth.py": 300}
JVM_START_S = 30  # a family's JVM start and warm-up


def scenario_files(names: list[str] | None) -> list[Path]:
    """``--scenario`` values (``all``, or file names under scenarios/) as paths; the default pair if none.

    Raises:
        CowmorError: a name that is no scenario.
    """
    available = sorted(SCENARIOS.glob("test_*.py"))
    if names and "all" in names:
        return available
    paths = [SCENARIOS / n for n in (names or DEFAULT_SCENARIOS)]
    for path in paths:
        if not path.exists():
            raise CowmorError(f"no scenario {path.name}; available: all, {', '.join(p.name for p in available)}")
    return paths


def expected_seconds(scenarios: list[Path], configs: int, families: int, rows: int, small_rows: int) -> float:
    """A rough duration: per-scenario cost at `small`, scaled by the table's rows, plus one JVM start per family."""
    per_config = sum(EXPECTED_SMALL_S.get(p.name, 60) for p in scenarios)
    return per_config * configs * max(rows / small_rows, 0.05) + JVM_START_S * families


def _run(args: argparse.Namespace, pytest_args: list[str]) -> int:
    import pytest

    from bench.report.load import load_run
    from bench.report.summary import text_summary
    from bench.session import BenchSession, new_run_id
    from bench.spark import java_version

    from bench.scales import PRESETS

    args.run_id = args.run_id or new_run_id(args.scale)
    session = BenchSession.from_options(args)  # fail fast, in one line, on any bad option
    java_version()
    scenarios = scenario_files(args.scenario)
    targets = [str(p) for p in scenarios]
    estimate = expected_seconds(scenarios, len(session.configs), len({c.family for c in session.configs}),
                                session.scale.rows, PRESETS["small"].rows)
    print(f"cowmor: {len(scenarios)} scenario(s) x {len(session.configs)} configuration(s) at {args.scale}: "
          f"expect roughly {estimate / 60:.0f} min on 2 cores ({', '.join(p.name for p in scenarios)})", flush=True)
    argv = [*targets, "-p", "no:cacheprovider", "-rs", "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"),
            "--scale", args.scale, "--formats", args.formats, "--seed", str(args.seed),
            "--spark-master", args.spark_master, "--driver-memory", args.driver_memory,
            "--shuffle-partitions", str(args.shuffle_partitions), "--warehouse", str(args.warehouse),
            "--maven-repo", args.maven_repo, "--results-dir", str(args.results_dir), "--run-id", args.run_id,
            "--engines", args.engines, "--target-ci", str(args.target_ci), "--benchmark-columns", "min,median,max,rounds"]
    for flag, value in (("--min-rounds", args.min_rounds), ("--max-rounds", args.max_rounds)):
        if value:
            argv += [flag, str(value)]
    for key, value in args.param:
        argv += ["--param", f"{key}={value}"]
    for key, value in args.spark_conf:
        argv += ["--spark-conf", f"{key}={value}"]
    if args.jars_dir:
        argv += ["--jars-dir", str(args.jars_dir)]
    code = pytest.main(argv + pytest_args)
    run_dir = Path(args.results_dir) / args.run_id
    if (run_dir / "benchmark.json").exists():
        from bench.history import append

        print(text_summary(load_run(run_dir)))
        append(Path(args.results_dir) / "history.csv", load_run(run_dir))
        if args.report:
            from bench.report.build import build_report

            out = build_report([run_dir], Path("reports") / args.run_id)
            print(f"report: {out}")
    print(f"results: {run_dir}/")
    return int(code)


def _compare(args: argparse.Namespace) -> int:
    from bench.compare import compare
    from bench.report.load import load_run

    baseline, current = load_run(args.baseline), load_run(args.current)
    if baseline.scale != current.scale:
        print(f"cowmor: warning: comparing scale {baseline.scale} with {current.scale}", file=sys.stderr)
    result = compare(baseline, current, args.threshold, args.byte_tolerance)
    print(result.text())
    if args.markdown:
        args.markdown.write_text(result.markdown(baseline, current))
    return 1 if result.failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run scenarios (pytest + pytest-benchmark) and record them under results/",
                         epilog="Arguments after -- go to pytest unchanged.")
    add_options(run.add_argument)
    run.add_argument("--scenario", action="append", metavar="FILE",
                     help=f"scenario module under scenarios/ (repeatable), or 'all'. Default: {', '.join(DEFAULT_SCENARIOS)}")
    run.add_argument("--no-report", dest="report", action="store_false", help="do not build the HTML report")
    report = sub.add_parser("report", help="build the HTML report from recorded runs")
    report.add_argument("runs", nargs="+", metavar="RESULTS", help="results/<run-id>/ folders or benchmark JSON files")
    report.add_argument("-o", "--output", metavar="DIR", type=Path, default=None, help="output folder (default reports/<run-id>/)")
    report.add_argument("--profile", action="append", default=[], metavar="NAME:reads_per_write=N[,…]",
                        help="an extra workload profile for the recommendation (repeatable)")
    gate = sub.add_parser("compare", help="regression gate: exit 1 if CURRENT regressed against BASELINE")
    gate.add_argument("baseline", metavar="BASELINE", help="results/<run-id>/ or its benchmark.json")
    gate.add_argument("current", metavar="CURRENT", help="results/<run-id>/ or its benchmark.json")
    gate.add_argument("--threshold", type=float, default=0.25, metavar="RATIO",
                      help="timing slowdown that fails when the runs' [min,max] intervals do not overlap. Default: %(default)r")
    gate.add_argument("--byte-tolerance", type=float, default=0.02, metavar="RATIO",
                      help="growth of bytes/files tolerated before failing. Default: %(default)r")
    gate.add_argument("--markdown", type=Path, metavar="FILE", help="also write a Markdown summary (CI job summary)")
    hist = sub.add_parser("history", help="append runs to the history file (atomic, idempotent per run id)")
    hist.add_argument("runs", nargs="+", metavar="RESULTS")
    hist.add_argument("--file", type=Path, default=Path("results/history.csv"), help="Default: %(default)s")
    argv = sys.argv[1:] if argv is None else argv
    pytest_args: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, pytest_args = argv[:at], argv[at + 1:]
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            return _run(args, pytest_args)
        if args.command == "compare":
            return _compare(args)
        if args.command == "history":
            from bench.history import append
            from bench.report.load import load_run

            for path in args.runs:
                frame = append(args.file, load_run(path))
            print(f"history: {args.file} ({frame.run_id.nunique()} runs, {len(frame)} rows)")
            return 0
        from bench.report.build import build_report

        out = build_report([Path(r) for r in args.runs], args.output, profiles=args.profile)
        print(f"report: {out}")
        return 0
    except CowmorError as err:
        print(f"cowmor: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
