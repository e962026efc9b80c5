"""Tables in a known state: created once per run and configuration from the base data, then restored in place.

A table folder is saved right after creation and copied back before each later use, so every round starts from
byte-identical files; neither step is ever inside a timed region. With ``--reuse-tables`` the saved copies outlive
the run, each beside what it was built from (``built_from``), and a later run that would build the same table from
the same things restores the copy instead (at `seed` a Hudi table takes 23 minutes to build).
"""

from __future__ import annotations

import functools
import gc
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.core.ledger import LEDGER, RESET, SETUP, WARM_UP
from bench.core.storage import Files, ensure_free, is_local
from bench.core.units import human_bytes
from bench.exceptions import NotEnoughDisk
from bench.measure.locate import update_keys
from bench.run.workspace import Workspace
from bench.servers.daemons import poll
from bench.workload.datagen import PaymentsData, generate_payments

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from bench.formats.base import TableFormat, TableRef


# a table's bytes per byte of its Parquet source, until the run has built one of the family: an upper bound (at
# `seed`, Hudi's table is 1.5x its source, with its meta columns and a bloom filter in every file; Iceberg's 0.9x)
FIRST_TABLE_RATIO = 2.0
# a configuration's first table, after another of its family was built from the same data: that table's ratio with
# this margin (one family writes the same files whatever the configuration; a bound twice the real size refused an
# Iceberg table at `seed` with room for it)
FAMILY_MARGIN = 1.25


# what a saved table depends on besides its data and settings: the code that builds and prepares it
CODE_DIRS = ("bench", "scenarios")


