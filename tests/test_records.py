"""Records that are never lost and never lie: a corpus of constructed bad runs, histories and options, each ending in
one line naming the file and what is wrong (exit 2), and the gate's own exit code when nothing compares.

No Spark: every run here is constructed (tests/constructed.py); the real runs are in the Spark tests.
"""

from __future__ import annotations

import json
import math
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from bench.cli import EXIT_BAD_INPUT, EXIT_INCOMPARABLE, EXIT_REGRESSION, main
from bench.report.summary import text_summary
from bench.results import history
from bench.results.contract import load_run
from tests.constructed import write_run


def cli(capsys, *args: str) -> tuple[int, str]:
    try:
        code = main(list(args))
    except SystemExit as exit_:  # argparse refuses a value: its usage line, exit 2
        code = exit_.code
    err = capsys.readouterr().err.strip()
    return code, err


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith(("cowmor:", "python -m bench"))]
    assert lines and "Traceback" not in err, err
    return lines[-1]


def _mutate(run_dir: Path, fn) -> Path:
    path = run_dir / "benchmark.json"
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))
    return run_dir


def _stats(key, value):
    def fn(data):
        data["benchmarks"][0]["stats"][key] = value
    return fn


BAD_BENCHMARKS = {
    "a list, not an object": (lambda d: d.clear() or d.update({"benchmarks": 5}), "no 'benchmarks' list"),
    "a benchmark without stats": (lambda d: d["benchmarks"][0].pop("stats"), "has no 'stats'"),
    "a benchmark without a name": (lambda d: d["benchmarks"][0].pop("name"), "has no 'name'"),
    "a NaN median": (_stats("median", float("nan")), "not a time in seconds"),
    "an infinite max": (_stats("max", float("inf")), "not a time in seconds"),
    "a negative min": (_stats("min", -1.0), "not a time in seconds"),
    "a NaN round": (_stats("data", [1.0, float("nan")]), "stats.data holds"),
    "a string median": (_stats("median", "fast"), "not a time in seconds"),
    "extra_info not an object": (lambda d: d["benchmarks"][0].update({"extra_info": [1]}), "extra_info is not an object"),
    "a record without scenario": (lambda d: d["benchmarks"][0]["extra_info"].pop("scenario"), "lacks scenario"),
    "cowmor not an object": (lambda d: d.update({"cowmor": 3}), "'cowmor' block is not an object"),
    "outcomes not a list": (lambda d: d["cowmor"].update({"outcomes": {"a": 1}}), "outcomes are not a list"),
    "an outcome without config_id": (lambda d: d["cowmor"]["outcomes"][0].pop("config_id"), "lacks config_id"),
    "an unknown outcome": (lambda d: d["cowmor"]["outcomes"][0].update({"outcome": "maybe"}), "not one of"),
    "a run id with a path": (lambda d: d["cowmor"]["environment"].update({"run_id": "../../x"}), "is not a folder name"),
    "an absolute run id": (lambda d: d["cowmor"]["environment"].update({"run_id": "/tmp/x"}), "is not a folder name"),
    "a schema version that is text": (lambda d: d["cowmor"]["environment"].update({"schema_version": "2"}), "is not an integer"),
}


@pytest.mark.parametrize("case", sorted(BAD_BENCHMARKS))
@pytest.mark.parametrize("command", ["report", "compare", "history", "validate"])
def test_malformed_runs_fail_in_one_line(case, command, tmp_path, capsys):
    mutate, message = BAD_BENCHMARKS[case]
    bad = _mutate(write_run(tmp_path, "bad"), mutate)
    good = write_run(tmp_path, "good")
    args = {"report": ["report", str(bad), "-o", str(tmp_path / "out")], "compare": ["compare", str(good), str(bad)],
            "history": ["history", str(bad), "--file", str(tmp_path / "h.csv")], "validate": ["validate", str(bad)]}[command]
    code, err = cli(capsys, *args)
    line = _one_line(err)
    assert code == EXIT_BAD_INPUT and message in line and "benchmark.json" in line, err
    assert not (tmp_path / "out").exists() and not (tmp_path / "h.csv").exists()


