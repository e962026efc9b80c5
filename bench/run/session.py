"""One benchmark run: validated options, and what they build (workspace, jar resolutions, Spark applications).

Table states live in ``tables.py``, the read engines in ``readers.py``, the record on disk in ``record.py``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.core import requests
from bench.core.ledger import DATA, JVM, LEDGER
from bench.core.storage import is_local
from bench.engines import PRIMARY, select_engines
from bench.exceptions import BadOption, MissingArtifact
from bench.formats import Config, adapter_class, make_adapter, select_configs
from bench.measure.rounds import RoundsPlan
from bench.results.contract import LOCAL_DISK, SCHEMA_VERSION
from bench.run import record
from bench.run.options import check_master_reachable, check_results_dir, check_warehouse, scale_overrides
from bench.run.readers import ReadEngines
from bench.run.spark import SparkApps, SparkOptions, java_version, merge_conf
from bench.run.tables import TableStates, code_digest
from bench.run.workspace import Workspace
from bench.servers import artifacts, objectstore
from bench.servers.coordination import Coordination
from bench.workload.datagen import PaymentsData, generate_payments
from bench.workload.scales import Scale, get_scale
from bench.writers.race import WriterPool

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from bench.formats.base import TableFormat


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
    routes: list[str] = field(default_factory=lambda: ["join"])  # how updates find their rows (--routes)
    rounds_plan: RoundsPlan | None = None
    apps: SparkApps = field(init=False)
    tables: TableStates = field(init=False)
    readers: ReadEngines = field(init=False)
    _resolutions: dict[str, artifacts.Resolution | MissingArtifact] = field(default_factory=dict)
    java: int | None = None
    object_store: objectstore.ObjectStore | None = None
    interrupted: str | None = None  # the signal that stopped the run early (SIGINT, SIGTERM, SIGHUP)
    coordination: Coordination | None = None  # several writers' catalog and lock servers, started on first use
    like: dict[str, Any] = field(default_factory=dict)  # --like: the profile replicated, the fraction, the params
    writer_pool: WriterPool = field(init=False)  # several writers' applications, kept from race to race
    reuse_tables: bool = False  # --reuse-tables: base tables' saved copies outlive the run (tables.py)
    interleave: bool = False  # --interleave: a family's configurations take their rounds in turn (Lab.measure)

    def __post_init__(self) -> None:
        self.coordination = self.coordination or Coordination(self.results_dir / ".servers", self.jars_dir,
                                                              maven_repo=self.maven_repo)
        self.apps = SparkApps(self.spark_options)
        self.writer_pool = WriterPool(self.results_dir / self.run_id / "writers")
        self.rounds_plan = self.rounds_plan or plan_rounds(self.scale)
        self.tables = TableStates(self.workspace, self.seed, bool(self.scale.warm_up), bool(self.scale.warm_up_each_config),
                                  reuse=self.reuse_tables, identity=self.table_identity)
        self.readers = ReadEngines(self.engine_names)

    @classmethod
    def from_options(cls, ns: Any, start: bool = False) -> BenchSession:
        """Validate everything that can be checked before work starts; with ``start``, also start what the run
        needs (the object-store server) and make the workspace there.

        Raises:
            BadOption: any invalid option, in one line.
        """
        like = replica_of(getattr(ns, "like", None), getattr(ns, "fraction", 1.0))
        scale = get_scale(ns.scale, {**like.get("params", {}), **scale_overrides(ns.param)})
        configs = select_configs(ns.formats)
        check_master_reachable(ns.spark_master)
        if ns.jars_dir is not None and not Path(ns.jars_dir).is_dir():
            raise BadOption(f"--jars-dir {ns.jars_dir} is not a directory")
        check_results_dir(Path(ns.results_dir), ns.run_id)
        warehouse, store, extra = str(ns.warehouse), None, tuple(ns.spark_conf)
        spec = getattr(ns, "object_store", None)
        if spec:
            jars = objectstore.s3a_jars(getattr(ns, "s3a_jars", None))
            if spec != "seaweedfs":
                store = objectstore.user_endpoint(spec, jars)  # checks the form and the credentials
            elif not start:
                objectstore.weed_binary()
            if is_local(warehouse):
                warehouse = f"s3a://{objectstore.BUCKET}/cowmor"
            if start:
                store = store or objectstore.start_seaweedfs(Path(ns.results_dir) / ".object-store",
                                                             jars, getattr(ns, "object_store_delay_ms", 0.0))
                os.environ.update(store.environ())  # pyarrow, DuckDB and hudi-rs read the same endpoint and keys
                requests.register(store.requests)
                extra += tuple(store.spark_conf().items())
        if not spec or start:
            check_warehouse(warehouse)
        spark_options = SparkOptions(ns.spark_master, ns.driver_memory, ns.shuffle_partitions, extra)
        try:
            workspace = Workspace(warehouse, store.clear_folders if store else None) if not spec or start else None
        except OSError as err:
            if store is not None:
                store.stop()
            raise BadOption(f"--warehouse {warehouse}: {str(err).splitlines()[0]}") from None
        return cls(scale=scale, seed=ns.seed, configs=configs, spark_options=spark_options, object_store=store,
                   workspace=workspace, results_dir=Path(ns.results_dir),
                   run_id=ns.run_id or new_run_id(scale.name), jars_dir=ns.jars_dir, maven_repo=ns.maven_repo,
                   engine_names=select_engines(ns.engines), routes=str(getattr(ns, "routes", "join")).split(","),
                   rounds_plan=plan_rounds(scale, ns.min_rounds, ns.max_rounds, ns.target_ci), like=like,
                   reuse_tables=bool(getattr(ns, "reuse_tables", False)),
                   interleave=bool(getattr(ns, "interleave", False)),
                   coordination=Coordination(Path(ns.results_dir) / ".servers", ns.jars_dir,
                                             getattr(ns, "catalog_uri", None), getattr(ns, "zookeeper", None),
                                             ns.maven_repo))

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

    def table_identity(self, fmt: TableFormat) -> dict[str, Any]:
        """The run's part of what a base table is built from (``tables.built_from``): the family's jars, Spark's SQL
        settings (the shuffle partitions shape the files) and the harness's code."""
        conf = self.spark_options.base_conf(fmt.family)
        return {"jars": self.resolution(fmt.family).as_dict()["sha256"], "code": code_digest(),
                "spark_sql": {k: v for k, v in sorted(conf.items()) if k.startswith(("spark.sql.", "spark.databricks."))}}

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

    def adapter(self, config_id: str, target_file_bytes: int | None = None, route: str = "join") -> TableFormat:
        """The configuration's adapter, with the scale's target file size unless told otherwise, finding rows by ``route``."""
        return make_adapter(config_id, self.workspace.warehouse, target_file_bytes or self.scale.target_file_bytes, route)

    def spark(self, family: str, driver_memory: str | None = None) -> SparkSession:
        """The family's Spark application (starting it, and stopping another family's, if needed); with
        ``driver_memory``, one given that much (the memory search's attempts)."""
        if self.java is None:
            self.java = java_version()
        resolution = self.resolution(family)
        conf = {s.key: s.value for s in adapter_class(family).spark_settings(self.workspace.warehouse)}
        conf = merge_conf(conf | resolution.spark_conf(), self._shared_catalog_driver(family))
        starting = not self.apps.running(family, driver_memory)
        if starting:
            self.writer_pool.stop()  # the writers carry the stopping family's settings
        with LEDGER.spend(JVM) if starting else contextlib.nullcontext():
            return self.apps.get(family, conf, driver_memory)

    def _shared_catalog_driver(self, family: str) -> dict[str, str]:
        """Iceberg's application carries the PostgreSQL JDBC driver where it is on disk (a JDBC driver must be on the
        classpath when the JVM starts), so several writers can use the JDBC catalog; it changes nothing else."""
        if not adapter_class(family).jdbc_catalog or self.coordination is None:
            return {}
        try:
            driver = self.coordination.driver()
        except MissingArtifact:
            return {}  # the JDBC catalog names the missing driver when a race asks for it
        if "maven" not in driver:
            return {"spark.jars": ",".join(driver)}
        return {"spark.jars.packages": driver["maven"]} | ({"spark.jars.repositories": driver["repository"]}
                                                          if "repository" in driver else {})

    # --- the record ----------------------------------------------------------------------
    def environment(self) -> dict[str, Any]:
        """Versions, machine, scale, seed and every Spark and table setting: recorded with the results."""
        configs = {c.id: {"family": c.family, "mode": c.mode, "description": c.description,
                          "merges_on_read": c.merges_on_read, "settings": [vars(s) for s in self.adapter(c.id).settings()]}
                   for c in self.configs}
        host = record.host()
        return {
            "schema_version": SCHEMA_VERSION, "run_id": self.run_id,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "scale": self.scale.as_dict(), "seed": self.seed, "rounds_plan": vars(self.rounds_plan),
            "interleave": self.interleave,
            "python": host["python"], "java": self.java, "jvm": self.apps.versions() or None,
            "packages": host["packages"], "formats": record.family_status(sorted({c.family for c in self.configs}), self.resolution),
            "configs": configs, "engines": self.readers.record(),
            "spark": {"master": self.spark_options.master, "conf": self.spark_options.base_conf("<family>")},
            "machine": host["machine"], "command": host["command"],
            "workspace": str(self.workspace.root), "harness_commit": host["harness_commit"],
            "storage": self.object_store.record() if self.object_store else {"kind": LOCAL_DISK},
            "interrupted": self.interrupted,
            "like": self.like or None,  # --like: the profiled table this run replicates, at which fraction
            # several writers' catalog and lock (Iceberg's JDBC catalog, Hudi's ZooKeeper), where the run used them; the
            # single-writer scenarios keep Iceberg's Hadoop catalog and Hudi's in-process lock
            "coordination": self.coordination.record() if self.coordination else {},
            # --reuse-tables: the base tables restored from an earlier run's saved copy instead of built by this one
            "tables_adopted": list(self.tables.adopted) if self.reuse_tables else None,
        }

    def close(self) -> None:
        """Stop everything the run started: Spark and its writers, the read engines, the object-store server; and
        remove the saved table states, which no other run restores (with ``--reuse-tables`` a later run may)."""
        try:
            if not self.tables.reuse:
                self.tables.discard_saved()
        except Exception as error:  # noqa: BLE001 - a copy left behind must not keep a server running
            warnings.warn(f"cowmor: saved table states left in {self.workspace.bases_dir}: {error}", stacklevel=1)
        self.writer_pool.stop()
        self.apps.stop()
        self.readers.close()
        if self.coordination is not None:
            self.coordination.stop()
        if self.object_store is not None:
            self.object_store.stop()

    def write_json(self, name: str, payload: Any) -> Path:
        return record.write_json(self.run_dir, name, payload)


def replica_of(path: str | None, fraction: float) -> dict[str, Any]:
    """``--like PROFILE``: the replica's scale parameters, with the profile and the fraction they came from.

    Raises:
        BadOption: an unreadable profile or one that cannot be replicated (one line).
    """
    if not path:
        return {}
    import json

    from bench.inspect.replica import notes, replica_params

    try:
        profile = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise BadOption(f"--like {path}: not a profile written by `inspect -o` ({err})") from None
    params = replica_params(profile, fraction)
    return {"profile": str(path), "location": profile.get("location"), "fraction": fraction, "params": params,
            "notes": notes(profile, params)}
