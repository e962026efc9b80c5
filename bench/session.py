"""One benchmark run: validated options, the workspace, jar resolutions, Spark applications, the record."""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.metadata
import json
import os
import platform
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import artifacts
from bench.datagen import PaymentsData, generate_payments
from bench.engines import PRIMARY, engine_module, select_engines
from bench.engines.spark import SparkEngine
from bench.exceptions import BadOption, MissingArtifact
from bench.formats import Config, adapter_class, make_adapter, select_configs
from bench.ledger import DATA, JVM, LEDGER, RESET, SETUP, WARM_UP
from bench.measure import RoundsPlan
from bench.options import check_master_reachable, scale_overrides
from bench.scales import Scale, get_scale
from bench.spark import SparkApps, SparkOptions, java_version
from bench.storage import Files
from bench.workspace import Workspace

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from bench.engines.base import ReadEngine
    from bench.formats.base import TableFormat, TableRef

PACKAGES = ("pyspark", "pyiceberg", "pytest-benchmark", "pandas", "pyarrow", "seaborn", "delta-spark",
            "snowpark-connect-deps-iceberg", "duckdb", "duckdb-ext-iceberg", "duckdb-ext-delta", "duckdb-ext-avro", "hudi")


def plan_rounds(scale: Scale, low: int | None = None, high: int | None = None, target_ci: float = 0.10) -> RoundsPlan:
    """Rounds of each update and compaction: ``low`` (default: the scale's rounds) up to ``high`` (default: the
    scale's max_rounds, never below ``low``).

    Raises:
        BadOption: ``high`` below ``low``.
    """
    low = low or scale.rounds
    high = high or max(low, scale.max_rounds)
    if high < low:
        raise BadOption(f"--max-rounds {high} is below --min-rounds {low}")
    return RoundsPlan(low, high, target_ci)


def new_run_id(scale: str) -> str:
    return f"{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%SZ}-{scale}-{uuid.uuid4().hex[:6]}"