@pytest.mark.parametrize("name, content, message", [
    ("benchmark.json", "{not json", "is not valid JSON"),
    ("benchmark.json", "", "is not valid JSON"),
    ("benchmark.json", b"\xff\xfe", "is not valid JSON"),
])
def test_unreadable_files_fail_in_one_line(name, content, message, tmp_path, capsys):
    run_dir = write_run(tmp_path, "r")
    (run_dir / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    code, err = cli(capsys, "report", str(run_dir), "-o", str(tmp_path / "out"))
    assert code == EXIT_BAD_INPUT and message in _one_line(err) and name in err


def test_corrupt_side_files_of_a_run_without_its_cowmor_block(tmp_path, capsys):
    run_dir = _mutate(write_run(tmp_path, "r"), lambda d: d.pop("cowmor"))
    (run_dir / "environment.json").write_text("[1, 2")
    code, err = cli(capsys, "report", str(run_dir), "-o", str(tmp_path / "out"))
    assert code == EXIT_BAD_INPUT and "environment.json is not valid JSON" in _one_line(err)
    (run_dir / "environment.json").write_text(json.dumps({"schema_version": 2, "run_id": "r"}))
    (run_dir / "outcomes.json").write_text("{}")
    code, err = cli(capsys, "report", str(run_dir), "-o", str(tmp_path / "out"))
    assert code == EXIT_BAD_INPUT and "outcomes are not a list" in _one_line(err)


def test_a_named_pipe_is_refused_not_waited_on(tmp_path, capsys):
    run_dir = write_run(tmp_path, "r")
    (run_dir / "benchmark.json").unlink()
    os.mkfifo(run_dir / "benchmark.json")
    code, err = cli(capsys, "report", str(run_dir), "-o", str(tmp_path / "out"))
    assert code == EXIT_BAD_INPUT and "is not a regular file" in _one_line(err)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_named(tmp_path, capsys):
    run_dir = write_run(tmp_path, "r")
    (run_dir / "benchmark.json").chmod(0)
    code, err = cli(capsys, "report", str(run_dir), "-o", str(tmp_path / "out"))
    assert code == EXIT_BAD_INPUT and "cannot read benchmark.json" in _one_line(err)


def test_output_that_is_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "out").write_text("mine")
    code, err = cli(capsys, "report", str(write_run(tmp_path, "r")), "-o", str(tmp_path / "out"))
    assert code == EXIT_BAD_INPUT and "is not a folder" in _one_line(err) and (tmp_path / "out").read_text() == "mine"


@pytest.mark.parametrize("profile", ["x:reads_per_write=nan", "x:reads_per_write=inf", "x:reads_per_write=-1",
                                     "x:reads_per_write=5,writes_per_compaction=nan", "x:what=1"])
def test_bad_profiles_are_refused(profile, tmp_path, capsys):
    code, err = cli(capsys, "report", str(write_run(tmp_path, "r")), "-o", str(tmp_path / "o"), "--profile", profile)
    assert code == EXIT_BAD_INPUT and "--profile" in _one_line(err)


# --- the gate -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("flag, value", [("--threshold", "-1"), ("--threshold", "nan"), ("--threshold", "inf"),
                                         ("--threshold", "0"), ("--byte-tolerance", "-1"), ("--byte-tolerance", "nan")])
def test_gate_knobs_are_checked(flag, value, tmp_path, capsys):
    run = str(write_run(tmp_path, "r"))
    code, err = cli(capsys, "compare", run, run, flag, value)
    assert code == EXIT_BAD_INPUT and flag in err and "finite number" in err


def test_identical_runs_pass_and_a_faster_one_too(tmp_path, capsys):
    a, b = write_run(tmp_path, "a"), write_run(tmp_path, "b", speed=0.8)
    assert cli(capsys, "compare", str(a), str(a))[0] == 0
    assert cli(capsys, "compare", str(a), str(b))[0] == 0


