"""A writer that speaks ``race.WriterPool``'s protocol without Spark (tests/test_writer_pool.py): each batch's record
carries the writer's pid, so a test sees which application served which race."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from bench.writers.writer_process import next_job, wait_for


def main(folder: Path) -> int:
    app = json.loads((folder / "app.json").read_text())
    number = 0
    while (number := next_job(folder, number)) is not None:
        spec = json.loads((folder / f"job-{number}.json").read_text())
        if spec.get("crash") == "before ready":
            return 3
        (folder / f"job-{number}.ready").touch()
        wait_for(folder / f"job-{number}.go")
        if spec.get("crash") == "during the race":
            return 4
        with open(folder / f"job-{number}.jsonl", "a") as out:
            for batch, keys in enumerate(spec["batches"]):
                out.write(json.dumps({"writer": spec["writer"], "batch": batch, "keys": keys, "pid": os.getpid(),
                                      "conf": app["conf"]}) + "\n")
        (folder / f"job-{number}.done").touch()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
