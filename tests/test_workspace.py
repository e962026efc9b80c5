from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.exceptions import UnsafePath
from bench.run.workspace import MARKER, Workspace


def test_creates_and_marks(tmp_path):
    ws = Workspace(tmp_path / "ws")
    assert (ws.root / MARKER).is_file()
    table = Path(ws.warehouse) / "iceberg" / "t"
    table.mkdir(parents=True)
    (table / "f.parquet").write_bytes(b"x")
    ws.remove(table)
    assert not table.exists()


def test_refuses_a_non_empty_unmarked_directory(tmp_path):
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(UnsafePath, match="not empty"):
        Workspace(tmp_path)
    assert (tmp_path / "precious.txt").exists()


def test_refuses_root():
    with pytest.raises(UnsafePath):
        Workspace("/")


def test_refuses_paths_outside(tmp_path):
    ws = Workspace(tmp_path / "ws")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "data").write_text("x")
    for target in (outside, tmp_path, Path("/"), ws.root, ws.root / ".." / "outside"):
        with pytest.raises(UnsafePath):
            ws.remove(target)
    assert (outside / "data").exists() and ws.root.exists()


def test_refuses_symlink_pointing_out(tmp_path):
    ws = Workspace(tmp_path / "ws")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "data").write_text("x")
    link = ws.root / "link"
    os.symlink(outside, link)
    with pytest.raises(UnsafePath, match="symlink"):
        ws.remove(link)
    with pytest.raises(UnsafePath):
        ws.remove(link / "data")  # resolves outside
    assert (outside / "data").exists()


def test_removing_the_marker_revokes_ownership(tmp_path):
    ws = Workspace(tmp_path / "ws")
    (ws.root / "t").mkdir()
    (ws.root / MARKER).unlink()
    with pytest.raises(UnsafePath):
        ws.remove(ws.root / "t")