def test_nothing_to_compare_has_its_own_exit_code(tmp_path, capsys):
    empty_a = write_run(tmp_path, "ea", operations=())
    empty_b = write_run(tmp_path, "eb", operations=())
    code, err = cli(capsys, "compare", str(empty_a), str(empty_b))
    assert code == EXIT_INCOMPARABLE and "nothing to compare" in err
    failed_a = _mutate(write_run(tmp_path, "fa", outcome="failed"), lambda d: d.update({"benchmarks": []}))
    failed_b = _mutate(write_run(tmp_path, "fb", outcome="failed"), lambda d: d.update({"benchmarks": []}))
    assert cli(capsys, "compare", str(failed_a), str(failed_b))[0] == EXIT_INCOMPARABLE


def test_a_configuration_that_now_fails_fails_the_gate(tmp_path, capsys):
    a = write_run(tmp_path, "a")
    b = _mutate(write_run(tmp_path, "b"), lambda d: d["cowmor"]["outcomes"][0].update({"outcome": "failed", "reason": "boom"}))
    code = main(["compare", str(a), str(b)])
    out = capsys.readouterr().out
    assert code == EXIT_REGRESSION and "boom" in out


def test_a_metric_the_baseline_did_not_record_is_new_not_a_failure(tmp_path, capsys):
    def drop(d):
        for b in d["benchmarks"]:
            b["extra_info"]["filesystem"].pop("delete")
            b["extra_info"].pop("row_count")
    a = _mutate(write_run(tmp_path, "a"), drop)
    b = write_run(tmp_path, "b")
    code = main(["compare", str(a), str(b)])
    out = capsys.readouterr().out
    assert code == 0 and "NEW" in out and "FAIL" not in out


# --- history ------------------------------------------------------------------------------------------------

# Each appender is a fresh interpreter, not a fork: a fork of this process copies whatever lock another thread held
# (the tiny run's watcher, a logging handler) and can wait on it forever, which once held CI until its timeout.
_APPEND = (
    "import sys; from pathlib import Path; from bench.results import history; "
    "from bench.results.contract import load_run; "
    "[history.append(Path(sys.argv[1]), load_run(run_dir)) for run_dir in sys.argv[2:]]"
)


def test_concurrent_appends_lose_nothing(tmp_path):
    """Four processes append ten runs each, at once, into one history: all forty runs are in the file."""
    processes, per_process = 4, 10
    dirs = [[str(write_run(tmp_path / "runs", f"p{p}-r{i:03d}")) for i in range(per_process)] for p in range(processes)]
    path = tmp_path / "history.csv"
    root = Path(__file__).resolve().parents[1]
    appenders = [subprocess.Popen([sys.executable, "-c", _APPEND, str(path), *d], cwd=root) for d in dirs]
    assert [appender.wait(timeout=300) for appender in appenders] == [0] * processes
    frame = history.read(path)
    assert frame.run_id.nunique() == processes * per_process
    assert len(frame) == processes * per_process * len(history.rows(load_run(dirs[0][0])))
    assert not list(tmp_path.glob(".history.csv.*.tmp"))


def test_run_ids_stay_strings_and_appending_twice_is_idempotent(tmp_path):
    path = tmp_path / "h.csv"
    for run_id in ("001", "1e3", "1", "NaN"):
        history.append(path, load_run(write_run(tmp_path, run_id)))
    again = history.append(path, load_run(write_run(tmp_path, "001")))
    assert sorted(again.run_id.unique()) == ["001", "1", "1e3", "NaN"]
    assert sorted(history.read(path).run_id.unique()) == ["001", "1", "1e3", "NaN"]
    assert len(again) == 4 * len(history.rows(load_run(tmp_path / "001")))


@pytest.mark.parametrize("content, message", [("", "is empty"), ("a,b\n1,2\n", "columns"),
                                              ("\x00\x01garbage", "columns")])
def test_corrupt_histories_are_named_not_replaced(content, message, tmp_path, capsys):
    path = tmp_path / "h.csv"
    path.write_text(content)
    code, err = cli(capsys, "history", str(write_run(tmp_path, "r")), "--file", str(path))
    assert code == EXIT_BAD_INPUT and message in _one_line(err) and path.read_text() == content


