"""Daemons the harness starts (the standalone master and worker, a storage server): they die with the process
that started them, even when it is killed.

Each daemon runs in its own process group (stopped as one, TERM then KILL) and gets a parent-death signal
(``PR_SET_PDEATHSIG``: the kernel sends SIGKILL when its parent dies, however it dies). The signal reaches the
daemon's own process, not the children it forks, so each daemon also leaves a pid file under ``PID_DIR``: the next
start sweeps every group recorded there whose starter is gone, and the data folder recorded with it (a killed run's
PostgreSQL cluster, ZooKeeper snapshots, S3 objects would otherwise stay in the temporary folder for good).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from bench.exceptions import BadOption

# every JVM the run starts (Spark applications, writers, ZooKeeper) logs with these settings
LOG4J2 = Path(__file__).with_name("log4j2.properties")
PID_DIR = Path(tempfile.gettempdir()) / f"cowmor-daemons-{os.getuid()}"
PR_SET_PDEATHSIG = 1
T = TypeVar("T")


def poll(check: Callable[[], T], timeout: float, interval: float = 0.2) -> T | None:
    """``check()`` until it returns something true (returned at once) or ``timeout`` seconds pass (None): every wait
    for a server, a file or a process in the harness is this loop."""
    deadline = time.monotonic() + timeout
    while True:
        if result := check():
            return result
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


def wait_for_port(port: int, what: str, proc: subprocess.Popen | None = None, timeout: float = 60.0) -> None:
    """Until something listens on 127.0.0.1:``port``.

    Raises:
        BadOption: ``proc`` exited first, or nothing listened within ``timeout``.
    """
    def listening() -> bool:
        if proc is not None and proc.poll() is not None:
            raise BadOption(f"{what} exited with {proc.returncode} before listening on 127.0.0.1:{port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
        return False

    if not poll(listening, timeout):
        raise BadOption(f"{what} did not listen on 127.0.0.1:{port} within {timeout:.0f} s")


def free_port() -> int:
    """A TCP port on loopback nobody listens on now (a server the run starts takes it next)."""
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct such ports (each held until all are chosen, so none is handed out twice)."""
    with contextlib.ExitStack() as held:
        sockets = [held.enter_context(socket.socket()) for _ in range(count)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def become(user: str | None):
    """What the child runs between fork and exec: drop to ``user`` (a server that refuses root, as PostgreSQL does,
    run by root in CI), then ask for the parent-death signal (a change of user clears it, so it comes after)."""
    def preexec() -> None:
        if user is not None:
            import pwd

            entry = pwd.getpwnam(user)
            os.setgroups([])
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)
        _die_with_parent()
    return preexec


def spawn(cmd: list[str], log: Path, env: dict[str, str] | None = None, user: str | None = None,
          data_dir: str | None = None) -> subprocess.Popen:
    """Start ``cmd`` as a daemon of this process: its own process group, killed if this process dies, recorded with
    its ``data_dir`` (removed by the sweep if this process dies first); as ``user`` where given (the caller is root)."""
    sweep()
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                preexec_fn=become(user))
    PID_DIR.mkdir(parents=True, exist_ok=True)
    (PID_DIR / f"{proc.pid}.pid").write_text(f"{os.getpid()}\n{data_dir or ''}\n")
    return proc


def group_alive(pgid: int) -> bool:
    """Some process of the group still runs (zombies waiting for a reaper do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not Path("/proc/self/stat").exists():
        return True
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def _gone_within(pgid: int, grace: float, reap: Callable[[], object] = lambda: None) -> bool:
    """Whether the group empties within ``grace`` seconds (``reap`` collects a leader this process started)."""
    def gone() -> bool:
        reap()
        return not group_alive(pgid)

    return bool(poll(gone, grace))


def stop(proc: subprocess.Popen, term_grace: float = 20.0, kill_grace: float = 10.0) -> None:
    """Stop the daemon's whole process group: TERM, then KILL; wait until it is empty."""
    for sig, grace in ((signal.SIGTERM, term_grace), (signal.SIGKILL, kill_grace)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        if _gone_within(proc.pid, grace, proc.poll):
            break
    (PID_DIR / f"{proc.pid}.pid").unlink(missing_ok=True)


def _recorded() -> list[tuple[Path, tuple[int, int, str] | None]]:
    """Each pid file with its daemon's group, its starter's pid and its data folder (None where unreadable)."""
    found: list[tuple[Path, tuple[int, int, str] | None]] = []
    for pidfile in PID_DIR.glob("*.pid") if PID_DIR.is_dir() else ():
        try:
            lines = pidfile.read_text().splitlines()
            found.append((pidfile, (int(pidfile.stem), int(lines[0]), lines[1].strip() if len(lines) > 1 else "")))
        except (ValueError, IndexError, OSError):
            found.append((pidfile, None))
    return found


def alive_groups_started_by(starters: set[int]) -> list[int]:
    """The recorded daemon groups still running whose starter is one of ``starters`` (a run's own processes): what
    that run left behind, not the daemons another run beside it holds in the same folder."""
    return [record[0] for _, record in _recorded() if record and record[1] in starters and group_alive(record[0])]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def sweep() -> list[int]:
    """Kill the groups of daemons whose starter is gone (a killed test process, a CI time limit) and remove their
    data folders; return the groups killed."""
    swept = []
    for pidfile, record in _recorded():
        if record is None:
            pidfile.unlink(missing_ok=True)
            continue
        pgid, starter, data_dir = record
        if starter == os.getpid() or _alive(starter):
            continue  # this run's daemon, or another live run's
        if group_alive(pgid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            _gone_within(pgid, 10.0)  # a server still writing into its folder would recreate what is removed
            swept.append(pgid)
        if data_dir and Path(data_dir).name.startswith("cowmor-"):  # only a folder the harness made
            shutil.rmtree(data_dir, ignore_errors=True)
        pidfile.unlink(missing_ok=True)
    return swept
