"""Daemons die with the process that started them, even when it is killed (no JVM needed: ``sleep`` stands in)."""

from __future__ import annotations

import subprocess
import sys
import time

from bench.servers import daemons

STARTER = ("import sys, time, pathlib; from bench.servers.daemons import spawn; "
           "p = spawn(['sleep', '600'], pathlib.Path(sys.argv[1])); print(p.pid, flush=True); time.sleep(600)")


def _wait_gone(pgid: int, within: float = 60.0) -> bool:
    deadline = time.monotonic() + within  # a bound on a hang, not a measurement: the kernel acts at once
    while time.monotonic() < deadline:
        if not daemons.group_alive(pgid):
            return True
        time.sleep(0.2)
    return False


def test_a_daemon_dies_when_its_starter_is_killed(tmp_path):
    starter = subprocess.Popen([sys.executable, "-c", STARTER, str(tmp_path / "log")], stdout=subprocess.PIPE, text=True)
    pgid = int(starter.stdout.readline())
    try:
        assert daemons.group_alive(pgid)
        assert (daemons.PID_DIR / f"{pgid}.pid").exists()
        starter.kill()  # SIGKILL: no cleanup code of the starter runs
        starter.wait()
        assert _wait_gone(pgid), f"daemon group {pgid} outlived its killed starter"
    finally:
        starter.kill()
        if daemons.group_alive(pgid):
            daemons.os.killpg(pgid, 9)


def test_the_next_start_sweeps_a_daemon_whose_starter_is_gone(tmp_path):
    """The parent-death signal reaches the daemon itself; what it forked is swept by the pid file at the next start."""
    orphan = subprocess.Popen(["sleep", "600"], start_new_session=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    daemons.PID_DIR.mkdir(parents=True, exist_ok=True)
    (daemons.PID_DIR / f"{orphan.pid}.pid").write_text(f"{dead.pid}\n")  # recorded by a starter that is gone
    try:
        assert orphan.pid in daemons.sweep()
        orphan.wait(timeout=60)
        assert not (daemons.PID_DIR / f"{orphan.pid}.pid").exists()
    finally:
        orphan.kill()


def test_stop_ends_the_whole_group(tmp_path):
    proc = daemons.spawn(["sh", "-c", "sleep 600 & sleep 600"], tmp_path / "log")
    assert daemons.group_alive(proc.pid)
    daemons.stop(proc, term_grace=30)
    assert not daemons.group_alive(proc.pid)


def test_a_run_is_checked_for_its_own_leftovers_not_another_runs(tmp_path):
    """The S3 test asks what its lanes left running; a cluster run beside it holds daemons in the same folder."""
    mine = daemons.spawn(["sleep", "600"], tmp_path / "log")
    try:
        assert daemons.alive_groups_started_by({daemons.os.getpid()}) == [mine.pid]
        assert mine.pid not in daemons.alive_groups_started_by({daemons.os.getpid() + 1_000_000})
    finally:
        daemons.stop(mine)
    assert not daemons.alive_groups_started_by({daemons.os.getpid()})
