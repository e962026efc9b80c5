"""``python -m bench``: a thin wrapper over pytest (run), the report generator (report)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.exceptions import CowmorError
from bench.options import add_options

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
DEFAULT_SCENARIOS = ("test_payments_hotfix.py",)


def _run(args: argparse.Namespace, pytest_args: list[str]) -> int:
    import pytest

    from bench.report.load import load_run
    from bench.report.summary import text_summary
    from bench.session import BenchSession, new_run_id
    from bench.spark import java_version

    args.run_id = args.run_id or new_run_id(args.scale)
    BenchSession.from_options(args)  # fail fast, in one line, on any bad option
    java_version()
    targets = [str(SCENARIOS / s) for s in (args.scenario or DEFAULT_SCENARIOS)]
    for target in targets:
        if not Path(target).exists():
            raise CowmorError(f"no scenario {target}; available: {', '.join(p.name for p in sorted(SCENARIOS.glob('test_*.py')))}")
    argv = [*targets, "-p", "no:cacheprovider", "-rs", "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"),
            "--scale", args.scale, "--formats", args.formats, "--seed", str(args.seed),
            "--spark-master", args.spark_master, "--driver-memory", args.driver_memory,
            "--shuffle-partitions", str(args.shuffle_partitions), "--warehouse", str(args.warehouse),
            "--maven-repo", args.maven_repo, "--results-dir", str(args.results_dir), "--run-id", args.run_id,
            "--benchmark-columns", "min,median,max,rounds"]
    for key, value in args.param:
        argv += ["--param", f"{key}={value}"]
    for key, value in args.spark_conf:
        argv += ["--spark-conf", f"{key}={value}"]
    if args.jars_dir:
        argv += ["--jars-dir", str(args.jars_dir)]
    code = pytest.main(argv + pytest_args)
    run_dir = Path(args.results_dir) / args.run_id
    if (run_dir / "benchmark.json").exists():
        print(text_summary(load_run(run_dir)))
        if args.report:
            from bench.report.build import build_report

            out = build_report([run_dir], Path("reports") / args.run_id)
            print(f"report: {out}")
    print(f"results: {run_dir}/")
    return int(code)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run scenarios (pytest + pytest-benchmark) and record them under results/",
                         epilog="Arguments after -- go to pytest unchanged.")
    add_options(run.add_argument)
    run.add_argument("--scenario", action="append", metavar="FILE",
                     help=f"scenario module under scenarios/ (repeatable). Default: {', '.join(DEFAULT_SCENARIOS)}")
    run.add_argument("--no-report", dest="report", action="store_false", help="do not build the HTML report")
    report = sub.add_parser("report", help="build the HTML report from recorded runs")
    report.add_argument("runs", nargs="+", metavar="RESULTS", help="results/<run-id>/ folders or benchmark JSON files")
    report.add_argument("-o", "--output", metavar="DIR", type=Path, default=None, help="output folder (default reports/<run-id>/)")
    report.add_argument("--profile", action="append", default=[], metavar="NAME:reads_per_write=N[,…]",
                        help="an extra workload profile for the recommendation (repeatable)")
    argv = sys.argv[1:] if argv is None else argv
    pytest_args: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, pytest_args = argv[:at], argv[at + 1:]
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            return _run(args, pytest_args)
        from bench.report.build import build_report

        out = build_report([Path(r) for r in args.runs], args.output, profiles=args.profile)
        print(f"report: {out}")
        return 0
    except CowmorError as err:
        print(f"cowmor: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
