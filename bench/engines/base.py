"""The one interface every read engine implements: select from a configuration's table in a read mode."""

from __future__ import annotations

import abc
import time
from typing import TYPE_CHECKING, Any, ClassVar

from bench.core.ledger import LEDGER, READS, SECOND_READS
from bench.exceptions import CowmorError

if TYPE_CHECKING:
    from bench.formats.base import TableFormat, TableRef


class ReadEngine(abc.ABC):
    """An engine that runs the dashboard SQL (written once, in Spark's dialect) on a table it did not write."""

    name: ClassVar[str]

    def __init__(self) -> None:
        # (config id, read mode) -> why this engine cannot read it (the engine's own error), learned on first try
        self.unsupported: dict[tuple[str, str], str] = {}
        self.readable: set[tuple[str, str]] = set()

    @abc.abstractmethod
    def version(self) -> str:
        """The engine's version as its users name it (e.g. ``duckdb 1.4.4``)."""

    @abc.abstractmethod
    def relation(self, fmt: TableFormat, table: TableRef, mode: str, sql: str) -> str:
        """Something the engine's SQL can select from, reading ``table`` in ``mode`` as it is now (``sql`` is the
        query about to run, for an engine that reads only the columns it names)."""

    @abc.abstractmethod
    def fetch(self, sql: str) -> list[tuple]:
        """Run one query and return its rows."""

    def adapt(self, sql: str) -> str:
        """The dashboard SQL in this engine's dialect (the queries are written once, in Spark SQL)."""
        return sql

    def epoch_micros(self, column: str) -> str:
        """A timestamp column's microseconds since the epoch, in this engine's SQL (``measure/digest.py``)."""
        return f"unix_micros({column})"

    def hex_number(self, hex_text: str) -> str:
        """A hexadecimal text's value as a BIGINT, in this engine's SQL (``measure/digest.py``)."""
        return f"CAST(conv({hex_text}, 16, 10) AS BIGINT)"

    def settings(self) -> dict[str, Any]:
        """What the engine was configured with (memory, threads, extensions), recorded with the results."""
        return {}

    def release(self) -> None:
        """Let go of what the last query loaded to read its table (an engine that reads into its own memory)."""

    def _run(self, fmt: TableFormat, table: TableRef, sql: str, mode: str) -> list[tuple]:
        sql = self.adapt(sql)
        return self.fetch(sql.format(table=self.relation(fmt, table, mode, sql)))

    def query(self, fmt: TableFormat, table: TableRef, sql: str, mode: str) -> list[tuple]:
        """The rows of ``sql`` on ``table`` in ``mode``; what the engine loaded for it is released after."""
        try:
            return self._run(fmt, table, sql, mode)
        finally:
            self.release()

    def attempt(self, fmt: TableFormat, table: TableRef, sql: str, mode: str, reference: bool = False) -> tuple[float, list[tuple]] | str:
        """One timed read, or why this engine cannot read this configuration in ``mode`` (learned once, then
        not retried). A reference engine (Spark, which wrote the table) raises instead: it must read it.

        Raises:
            CowmorError: a harness error (e.g. a read mode the configuration does not have), from any engine.
        """
        key = (fmt.config_id, mode)
        if key in self.unsupported:
            return self.unsupported[key]
        try:
            with LEDGER.spend(READS if reference else SECOND_READS):
                start = time.perf_counter()
                rows = self._run(fmt, table, sql, mode)
                took = time.perf_counter() - start
        except CowmorError:
            raise
        except Exception as err:  # noqa: BLE001 - the engine's own error is the finding
            if reference:
                raise
            self.readable.discard(key)  # e.g. it read the base table, not the deletion vectors an update added
            self.unsupported[key] = f"{type(err).__name__}: {(str(err).strip().splitlines() or [''])[0][:300]}"
            return self.unsupported[key]
        finally:
            self.release()  # outside the timed read
        self.readable.add(key)
        return took, rows

    def support(self) -> dict[str, dict[str, str]]:
        """config id -> read mode -> ``reads`` or ``unsupported by <version>: <error>``."""
        out: dict[str, dict[str, str]] = {}
        for config_id, mode in sorted(self.readable):
            out.setdefault(config_id, {})[mode] = "reads"
        for (config_id, mode), why in sorted(self.unsupported.items()):
            out.setdefault(config_id, {})[mode] = f"unsupported by {self.version()}: {why}"
        return out

    def close(self) -> None:
        """Release what the engine holds (connections, memory)."""