def test_a_truncated_last_line_is_refused(tmp_path, capsys):
    path = tmp_path / "h.csv"
    history.append(path, load_run(write_run(tmp_path, "r1")))
    text = path.read_text()
    path.write_text(text[: text.rstrip("\n").rfind(",")])  # cut inside the last row
    code, err = cli(capsys, "history", str(write_run(tmp_path, "r2")), "--file", str(path))
    assert code == EXIT_BAD_INPUT and "incomplete" in _one_line(err)


def test_a_read_only_history_is_not_replaced(tmp_path, capsys):
    path = tmp_path / "h.csv"
    history.append(path, load_run(write_run(tmp_path, "r1")))
    path.chmod(stat.S_IRUSR | stat.S_IRGRP)
    before = path.read_text()
    code, err = cli(capsys, "history", str(write_run(tmp_path, "r2")), "--file", str(path))
    assert code == EXIT_BAD_INPUT and "read-only" in _one_line(err) and path.read_text() == before


# --- partial runs, reports ----------------------------------------------------------------------------------

def test_a_run_that_died_before_its_json_is_reported_as_partial(tmp_path, capsys):
    run_dir = write_run(tmp_path, "died")
    (run_dir / "benchmark.json").unlink()
    run = load_run(run_dir)
    assert run.partial and len(run.outcomes) == 3
    assert main(["report", str(run_dir), "-o", str(tmp_path / "out")]) == 0
    assert "Partial run" in (tmp_path / "out" / "index.html").read_text()
    assert main(["history", str(run_dir), "--file", str(tmp_path / "h.csv")]) == 0
    assert cli(capsys, "compare", str(write_run(tmp_path, "ok")), str(run_dir))[0] == EXIT_INCOMPARABLE


STOPPED_RUN = """
import os, signal

def test_measured(benchmark):
    benchmark.extra_info["note"] = "finished before the signal"
    benchmark(sum, [1, 2, 3])

def test_the_signal_arrives_while_measuring(benchmark):
    benchmark.pedantic(os.kill, args=(os.getpid(), signal.{name}), rounds=1, iterations=1)

def test_never_reached(benchmark):
    benchmark(sum, [4])
"""


def _run_with_the_plugin(tmp_path: Path, source: str, run_id: str):
    """A test file of ``source`` run under cowmor's plugin in its own pytest, as a user's run would be."""
    import subprocess
    import sys

    (tmp_path / f"test_{run_id}.py").write_text(source)
    return subprocess.run([sys.executable, "-m", "pytest", str(tmp_path / f"test_{run_id}.py"), "-p", "bench.run.plugin",
                           "-p", "no:cacheprovider", "-c", "/dev/null", "--rootdir", str(tmp_path), "--run-id", run_id,
                           "--results-dir", str(tmp_path / "results"), "--warehouse", str(tmp_path / "ws"),
                           "--formats", "iceberg", "--engines", "spark"],
                          capture_output=True, text=True, timeout=300, cwd=Path(__file__).parent.parent)


@pytest.mark.parametrize("name", ["SIGTERM"])  # SIGHUP and SIGINT take the same handler
def test_a_run_stopped_by_a_signal_keeps_what_it_measured_and_says_so(name, tmp_path):
    """A CI timeout or a closed terminal ends the run as Ctrl-C does: the finished benchmarks saved, marked (the one
    the signal interrupted dropped, not a reason to save nothing)."""
    done = _run_with_the_plugin(tmp_path, STOPPED_RUN.format(name=name), "stopped")
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]  # pytest's "interrupted"
    run = load_run(tmp_path / "results" / "stopped")
    assert [b["extra_info"].get("note") for b in run.data["benchmarks"]] == ["finished before the signal"]
    assert run.partial and run.environment["interrupted"] == name
    assert run.why_partial == f"stopped by {name} before it finished"


SWALLOWED_RUN = """
import os, signal

def test_measured(benchmark):
    benchmark(sum, [1, 2, 3])

def test_a_library_turns_the_interrupt_into_its_own_error(benchmark):
    def call():
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt:
            raise RuntimeError("An error occurred while calling o622.save") from None
    benchmark.pedantic(call, rounds=1, iterations=1)

def test_never_reached(benchmark):
    benchmark(sum, [4])
"""


