"""Spark reads through the format's own Spark integration, in the application that wrote the table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.engines.base import ReadEngine

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from bench.formats.base import TableFormat, TableRef


def missing() -> str | None:
    return None  # pyspark is a dependency of the harness itself


class SparkEngine(ReadEngine):
    name = "spark"

    def __init__(self, spark: SparkSession) -> None:
        super().__init__()
        self.spark = spark

    def version(self) -> str:
        return f"spark {self.spark.version}"

    def relation(self, fmt: TableFormat, table: TableRef, mode: str, sql: str = "") -> str:
        # resolving the relation is part of the read: for Hudi it lists the table, as Iceberg's planning does
        return fmt.relation(self.spark, table, mode)

    def fetch(self, sql: str) -> list[tuple]:
        return [tuple(row) for row in self.spark.sql(sql).collect()]


ENGINE = SparkEngine