def test_a_folder_a_straggler_writes_into_while_it_is_deleted_is_deleted_again(tmp_path, monkeypatch):
    import errno
    import shutil

    from bench.run import workspace as workspace_mod

    ws = Workspace(tmp_path / "ws")
    table = tmp_path / "ws" / "warehouse" / "t"
    (table / ".hoodie" / "metadata").mkdir(parents=True)
    real, calls = shutil.rmtree, []

    def racing(path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 1:
            raise OSError(errno.ENOTEMPTY, "Directory not empty", "metadata")
        real(path, *args, **kwargs)

    monkeypatch.setattr(workspace_mod.shutil, "rmtree", racing)
    monkeypatch.setattr(workspace_mod, "_pause", lambda s: None)
    ws.remove(table)
    assert len(calls) == 2 and not table.exists()


def test_a_folder_written_into_until_the_last_attempt_names_what_was_still_written(tmp_path, monkeypatch):
    import errno

    from bench.run import workspace as workspace_mod

    ws = Workspace(tmp_path / "ws")
    table = tmp_path / "ws" / "warehouse" / "t"
    (table / ".hoodie" / ".heartbeat").mkdir(parents=True)
    (table / ".hoodie" / ".heartbeat" / "20261204203451237").write_text("")
    pauses = []

    def written(path, *args, **kwargs):
        raise OSError(errno.ENOTEMPTY, "Directory not empty", str(path))

    monkeypatch.setattr(workspace_mod.shutil, "rmtree", written)
    monkeypatch.setattr(workspace_mod, "_pause", pauses.append)
    with pytest.raises(OSError, match=r"still written there: \.hoodie/\.heartbeat/20261204203451237") as err:
        ws.remove(table)
    assert err.value.errno == errno.ENOTEMPTY and pauses == [0.5 * 2 ** n for n in range(7)]


def fake_build(ws: Workspace, file_bytes):
    """A stand-in for ``TableStates.fresh_table``: the table one file of ``file_bytes(data)`` bytes under the
    warehouse, so the room the harness asks for next follows from its measured size."""
    from types import SimpleNamespace

    def fresh(spark, fmt, name, data, **kwargs):
        location = Path(ws.warehouse) / fmt.config_id / name
        (location / "data").mkdir(parents=True)
        (location / "data" / "part-0.parquet").write_bytes(b"x" * file_bytes(data))
        return SimpleNamespace(name=name, location=str(location))

    return fresh


def test_a_base_table_that_would_fill_the_disk_is_refused_before_it_is_built(tmp_path, monkeypatch):
    """Before a table and its saved copy are built, twice the source's bytes times the table-to-source bound
    (then the configuration's last measured ratio) must be free: refused with the sizes, and nothing built."""
    from types import SimpleNamespace

    from bench.core.storage import DISK_HEADROOM
    from bench.exceptions import NotEnoughDisk
    from bench.run.tables import FIRST_TABLE_RATIO, TableStates
    from bench.workload.datagen import generate_payments

    ws = Workspace(tmp_path / "ws")
    data = generate_payments(ws.data_dir, 2, 2, 100, 1, progress=None)
    fmt = SimpleNamespace(config_id="hudi-mor", family="hudi", table_name=lambda name: name)
    free = DISK_HEADROOM + int(2 * FIRST_TABLE_RATIO * data.bytes) - 1
    monkeypatch.setattr(os, "statvfs", lambda path: SimpleNamespace(f_bavail=free, f_frsize=1))
    built = []
    tables = TableStates(ws, seed=1)
    monkeypatch.setattr(tables, "fresh_table", lambda *a, **k: built.append(a))
    with pytest.raises(NotEnoughDisk, match="hudi-mor: table payments and its saved copy needs about"):
        tables.base_table(None, fmt, "payments", data)
    assert built == []


def test_a_configurations_first_table_makes_room_for_its_familys_measured_size_not_the_upper_bound(tmp_path, monkeypatch):
    """After iceberg-cow's table came out at 0.5x its source, iceberg-mor's first table asks for that with a margin,
    twice (table and saved copy); a Hudi table still asks for the upper bound, and a configuration its own last size."""
    from types import SimpleNamespace

    from bench.run import tables as tables_module
    from bench.run.tables import FAMILY_MARGIN, FIRST_TABLE_RATIO, TableStates
    from bench.workload.datagen import generate_payments

    ws = Workspace(tmp_path / "ws")
    data = generate_payments(ws.data_dir, 2, 2, 100, 1, progress=None)
    tables = TableStates(ws, seed=1)

    fresh = fake_build(ws, lambda data: data.bytes // 2)
    asked: dict[str, int] = {}
    monkeypatch.setattr(tables, "fresh_table", fresh)
    monkeypatch.setattr(tables_module, "ensure_free",
                        lambda location, needed, purpose: asked.setdefault(purpose.split(":")[0], needed)
                        if "and its saved copy" in purpose else None)  # the table's check, not its copy's
    for config_id in ("iceberg-cow", "iceberg-mor", "hudi-mor"):
        fmt = SimpleNamespace(config_id=config_id, family=config_id.split("-")[0], table_name=lambda n: n)
        tables.base_table(None, fmt, "payments", data)
    assert asked["iceberg-cow"] == int(2 * FIRST_TABLE_RATIO * data.bytes)
    assert asked["iceberg-mor"] == int(2 * FAMILY_MARGIN * (data.bytes // 2) / data.bytes * data.bytes) < asked["iceberg-cow"]
    assert asked["hudi-mor"] == int(2 * FIRST_TABLE_RATIO * data.bytes)


def test_short_of_room_spark_s_finished_shuffle_files_go_before_any_table(tmp_path, monkeypatch):
    """The driver's garbage collection lets Spark's cleaner delete finished queries' shuffle files: where that makes
    the room, no other configuration's table is evicted; where it does not, eviction follows as before."""
    from types import SimpleNamespace

    from bench.exceptions import NotEnoughDisk
    from bench.run import tables as tables_module
    from bench.run.tables import TableStates
    from bench.workload.datagen import generate_payments

    ws = Workspace(tmp_path / "ws")
    data = generate_payments(ws.data_dir, 2, 2, 100, 1, progress=None)
    tables = TableStates(ws, seed=1)

    fresh = fake_build(ws, lambda data: 100)
    shuffle = {"held": False, "collections": 0}

    def collect():
        shuffle["collections"] += 1
        shuffle["held"] = False

    spark = SimpleNamespace(sparkContext=SimpleNamespace(_jvm=SimpleNamespace(System=SimpleNamespace(gc=collect))))

    def ensure_free(location, needed, purpose):
        if shuffle["held"] and "and its saved copy" in purpose:
            raise NotEnoughDisk(f"{purpose}: no room")

    monkeypatch.setattr(tables, "fresh_table", fresh)
    monkeypatch.setattr(tables_module, "ensure_free", ensure_free)
    formats = {c: SimpleNamespace(config_id=c, family="iceberg", table_name=lambda n: n) for c in ("iceberg-cow", "iceberg-dv")}
    tables.base_table(spark, formats["iceberg-cow"], "payments", data)
    shuffle["held"] = True  # the queries since left their shuffle files
    tables.base_table(spark, formats["iceberg-dv"], "payments", data)
    assert shuffle["collections"] == 1 and [s[0] for s in tables._bases] == ["iceberg-cow", "iceberg-dv"]
    spark.sparkContext._jvm.System.gc = lambda: None  # a collection that frees nothing: eviction as before
    shuffle["held"] = True
    monkeypatch.setattr(tables_module, "poll", lambda check, timeout, interval: check() or None)  # the wait runs out
    with pytest.raises(NotEnoughDisk, match="no room"):
        tables.base_table(spark, formats["iceberg-cow"], "other", data)
    assert [s[0] for s in tables._bases] == ["iceberg-cow"]  # its own table is never evicted


def test_a_base_table_short_of_room_evicts_other_configurations_tables_oldest_first(tmp_path, monkeypatch):
    """Saved states are a cache: where the disk is short, the oldest other configuration's table and saved copy go
    (built again if used again), never this configuration's; with nothing left to evict the refusal stands."""
    from types import SimpleNamespace

    from bench.exceptions import NotEnoughDisk
    from bench.run import tables as tables_module
    from bench.run.tables import TableStates
    from bench.workload.datagen import generate_payments

    ws = Workspace(tmp_path / "ws")
    data = generate_payments(ws.data_dir, 2, 2, 100, 1, progress=None)
    tables = TableStates(ws, seed=1)

    fresh = fake_build(ws, lambda data: 1000)
    monkeypatch.setattr(tables, "fresh_table", fresh)
    room = {"tables": 2}  # how many configurations' tables fit

    def ensure_free(location, needed, purpose):
        if len({s[0] for s in tables._bases} | {purpose.split(":")[0]}) > room["tables"]:
            raise NotEnoughDisk(f"{purpose}: no room")

    monkeypatch.setattr(tables_module, "ensure_free", ensure_free)
    formats = {c: SimpleNamespace(config_id=c, family=c.split("-")[0], table_name=lambda n: n) for c in ("iceberg-cow", "iceberg-mor", "delta-dv")}
    first = tables.base_table(None, formats["iceberg-cow"], "payments", data)
    tables.base_table(None, formats["iceberg-mor"], "payments", data)
    tables.base_table(None, formats["delta-dv"], "payments", data)
    assert [s[0] for s in tables._bases] == ["iceberg-mor", "delta-dv"]
    assert not Path(first.location).exists() and not (Path(ws.bases_dir) / "iceberg-cow").joinpath("payments").exists()
    assert (Path(ws.bases_dir) / "delta-dv" / "payments").exists()
    room["tables"] = 0
    with pytest.raises(NotEnoughDisk, match="no room"):
        tables.base_table(None, formats["iceberg-cow"], "other", data)


@pytest.mark.parametrize("each_config, expected", [(True, 4), (False, 2)])
def test_the_warm_up_runs_once_per_configuration_and_route_or_once_per_family_and_route(tmp_path, monkeypatch,
                                                                                       each_config, expected):
    """The tiny CI run takes each route's warm-up path once per family (``warm_up_each_config=0``); a measured run
    warms every configuration's own paths."""
    from types import SimpleNamespace

    from bench.run import tables as tables_module

    warmed = []
    monkeypatch.setattr(tables_module, "generate_payments", lambda *a, **k: SimpleNamespace(hotfix_keys=lambda n: [1, 2, 3]))
    monkeypatch.setattr(tables_module, "update_keys", lambda *a: "keys")
    tables = tables_module.TableStates(Workspace(tmp_path / "ws"), seed=1, warm_up_each_config=each_config)
    monkeypatch.setattr(tables, "fresh_table", lambda spark, fmt, name, data: name)
    spark = SimpleNamespace(sql=lambda q: SimpleNamespace(collect=lambda: []))
    for config_id in ("hudi-cow", "hudi-mor"):
        for route in ("join", "index"):
            for _ in range(2):
                fmt = SimpleNamespace(config_id=config_id, family="hudi", route=route, table_name=lambda n: n,
                                      relation=lambda spark, t: t,
                                      update_keys=lambda spark, t, keys, values, c=config_id, r=route: warmed.append((c, r)))
                tables.warm_up(spark, fmt)
    assert len(warmed) == expected and len(set(warmed)) == expected


def test_an_earlier_run_s_saved_table_states_are_removed_before_this_run_saves_its_own(tmp_path):
    """A saved copy is restored only by the run that saved it: one left by an earlier or killed run took 5-9 GB per
    configuration at `seed` and filled the disk under the next run."""
    from types import SimpleNamespace

    from bench.run.tables import TableStates
    from bench.workload.datagen import generate_payments

    ws = Workspace(tmp_path / "ws")
    stale = tmp_path / "ws" / "bases" / "delta-cow" / "payments"
    stale.mkdir(parents=True)
    (stale / "part-0.parquet").write_bytes(b"x" * 1000)
    data = generate_payments(ws.data_dir, 2, 2, 100, 1, progress=None)
    location = tmp_path / "ws" / "warehouse" / "payments"

    def fresh_table(spark, fmt, name, data, **kwargs):
        location.mkdir(parents=True, exist_ok=True)
        (location / "data.parquet").write_bytes(b"y" * 10)
        return SimpleNamespace(name=name, location=str(location))

    tables = TableStates(ws, seed=1)
    tables.fresh_table = fresh_table
    fmt = SimpleNamespace(config_id="hudi-cow", family="hudi", table_name=lambda name: name)
    tables.base_table(None, fmt, "payments", data)
    assert not (tmp_path / "ws" / "bases" / "delta-cow").exists()
    assert (tmp_path / "ws" / "bases" / "hudi-cow" / "payments" / "data.parquet").read_bytes() == b"y" * 10
    tables.discard_saved()  # the run's end: nobody else can restore them
    assert not (tmp_path / "ws" / "bases").exists() and location.exists()
