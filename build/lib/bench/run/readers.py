"""The read engines of one run: Spark (the reference, in the family's application) and every other selected engine,
started on first use, or the one-line reason it cannot run here."""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench.engines import PRIMARY, engine_module
from bench.engines.spark import SparkEngine

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from bench.engines.base import ReadEngine


@dataclass
class ReadEngines:
    engine_names: list[str] = field(default_factory=lambda: [PRIMARY])
    _engines: dict[str, ReadEngine | str] = field(default_factory=dict)  # name -> engine, or why it cannot run

    def _engine(self, name: str, start: bool) -> ReadEngine | str | None:
        """Engine ``name``, started on first use if ``start``; or why it cannot run here (checked once)."""
        if name not in self._engines:
            module = engine_module(name)
            reason = module.missing()
            if reason or start:
                self._engines[name] = reason or module.ENGINE()
        return self._engines.get(name)

    def for_spark(self, spark: SparkSession) -> list[ReadEngine]:
        """Spark (reading in ``spark``, the reference) and every other selected engine that can run here."""
        others = [self._engine(name, start=True) for name in self.engine_names[1:]]
        return [SparkEngine(spark), *(e for e in others if not isinstance(e, str))]

    def skipped(self) -> dict[str, str]:
        """Selected engines that cannot run here, with the one-line reason."""
        return {name: reason for name in self.engine_names[1:]
                if isinstance(reason := self._engine(name, start=False), str)}

    def record(self) -> dict[str, Any]:
        """Per engine: available or skipped (why), its version and settings, and which configurations it read."""
        out: dict[str, Any] = {PRIMARY: {"status": "available", "version": f"spark {importlib.metadata.version('pyspark')}"}}
        skipped = self.skipped()
        for name in self.engine_names[1:]:
            engine = self._engines.get(name)
            if name in skipped:
                out[name] = {"status": "skipped", "reason": skipped[name]}
            elif engine is None:
                out[name] = {"status": "unused"}
            else:
                out[name] = {"status": "available", "version": engine.version(), "settings": engine.settings(),
                             "support": engine.support()}
        return out

    def close(self) -> None:
        for engine in self._engines.values():
            if not isinstance(engine, str):
                engine.close()