def test_ctrl_c_during_a_jvm_call_ends_the_run_though_the_library_raised_its_own_error(tmp_path):
    """py4j turns Ctrl-C during a Spark call into a ``Py4JError``: pytest sees a failed test and would go on to the
    next; the run stops after it instead, marked interrupted."""
    done = _run_with_the_plugin(tmp_path, SWALLOWED_RUN, "swallowed")
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]  # pytest's "interrupted"
    assert "test_never_reached" not in done.stdout and "stopped by SIGINT" in done.stdout
    run = load_run(tmp_path / "results" / "swallowed")
    assert run.partial and run.environment["interrupted"] == "SIGINT"


def test_compaction_without_an_update_builds_on_both_engines(tmp_path):
    """A run of `-k compaction` (or whose updates failed after timing): no W to model, no crash."""
    run_dir = write_run(tmp_path, "comp", operations=("compaction",), engines=("spark", "duckdb"))
    page = main(["report", str(run_dir), "-o", str(tmp_path / "out")])
    assert page == 0 and "nothing to model" in (tmp_path / "out" / "index.html").read_text()
    assert "compaction" in text_summary(load_run(run_dir))


def test_a_failed_re_report_leaves_the_old_report_whole(tmp_path, monkeypatch):
    run_dir = write_run(tmp_path, "r")
    out = tmp_path / "out"
    assert main(["report", str(run_dir), "-o", str(out)]) == 0
    old = (out / "index.html").read_text()
    old_files = sorted(p.name for p in out.rglob("*"))

    def boom(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr("bench.report.build.section_settlements", boom)
    with pytest.raises(OSError):
        from bench.report.build import build_report
        build_report([run_dir], out)
    assert (out / "index.html").read_text() == old and old.rstrip().endswith("</html>")
    assert sorted(p.name for p in out.rglob("*")) == old_files
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_a_report_stopped_by_sigterm_leaves_no_staging_folder(tmp_path, monkeypatch, capsys):
    """A timeout's SIGTERM ends `report` as Ctrl-C does: the staging folder goes, the old handler comes back."""
    run_dir = write_run(tmp_path, "r")

    def terminated(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
    monkeypatch.setattr("bench.report.build.section_settlements", terminated)
    ignored: list[int] = []

    def before(signum, frame):  # stands in for the default (the process ends, no finally) without ending pytest
        ignored.append(signum)
    previous = signal.signal(signal.SIGTERM, before)
    try:
        assert main(["report", str(run_dir), "-o", str(tmp_path / "out")]) == 130
        assert signal.getsignal(signal.SIGTERM) is before and not ignored
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert "interrupted" in capsys.readouterr().err
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")] and not (tmp_path / "out").exists()


def test_report_without_runs_takes_the_newest_by_time_not_by_name(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    newer = write_run(tmp_path / "results", "aaa newer")
    older = write_run(tmp_path / "results", "zzz-baseline")
    os.utime(older / "benchmark.json", (1, 1))
    for name in ("environment.json", "outcomes.json"):
        os.utime(older / name, (1, 1))
    assert main(["report", "-o", str(tmp_path / "out")]) == EXIT_BAD_INPUT  # its recorded run id has a space
    assert "aaa newer" in capsys.readouterr().err
    data = json.loads((newer / "benchmark.json").read_text())
    data["cowmor"]["environment"]["run_id"] = "aaa-newer"
    (newer / "benchmark.json").write_text(json.dumps(data))
    assert main(["report"]) == 0
    assert (tmp_path / "reports" / "aaa-newer" / "index.html").exists()


# --- options checked at start -------------------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--warehouse", "foo:bar"], "not a local path nor"),
    (["--warehouse", "ftp://host/x"], "not a local path nor"),
    (["--seed", "-1"], "--seed"),
    (["--seed", "99999999999"], "--seed"),
    (["--run-id", "x" * 300], "not a folder name"),
    (["--run-id", "../../x"], "not a folder name"),
    (["--scenario", "/etc/passwd"], "no scenario '/etc/passwd'"),
    (["--scenario", "../tests/test_e2e.py"], "no scenario"),
    (["--param", "days=100000000"], "bounds are"),
    (["--param", "rounds=0"], "positive integer"),
])
def test_run_options_are_checked_at_start(args, message, tmp_path, capsys):
    code, err = cli(capsys, "run", "--warehouse", str(tmp_path / "ws"), "--results-dir", str(tmp_path / "res"), *args)
    assert code == EXIT_BAD_INPUT and message in err and "Traceback" not in err
    assert not (tmp_path / "res").exists()


def test_results_dir_that_is_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "res").write_text("x")
    code, err = cli(capsys, "run", "--warehouse", str(tmp_path / "ws"), "--results-dir", str(tmp_path / "res"))
    assert code == EXIT_BAD_INPUT and "is not a directory" in _one_line(err)