@dataclass
class BenchSession:
    scale: Scale
    seed: int
    configs: list[Config]
    spark_options: SparkOptions
    workspace: Workspace
    results_dir: Path
    run_id: str
    jars_dir: Path | None = None
    maven_repo: str = artifacts.MAVEN_CENTRAL
    engine_names: list[str] = field(default_factory=lambda: [PRIMARY])
    rounds_plan: RoundsPlan | None = None
    apps: SparkApps = field(init=False)
    _resolutions: dict[str, artifacts.Resolution | MissingArtifact] = field(default_factory=dict)
    _warm: set[str] = field(default_factory=set)
    _bases: dict[tuple[str, str, str], tuple[TableRef, str]] = field(default_factory=dict)
    _engines: dict[str, ReadEngine | str] = field(default_factory=dict)  # name -> engine, or why it cannot run
    java: int | None = None

    def __post_init__(self) -> None:
        self.apps = SparkApps(self.spark_options)
        self.rounds_plan = self.rounds_plan or plan_rounds(self.scale)

    @classmethod
    def from_options(cls, ns: Any) -> BenchSession:
        """Validate everything that can be checked before work starts.

        Raises:
            BadOption: any invalid option, in one line.
        """
        scale = get_scale(ns.scale, scale_overrides(ns.param))
        configs = select_configs(ns.formats)
        check_master_reachable(ns.spark_master)
        if ns.jars_dir is not None and not Path(ns.jars_dir).is_dir():
            raise BadOption(f"--jars-dir {ns.jars_dir} is not a directory")
        spark_options = SparkOptions(ns.spark_master, ns.driver_memory, ns.shuffle_partitions, tuple(ns.spark_conf))
        return cls(scale=scale, seed=ns.seed, configs=configs, spark_options=spark_options,
                   workspace=Workspace(str(ns.warehouse)), results_dir=Path(ns.results_dir),
                   run_id=ns.run_id or new_run_id(scale.name), jars_dir=ns.jars_dir, maven_repo=ns.maven_repo,
                   engine_names=select_engines(ns.engines), rounds_plan=plan_rounds(scale, ns.min_rounds, ns.max_rounds, ns.target_ci))

    # --- where things go -----------------------------------------------------------------
    @property
    def run_dir(self) -> Path:
        path = self.results_dir / self.run_id
        path.mkdir(parents=True, exist_ok=True)
        return path

    def payments(self) -> PaymentsData:
        s = self.scale
        with LEDGER.spend(DATA):
            return generate_payments(self.workspace.data_dir, s.days, s.files_per_day, s.rows_per_file, self.seed)

    # --- formats and Spark ---------------------------------------------------------------
    def resolution(self, family: str) -> artifacts.Resolution:
        """The family's jars, resolved once per run.

        Raises:
            MissingArtifact: the jars cannot be found (the caller skips the family with this message).
        """
        if family not in self._resolutions:
            try:
                self._resolutions[family] = artifacts.resolve(family, self.jars_dir, self.maven_repo)
            except MissingArtifact as err:
                self._resolutions[family] = err
        found = self._resolutions[family]
        if isinstance(found, MissingArtifact):
            raise found
        return found

    def adapter(self, config_id: str) -> TableFormat:
        return make_adapter(config_id, self.workspace.warehouse, self.scale.target_file_bytes)

    def spark(self, family: str) -> SparkSession:
        """The family's Spark application (starting it, and stopping another family's, if needed)."""
        if self.java is None:
            self.java = java_version()
        resolution = self.resolution(family)
        conf = {s.key: s.value for s in adapter_class(family).spark_settings(self.workspace.warehouse)}
        starting = self.apps.family != family
        with LEDGER.spend(JVM) if starting else contextlib.nullcontext():
            return self.apps.get(family, conf | resolution.spark_conf())

    def _engine(self, name: str, start: bool) -> ReadEngine | str | None:
        """Engine ``name``, started on first use if ``start``; or why it cannot run here (checked once)."""
        if name not in self._engines:
            module = engine_module(name)
            reason = module.missing()
            if reason or start:
                self._engines[name] = reason or module.ENGINE()
        return self._engines.get(name)

    def read_engines(self, spark: SparkSession) -> list[ReadEngine]:
        """Spark (reading in ``spark``, the reference) and every other selected engine that can run here."""
        others = [self._engine(name, start=True) for name in self.engine_names[1:]]
        return [SparkEngine(spark), *(e for e in others if not isinstance(e, str))]

    def skipped_engines(self) -> dict[str, str]:
        """Selected engines that cannot run here, with the one-line reason."""
        return {name: reason for name in self.engine_names[1:]
                if isinstance(reason := self._engine(name, start=False), str)}

    def engines_record(self) -> dict[str, Any]:
        """Per engine: available or skipped (why), its version and settings, and which configurations it read."""
        out: dict[str, Any] = {PRIMARY: {"status": "available", "version": f"spark {importlib.metadata.version('pyspark')}"}}
        skipped = self.skipped_engines()
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

    def close_engines(self) -> None:
        for engine in self._engines.values():
            if not isinstance(engine, str):
                engine.close()

    def fresh_table(self, spark: SparkSession, fmt: TableFormat, name: str, data: PaymentsData | str,
                    key: str = "txn_id", partition_by: str = "settled_date", ordering: str = "created_at") -> TableRef:
        """Drop ``name`` (through the workspace) and create it again from the base data (a Parquet folder)."""
        if Files.of(fmt.location(name)).exists():
            self.workspace.remove(fmt.location(name))
        fmt.forget_cached_state(spark)
        frame = spark.read.parquet(str(data.path) if isinstance(data, PaymentsData) else data)
        return fmt.create(spark, name, frame, key=key, partition_by=partition_by, ordering=ordering)

    def base_table(self, spark: SparkSession, fmt: TableFormat, name: str, data: PaymentsData | str,
                   key: str = "txn_id", partition_by: str = "settled_date", ordering: str = "created_at",
                   prepare: tuple[str, Callable[[TableRef], object]] | None = None) -> TableRef:
        """Table ``name`` in its base state: created from ``data`` once per run and configuration, then restored.

        The table folder is saved right after creation and copied back into the same place before each later
        use, so every round starts from byte-identical files (Iceberg's absolute paths stay valid because the
        location does not change). ``prepare=(label, fn)`` saves the state after ``fn(table)`` instead (e.g. the
        updated table that compaction starts from), built once too. Neither step is ever inside a timed region.
        """
        source = str(data.path) if isinstance(data, PaymentsData) else str(data)
        state = (fmt.config_id, name, prepare[0] if prepare else "")
        saved = self._bases.get(state)
        if saved is not None and saved[1] == source:
            with LEDGER.spend(RESET):
                self.restore(spark, fmt, saved[0], state[2])
            return saved[0]
        with LEDGER.spend(SETUP):
            if prepare:
                table = self.base_table(spark, fmt, name, data, key=key, partition_by=partition_by, ordering=ordering)
                prepare[1](table)
            else:
                table = self.fresh_table(spark, fmt, name, data, key=key, partition_by=partition_by, ordering=ordering)
            snapshot = self._snapshot(fmt, name, state[2])
            if snapshot.exists():
                self.workspace.remove(snapshot.uri)
            Files.of(table.location).copy_tree(snapshot)
        self._bases[state] = (table, source)
        return table

    def restore(self, spark: SparkSession, fmt: TableFormat, table: TableRef, label: str = "") -> None:
        """Put a saved state of ``table`` back in place and drop every cache that remembers the old one."""
        if Files.of(table.location).exists():
            self.workspace.remove(table.location)
        self._snapshot(fmt, table.name, label).copy_tree(Files.of(table.location))
        fmt.forget_cached_state(spark, table)
        spark.catalog.clearCache()

    def _snapshot(self, fmt: TableFormat, name: str, label: str = "") -> Files:
        return Files.of(self.workspace.bases_dir) / fmt.config_id / (f"{name}@{label}" if label else name)

    def warm_up(self, spark: SparkSession, fmt: TableFormat) -> None:
        """Pay the JVM's first-create/first-merge cost (5-8 s) and each configuration's own first write and read
        paths (deletion vectors, delete files, logs) outside any measurement: once per configuration."""
        if fmt.config_id in self._warm or not self.scale.warm_up:
            return
        with LEDGER.spend(WARM_UP):
            data = generate_payments(self.workspace.data_dir, 2, 1, 200, self.seed, progress=None)
            table = self.fresh_table(spark, fmt, "warmup", data)
            spark.createDataFrame([(data.hotfix_keys(3)[0],)], "txn_id bigint").createOrReplaceTempView("warmup_keys")
            fmt.update(spark, table, "warmup_keys", {"status": "'WARM'"})
            spark.sql(f"SELECT status, count(*) FROM {fmt.relation(spark, table)} GROUP BY status").collect()
        self._warm.add(fmt.config_id)

    # --- the record ----------------------------------------------------------------------
    def environment(self) -> dict[str, Any]:
        """Versions, machine, scale, seed and every Spark/table setting: recorded with the results."""
        versions = {}
        for name in PACKAGES:
            try:
                versions[name] = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                versions[name] = None
        families = sorted({c.family for c in self.configs})
        formats: dict[str, Any] = {}
        for family in families:
            try:
                formats[family] = {"status": "available", **self.resolution(family).as_dict()}
            except MissingArtifact as err:
                formats[family] = {"status": "skipped", "reason": str(err)}
            formats[family]["artifacts"] = [a.coordinate for a in artifacts.FAMILY_ARTIFACTS[family]]
        configs = {}
        for config in self.configs:
            fmt = self.adapter(config.id)
            configs[config.id] = {"family": config.family, "mode": config.mode, "description": config.description,
                                  "merges_on_read": config.merges_on_read,
                                  "settings": [vars(s) for s in fmt.settings()]}
        return {
            "run_id": self.run_id,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "scale": self.scale.as_dict(), "seed": self.seed, "rounds_plan": vars(self.rounds_plan),
            "python": platform.python_version(), "java": self.java, "jvm": self.apps.versions() or None,
            "packages": versions, "formats": formats, "configs": configs, "engines": self.engines_record(),
            "spark": {"master": self.spark_options.master, "conf": self.spark_options.base_conf("<family>")},
            "machine": {"platform": platform.platform(), "machine": platform.machine(), "cpus": os.cpu_count(),
                        "memory_bytes": _memory_bytes(), "node": platform.node()},
            "workspace": str(self.workspace.root), "harness_commit": _git_commit(),
        }

    def write_json(self, name: str, payload: Any) -> Path:
        path = self.run_dir / name
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(payload, indent=2, default=str))
        os.replace(tmp, path)
        return path


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                              cwd=Path(__file__).parent).stdout.strip() or None
    except OSError:
        return None