@functools.cache
def code_digest(root: Path = Path(__file__).resolve().parents[2]) -> str:
    """sha256 over the harness's and the scenarios' Python sources: any edit makes every saved table a stranger."""
    digest = hashlib.sha256()
    for path in sorted(p for d in CODE_DIRS for p in (root / d).rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def built_from(fmt: TableFormat, name: str, label: str, source: str, columns: tuple[str, str, str], seed: int,
               identity: dict[str, Any]) -> dict[str, Any]:
    """Everything a base table's files follow from: configuration, place, source files (names and sizes), key
    columns, every table setting, the seed, and the run's ``identity`` (the jars, Spark's SQL settings, the code).
    Two runs with equal dicts build byte-for-byte the same table, so one may restore the other's saved copy."""
    files = Files.of(source).walk() if Files.of(source).exists() else {}
    return {"config": fmt.config_id, "table": name, "state": label, "location": fmt.location(name), "source": source,
            "source_files": hashlib.sha256(json.dumps(sorted(files.items())).encode()).hexdigest(),
            "columns": list(columns), "seed": seed,
            "settings": sorted(f"{s.scope}:{s.key}={s.value}" for s in [*fmt.settings(), *fmt.route_settings()]),
            **identity}


def local_bytes(location: str) -> int:
    """The bytes under ``location`` on a local disk (0 on an object store: nothing there to run out of, and a
    listing costs requests)."""
    return sum(Files.of(location).walk().values()) if is_local(location) else 0


@dataclass
class TableStates:
    workspace: Workspace
    seed: int
    warm_up_enabled: bool = True
    warm_up_each_config: bool = True  # False: once per family and route
    _warm: set[tuple[str, str]] = field(default_factory=set)
    _bases: dict[tuple[str, str, str], tuple[TableRef, str]] = field(default_factory=dict)
    _table_ratio: dict[tuple[str, str], float] = field(default_factory=dict)  # per (family, configuration): its last
    # table's bytes per source byte
    _stale_discarded: bool = False
    # where progress lines go (the run's progress fixture sets it): a base table at `seed` takes tens of minutes
    say: Callable[[str], None] = field(default=lambda message: None)
    # --reuse-tables: keep the saved copies after the run, and restore an earlier run's copy where it was built from
    # the same things (``built_from``; ``identity`` gives the run's part of it per configuration)
    reuse: bool = False
    identity: Callable[[TableFormat], dict[str, Any]] = field(default=lambda fmt: {})
    adopted: list[str] = field(default_factory=list)  # "<configuration>/<table>[@state]" restored from earlier runs

    def fresh_table(self, spark: SparkSession, fmt: TableFormat, name: str, data: PaymentsData | str,
                    key: str = "txn_id", partition_by: str = "settled_date", ordering: str = "created_at") -> TableRef:
        """Drop ``name`` (through the workspace) and create it again from the base data (a Parquet folder).

        Raises:
            RuntimeError: the location still lists after its files were deleted (a create there would fail or
                find the old table).
        """
        location = Files.of(fmt.location(name))
        if location.exists():
            self.workspace.remove(location.uri)
            if location.exists():
                raise RuntimeError(f"{location}: still lists after its files were deleted (an object store that keeps "
                                   f"emptied folders for a while?); table {name} cannot be made there again")
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
        name = fmt.table_name(name)
        state = (fmt.config_id, name, prepare[0] if prepare else "")
        saved = self._bases.get(state)
        if saved is not None and saved[1] == source:
            with LEDGER.spend(RESET):
                self.restore(spark, fmt, saved[0], state[2])
            return saved[0]
        columns = (key, partition_by, ordering)
        with LEDGER.spend(SETUP):
            origin = built_from(fmt, name, state[2], source, columns, self.seed, self.identity(fmt)) if self.reuse else None
            adopted = self._adopt(spark, fmt, name, state[2], origin, columns) if origin else None
            if adopted is not None:
                self._bases[state] = (adopted, source)
                return adopted
            if prepare:
                table = self.base_table(spark, fmt, name, data, key=key, partition_by=partition_by, ordering=ordering)
                prepare[1](table)
            else:
                if not self._stale_discarded and not self.reuse:
                    self.discard_saved()  # an earlier (or killed) run's copies, before this run needs the room
                source_bytes = data.bytes if isinstance(data, PaymentsData) else local_bytes(source)
                self._make_room(self.workspace.warehouse, int(2 * self._expected_ratio(fmt) * source_bytes),
                                f"{fmt.config_id}: table {name} and its saved copy", fmt.config_id, spark)
                self.say(f"{fmt.config_id}: building table {name} from {human_bytes(source_bytes)} of source data "
                         "(once per run; restored byte-identical after)")
                table = self.fresh_table(spark, fmt, name, data, key=key, partition_by=partition_by, ordering=ordering)
            size = local_bytes(table.location)
            built = human_bytes(size) if is_local(table.location) else "on the object store, not listed"
            self.say(f"{fmt.config_id}: table {name} built ({built}); saving its copy")
            if not prepare and is_local(table.location):
                self._table_ratio[(fmt.family, fmt.config_id)] = size / max(1, source_bytes)
            snapshot = self._snapshot(fmt, name, state[2])
            self._remove(self._origin_file(snapshot), snapshot)  # an older copy's record goes with it, before the copy
            self._make_room(self.workspace.bases_dir, size, f"{fmt.config_id}: the saved copy of {name}", fmt.config_id,
                            spark)
            Files.of(table.location).copy_tree(snapshot)
            if origin is not None:  # written last: a copy cut short by a failure has none, and is never adopted
                self._origin_file(snapshot).write_text(json.dumps(origin, indent=1, sort_keys=True))
        self._bases[state] = (table, source)
        return table

    def _expected_ratio(self, fmt: TableFormat) -> float:
        """The table's bytes per source byte to make room for: the configuration's last table's; else its family's
        largest with a margin; else the upper bound."""
        family = fmt.family
        if (family, fmt.config_id) in self._table_ratio:
            return self._table_ratio[(family, fmt.config_id)]
        siblings = [ratio for (f, _), ratio in self._table_ratio.items() if f == family]
        return min(FIRST_TABLE_RATIO, FAMILY_MARGIN * max(siblings)) if siblings else FIRST_TABLE_RATIO

    @staticmethod
    def _origin_file(snapshot: Files) -> Files:
        return snapshot.parent / f"{snapshot.name}.built-from.json"

    def _adopt(self, spark: SparkSession, fmt: TableFormat, name: str, label: str, origin: dict[str, Any],
               columns: tuple[str, str, str]) -> TableRef | None:
        """An earlier run's saved copy of this state, restored in place, where it was built from ``origin``."""
        from bench.formats.base import TableRef

        snapshot = self._snapshot(fmt, name, label)
        recorded = self._origin_file(snapshot)
        if not (snapshot.exists() and recorded.exists()):
            return None
        try:
            if json.loads(recorded.read_text()) != json.loads(json.dumps(origin)):
                return None
        except ValueError:
            return None
        table = TableRef(name, fmt.location(name), *columns)
        self.restore(spark, fmt, table, label)
        fmt.attach(spark, table)
        tag = f"{fmt.config_id}/{name}" + (f"@{label}" if label else "")
        self.adopted.append(tag)
        self.say(f"{tag}: restored the copy an earlier run saved (same data, settings, jars and code), not built again")
        return table

    def _earlier_copies(self) -> list[Files]:
        """Saved states on disk that this run has neither made nor adopted (``--reuse-tables``)."""
        bases = Files.of(self.workspace.bases_dir)
        mine = {str(self._snapshot_of(*state)) for state in self._bases}
        found = [copy for folder in (bases.iterdir() if bases.exists() else []) if folder.is_dir()
                 for copy in folder.iterdir() if not copy.name.endswith(".json") and str(copy) not in mine]
        return sorted(found, key=str)

    def _make_room(self, location: str, needed: int, purpose: str, config_id: str,
                   spark: SparkSession | None = None) -> None:
        """Make sure ``needed`` bytes are free under ``location``: first by removing an earlier run's saved copies
        nothing here asked for, then by having Spark delete the shuffle files of its finished queries, then by
        evicting other configurations' tables and saved states, oldest first (they are a cache, and an evicted one is built again when it is used again; at `seed` each takes 10 GB, so five
        configurations in one run fill a 60 GB disk).

        Raises:
            NotEnoughDisk: still too little room with every other configuration's tables gone.
        """
        released = False
        while True:
            try:
                ensure_free(location, needed, purpose)
                return
            except NotEnoughDisk:
                earlier = self._earlier_copies()
                if earlier:  # an earlier run's copy that nothing here has asked for goes first
                    self._remove(self._origin_file(earlier[0]), earlier[0])
                    continue
                if spark is not None and not released:
                    released = True
                    self._release_shuffle_files(spark, location, needed, purpose)
                    continue
                others = [state for state in self._bases if state[0] != config_id]
                if not others:
                    raise
                self._evict(others[0][0])

    def _release_shuffle_files(self, spark: SparkSession, location: str, needed: int, purpose: str,
                               wait_s: float = 10.0) -> None:
        """Spark keeps every finished query's shuffle files on local disk until its driver's garbage collector drops
        the query; its cleaner then deletes them. At `seed` an Iceberg application's MERGEs through a join left about
        38 GB that no table accounted for (the room still missing once every other table was evicted), and a table
        was refused: collect (Python's references to the plans
        first), then give the cleaner ``wait_s`` to delete. Never inside a timed region: only a table build asks."""
        self.say(f"{purpose}: short of room; releasing Spark's finished shuffle files")
        gc.collect()
        spark.sparkContext._jvm.System.gc()  # type: ignore[union-attr]

        def room() -> bool:
            try:
                ensure_free(location, needed, purpose)
                return True
            except NotEnoughDisk:
                return False

        poll(room, wait_s, 0.5)

    def _remove(self, *files: Files) -> None:
        """Remove each of ``files`` that exists, through the workspace (the only place anything is deleted)."""
        for each in files:
            if each.exists():
                self.workspace.remove(each.uri)

    def _evict(self, config_id: str) -> None:
        """Remove every table and saved state of ``config_id`` this run made."""
        for state in [s for s in self._bases if s[0] == config_id]:
            table, _ = self._bases.pop(state)
            snapshot = self._snapshot_of(config_id, state[1], state[2])
            self._remove(Files.of(table.location), snapshot, self._origin_file(snapshot))
        self.say(f"{config_id}'s tables and saved states removed to make room (built again if used again)")

    def discard_saved(self) -> None:
        """Remove every saved table state. A copy is restored only by the run that saved it (``_bases`` lives in
        memory), so one left by an earlier or a killed run is disk taken for nothing: 5-9 GB per configuration at
        `seed`, enough to fill a disk across two runs."""
        self._remove(Files.of(self.workspace.bases_dir))
        self._bases.clear()
        self._stale_discarded = True

    def restore(self, spark: SparkSession, fmt: TableFormat, table: TableRef, label: str = "") -> None:
        """Put a saved state of ``table`` back in place and drop every cache that remembers the old one."""
        self._remove(Files.of(table.location))
        self._snapshot(fmt, table.name, label).copy_tree(Files.of(table.location))
        fmt.forget_cached_state(spark, table)
        spark.catalog.clearCache()

    def keep(self, fmt: TableFormat, table: TableRef, label: str) -> None:
        """Save ``table``'s state now as ``label``, replacing an earlier one:
        what ``bring_back`` puts in place again, once."""
        with LEDGER.spend(RESET):
            snapshot = self._snapshot(fmt, table.name, label)
            self._remove(snapshot)
            Files.of(table.location).copy_tree(snapshot)

    def bring_back(self, spark: SparkSession, fmt: TableFormat, table: TableRef, label: str) -> None:
        """Put the state ``keep`` saved as ``label`` back in place, and remove the saved state."""
        with LEDGER.spend(RESET):
            self.restore(spark, fmt, table, label)
            self._remove(self._snapshot(fmt, table.name, label))

    def drop(self, spark: SparkSession, fmt: TableFormat, name: str) -> None:
        """Remove table ``name`` and every saved state of it (a step whose tables are no longer needed)."""
        name = fmt.table_name(name)
        self._remove(Files.of(fmt.location(name)))
        folder = Files.of(self.workspace.bases_dir) / fmt.config_id
        for saved in folder.iterdir() if folder.exists() else ():
            if saved.name in (name, f"{name}.built-from.json") or saved.name.startswith(f"{name}@"):
                self.workspace.remove(saved.uri)
        for state in [s for s in self._bases if s[0] == fmt.config_id and s[1] == name]:
            del self._bases[state]
        fmt.forget_cached_state(spark)
        spark.catalog.clearCache()

    def _snapshot(self, fmt: TableFormat, name: str, label: str = "") -> Files:
        return self._snapshot_of(fmt.config_id, name, label)

    def _snapshot_of(self, config_id: str, name: str, label: str = "") -> Files:
        return Files.of(self.workspace.bases_dir) / config_id / (f"{name}@{label}" if label else name)

    def warm_up(self, spark: SparkSession, fmt: TableFormat) -> None:
        """Pay the JVM's first-create/first-merge cost (5-8 s) and each configuration's own first write and read
        paths (deletion vectors, delete files, logs) outside any measurement: once per configuration and route, or
        once per family and route (``warm_up_each_config=0``: every route's warm-up path, for the tiny CI run)."""
        done = (fmt.config_id if self.warm_up_each_config else fmt.family, fmt.route)
        if done in self._warm or not self.warm_up_enabled:
            return
        with LEDGER.spend(WARM_UP):
            data = generate_payments(self.workspace.data_dir, 2, 1, 200, self.seed, progress=None)
            table = self.fresh_table(spark, fmt, fmt.table_name("warmup"), data)
            keys = update_keys(spark, fmt.route, "warmup_keys", data.hotfix_keys(3)[:1], data)
            fmt.update_keys(spark, table, keys, {"status": "'WARM'"})  # the route's own path
            spark.sql(f"SELECT status, count(*) FROM {fmt.relation(spark, table)} GROUP BY status").collect()
        self._warm.add(done)