def test_a_remote_warehouse_that_does_not_answer_is_refused_in_bounded_time(tmp_path, monkeypatch, capsys):
    """No network here: the check gives up at its bound (lowered for the test) with one line, no hang."""
    monkeypatch.setattr("bench.run.options.REMOTE_CHECK_S", 8.0)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens on the discard port
    code, err = cli(capsys, "run", "--warehouse", "s3a://bucket/cowmor", "--results-dir", str(tmp_path / "res"))
    assert code == EXIT_BAD_INPUT and "--warehouse s3a://bucket/cowmor" in _one_line(err)


def test_warm_up_zero_is_accepted(tmp_path):
    from bench.cli import parser
    from bench.run.session import BenchSession

    ns = parser().parse_args(["run", "--param", "warm_up=0", "--warehouse", str(tmp_path / "ws"), "--scale", "tiny"])
    assert BenchSession.from_options(ns).scale.warm_up == 0


def test_an_existing_run_id_is_refused(tmp_path, capsys):
    write_run(tmp_path / "res", "taken")
    code, err = cli(capsys, "run", "--warehouse", str(tmp_path / "ws"), "--results-dir", str(tmp_path / "res"),
                    "--run-id", "taken")
    assert code == EXIT_BAD_INPUT and "already holds a recorded run" in _one_line(err)


def test_no_recorded_figure_is_nan_after_the_contract(tmp_path):
    frame = pd.concat([history.rows(load_run(write_run(tmp_path, "r")))])
    assert all(math.isfinite(v) for v in frame.value)


def test_a_failure_whose_jvm_died_names_why_in_its_recorded_reason():
    """Hudi's record index at 263 MB files with a 6 GB driver: py4j said only "<exception str() failed>"."""
    from bench.run.plugin import jvm_death

    stderr = ("19:20:01 WARN x: slow\nException in thread \"Spark Context Cleaner\" java.lang.OutOfMemoryError: "
              "Java heap space\n\tat java.base/java.lang.Thread.run(Thread.java:840)\n")
    assert jvm_death(stderr) == ("; the Spark JVM printed java.lang.OutOfMemoryError: Java heap space "
                                 "(give the driver more with --driver-memory)")
    assert jvm_death("java.lang.StackOverflowError\n") == "; the Spark JVM printed java.lang.StackOverflowError"
    assert jvm_death("") == jvm_death("all well") == ""


def test_ctrl_c_still_stops_the_run_after_pyspark_made_sigint_its_own():
    """pyspark's SparkContext installs its own SIGINT handler (cancel the jobs, raise KeyboardInterrupt); reclaimed,
    Ctrl-C is recorded as the run's stop first and pyspark still cancels its jobs."""
    from bench.run import stopping

    saved = {name: signal.getsignal(getattr(signal, name)) for name in stopping.STOP_SIGNALS}
    stops: list[str] = []
    cancelled: list[bool] = []

    def pysparks(_signum, _frame):  # what pyspark.context installs
        cancelled.append(True)
        raise KeyboardInterrupt()

    try:
        stopping.install(stops.append)
        signal.signal(signal.SIGINT, pysparks)
        stopping.reclaim_sigint()
        stopping.reclaim_sigint()  # a second start of the same context's handler wraps it once
        with pytest.raises(KeyboardInterrupt):
            signal.getsignal(signal.SIGINT)(signal.SIGINT, None)
        assert stops == ["SIGINT"] and cancelled == [True]
    finally:
        for name, handler in saved.items():
            signal.signal(getattr(signal, name), handler)
        stopping._record = None
