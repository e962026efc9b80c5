"""The run history: one tidy CSV under results/, one row per (run, benchmark, metric), for trends.

Appending is safe under concurrent writers: an exclusive lock on a sibling lock file serializes the
read-modify-write, the new file is written under a unique temporary name and renamed into place (readers see the
old file or the new one, never half of one), and a run already present is replaced, not duplicated. Run ids stay
strings (``001`` is not ``1``).
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from bench.exceptions import BadRecord
from bench.results.contract import Run

COLUMNS = ["run_id", "date", "scale", "spark", "pyspark", "formats", "config_id", "scenario", "operation", "param",
           "benchmark", "metric", "value"]
TEXT = [c for c in COLUMNS if c != "value"]
METRICS = {"median_s": ("stats", "median"), "min_s": ("stats", "min"), "max_s": ("stats", "max")}
EXTRA = {"bytes_written": ("filesystem", "bytes_added"), "files_written": ("filesystem", "files_added"),
         "write_amplification": ("write_amplification",), "rows_changed_verified": ("rows_changed_verified",)}


def rows(run: Run) -> pd.DataFrame:
    env = run.environment
    formats = env.get("formats") or {}
    versions = ";".join(f"{family}={next((a.rsplit(':', 1)[-1] for a in (f or {}).get('artifacts', [])), '?')}"
                        for family, f in sorted(formats.items()))
    common = {"run_id": run.run_id, "date": env.get("created"), "scale": run.scale,
              "spark": (env.get("jvm") or {}).get("spark"), "pyspark": (env.get("packages") or {}).get("pyspark"),
              "formats": versions}
    out: list[dict[str, Any]] = []
    for r in run.records():
        ident = {"config_id": r.config_id, "scenario": r.scenario, "operation": r.operation, "param": r.param,
                 "benchmark": r.name}
        for metric, path in list(METRICS.items()) + list(EXTRA.items()):
            value: Any = r.stats if path[0] == "stats" else r.info
            for key in path[1:] if path[0] == "stats" else path:
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                out.append({**common, **ident, "metric": metric, "value": float(value)})
    return pd.DataFrame(out, columns=COLUMNS)


def read(history: Path) -> pd.DataFrame:
    """The whole history (empty if there is none yet).

    Raises:
        BadRecord: an unreadable or corrupt file, or one written by another version (other columns).
    """
    history = Path(history)
    if not history.exists():
        return pd.DataFrame(columns=COLUMNS)
    if not history.is_file():
        raise BadRecord(f"{history}: the history is not a regular file")
    try:
        frame = pd.read_csv(history, dtype={c: str for c in TEXT}, keep_default_na=False, na_values={"value": [""]})
    except pd.errors.EmptyDataError:
        raise BadRecord(f"{history}: the history file is empty (remove it to start a new one)") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as err:
        raise BadRecord(f"{history}: not a history CSV ({str(err).splitlines()[0]})") from None
    except OSError as err:
        raise BadRecord(f"{history}: cannot read the history ({err.strerror})") from None
    if list(frame.columns) != COLUMNS:
        raise BadRecord(f"{history}: columns {', '.join(map(str, frame.columns))[:200]} are not this version's "
                        f"({', '.join(COLUMNS)}): move the file aside to start a new history")
    bad = frame.index[frame.value.isna() | (frame.metric == "") | (frame.run_id == "")]
    if len(bad):
        raise BadRecord(f"{history}: line {int(bad[0]) + 2} is incomplete (a truncated write?): repair or remove it")
    return frame


@contextlib.contextmanager
def _locked(history: Path) -> Iterator[None]:
    lock = history.with_name(f".{history.name}.lock")
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def append(history: Path, run: Run) -> pd.DataFrame:
    """Add ``run`` to the history file (replacing an earlier copy of the same run) and return the whole history.

    Raises:
        BadRecord: the history is corrupt, of another version, or not writable.
    """
    history = Path(history)
    history.parent.mkdir(parents=True, exist_ok=True)
    if history.exists() and (not os.access(history, os.W_OK) or not history.stat().st_mode & 0o222):
        raise BadRecord(f"{history}: the history is read-only; not replacing it")
    with _locked(history):
        old = read(history)
        kept = old[old.run_id != run.run_id]
        new = pd.concat([kept, rows(run)], ignore_index=True) if not kept.empty else rows(run)
        fd, tmp = tempfile.mkstemp(prefix=f".{history.name}.", suffix=".tmp", dir=history.parent)
        try:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; the history is as readable as any new file
            with os.fdopen(fd, "w") as out:
                new.to_csv(out, index=False)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, history)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    return new
