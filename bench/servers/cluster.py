"""A Spark standalone master and worker on loopback, from the installed pyspark: the real thing, small.

Used by ``make cluster-test`` to prove the harness runs unchanged against ``spark://`` masters. Both JVMs
are daemons of the process that starts them (``daemons.py``): their own process group, stopped as one, and killed
by the kernel if that process dies, killed from outside included (executors die with the worker).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from bench.exceptions import CowmorError
from bench.servers.daemons import free_port, group_alive, poll, spawn, wait_for_port
from bench.servers.daemons import stop as stop_daemon

__all__ = ["StandaloneCluster", "group_alive", "free_port", "spark_home"]


def spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


@dataclass
class StandaloneCluster:
    """``with StandaloneCluster(work_dir) as cluster: cluster.master_url``."""

    work_dir: Path
    cores: int = 2
    memory: str = "3g"
    procs: list[subprocess.Popen] = field(default_factory=list)
    master_url: str = ""

    def _start(self, name: str, *args: str) -> subprocess.Popen:
        env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_HOME": str(spark_home())}
        proc = spawn([str(spark_home() / "bin" / "spark-class"), *args], self.work_dir / f"{name}.log", env)
        self.procs.append(proc)
        return proc

    def __enter__(self) -> StandaloneCluster:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        try:
            port, ui = free_port(), free_port()
            master = self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                 "--port", str(port), "--webui-port", str(ui))
            wait_for_port(port, "the Spark master", master)
            self.master_url = f"spark://127.0.0.1:{port}"
            wport = free_port()
            worker = self._start("worker", "org.apache.spark.deploy.worker.Worker", self.master_url, "--host", "127.0.0.1",
                                 "--port", str(wport), "--webui-port", str(free_port()), "--cores", str(self.cores),
                                 "--memory", self.memory, "--work-dir", str(self.work_dir / "work"))
            wait_for_port(wport, "the Spark worker", worker)
            self._wait_registered()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_registered(self, timeout: float = 60.0) -> None:
        if not poll(lambda: "Successfully registered with master" in (self.work_dir / "worker.log").read_text(), timeout, 0.5):
            raise CowmorError("the worker did not register with the master (see master.log)")

    def stop(self) -> list[int]:
        """Stop every daemon's whole process group (executors included): TERM, then KILL; wait until empty."""
        pids = []
        for proc in reversed(self.procs):
            pids.append(proc.pid)
            stop_daemon(proc)
        self.procs.clear()
        return pids

    def __exit__(self, *exc: object) -> None:
        self.stop()
