"""--reuse-tables: a base table's saved copy outlives its run, and a later run restores it instead of building the
table again only where everything the table follows from is the same (on real folders; the formats are fakes)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from bench.run.tables import TableStates, code_digest
from bench.run.workspace import Workspace
from bench.workload.datagen import generate_payments


class FakeFormat:
    """What TableStates asks of a format: its names, its settings, and attaching a table it did not create."""

    def __init__(self, ws: Workspace, setting: str = "snappy") -> None:
        self.config_id, self.family, self.route, self.ws, self.setting = "hudi-mor", "hudi", "pruned", ws, setting
        self.attached: list[str] = []

    def table_name(self, name: str) -> str:
        return name

    def location(self, name: str) -> str:
        return str(Path(self.ws.warehouse) / "hudi" / name)

    def settings(self) -> list[SimpleNamespace]:
        return [SimpleNamespace(scope="write", key="hoodie.parquet.compression.codec", value=self.setting)]

    def route_settings(self) -> list[SimpleNamespace]:
        return []

    def attach(self, spark, table) -> None:
        self.attached.append(table.name)

    def forget_cached_state(self, spark, table=None) -> None:
        pass


SPARK = SimpleNamespace(catalog=SimpleNamespace(clearCache=lambda: None))
IDENTITY = {"jars": {"hudi.jar": "abc"}, "code": "c1", "spark_sql": {"spark.sql.shuffle.partitions": "8"}}


def states(ws: Workspace, built: list[str], identity: dict | None = None, reuse: bool = True) -> TableStates:
    """A run's table states whose tables are 'built' by writing a file (and counted)."""
    tables = TableStates(ws, seed=1, reuse=reuse, identity=lambda fmt: identity or IDENTITY)

    def fresh_table(spark, fmt, name, data, **kwargs):
        location = Path(fmt.location(name))
        location.mkdir(parents=True, exist_ok=True)
        (location / f"part-{len(built)}.parquet").write_bytes(b"x" * (100 + len(built)))
        built.append(name)
        return SimpleNamespace(name=name, location=str(location))

    tables.fresh_table = fresh_table  # type: ignore[method-assign]
    return tables


@pytest.fixture()
def ws(tmp_path) -> Workspace:
    return Workspace(tmp_path / "ws")


@pytest.fixture()
def data(ws):
    return generate_payments(ws.data_dir, 2, 2, 100, 1, progress=None)


def test_a_later_run_restores_the_copy_instead_of_building_the_table(ws, data):
    built: list[str] = []
    first = states(ws, built)
    table = first.base_table(SPARK, FakeFormat(ws), "payments", data)
    files = sorted(p.name for p in Path(table.location).iterdir())
    Path(table.location, files[0]).write_bytes(b"changed by a round")  # the run's rounds leave the table changed

    later, fmt = states(ws, built), FakeFormat(ws)
    adopted = later.base_table(SPARK, fmt, "payments", data)
    assert built == ["payments"], "built once, by the first run"
    assert later.adopted == ["hudi-mor/payments"] and fmt.attached == ["payments"]
    assert sorted(p.name for p in Path(adopted.location).iterdir()) == files
    assert Path(adopted.location, files[0]).read_bytes() == b"x" * 100, "the saved copy, not the changed table"
    assert (adopted.key, adopted.partition_by, adopted.ordering) == ("txn_id", "settled_date", "created_at")


@pytest.mark.parametrize("differs", ["setting", "jars", "code", "source", "seed"])
def test_a_copy_built_from_anything_else_is_never_restored(ws, data, differs):
    built: list[str] = []
    states(ws, built).base_table(SPARK, FakeFormat(ws), "payments", data)
    identity = {**IDENTITY, **({"jars": {"hudi.jar": "def"}} if differs == "jars" else {}),
                **({"code": "c2"} if differs == "code" else {})}
    later = states(ws, built, identity)
    if differs == "seed":
        later.seed = 2
    source = generate_payments(ws.data_dir, 2, 2, 101, 1, progress=None) if differs == "source" else data
    later.base_table(SPARK, FakeFormat(ws, "zstd" if differs == "setting" else "snappy"), "payments", source)
    assert built == ["payments", "payments"] and later.adopted == []


def test_a_copy_without_what_it_was_built_from_is_never_restored(ws, data):
    """The record of what a copy was built from is written after the copy: a copy cut short has none."""
    built: list[str] = []
    states(ws, built).base_table(SPARK, FakeFormat(ws), "payments", data)
    origin = Path(ws.bases_dir) / "hudi-mor" / "payments.built-from.json"
    origin.unlink()
    later = states(ws, built)
    later.base_table(SPARK, FakeFormat(ws), "payments", data)
    assert built == ["payments", "payments"] and later.adopted == [] and origin.exists()


def test_without_the_option_no_copy_is_kept_for_later_runs(ws, data):
    built: list[str] = []
    tables = states(ws, built, reuse=False)
    tables.base_table(SPARK, FakeFormat(ws), "payments", data)
    assert not list(Path(ws.bases_dir).rglob("*.built-from.json"))
    tables.discard_saved()  # what the session's close does without --reuse-tables
    assert not Path(ws.bases_dir).exists() or not any(Path(ws.bases_dir).iterdir())


def test_short_of_room_an_earlier_run_s_copy_nothing_asked_for_goes_first(ws, data, monkeypatch):
    from bench.exceptions import NotEnoughDisk
    from bench.run import tables as tables_module

    built: list[str] = []
    states(ws, built).base_table(SPARK, FakeFormat(ws), "orders", data)
    earlier = Path(ws.bases_dir) / "hudi-mor" / "orders"
    later = states(ws, built)

    def ensure_free(location, needed, purpose):
        if earlier.exists():
            raise NotEnoughDisk(f"{purpose}: no room")

    monkeypatch.setattr(tables_module, "ensure_free", ensure_free)
    later.base_table(SPARK, FakeFormat(ws), "payments", data)
    assert built == ["orders", "payments"] and not earlier.exists()
    assert not (Path(ws.bases_dir) / "hudi-mor" / "orders.built-from.json").exists()


def test_the_code_digest_follows_every_source_file(tmp_path):
    for folder in ("bench", "scenarios"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.py").write_text("x = 1\n")
    before = code_digest(tmp_path)
    (tmp_path / "scenarios" / "a.py").write_text("x = 2\n")
    assert code_digest.__wrapped__(tmp_path) != before


def test_a_copy_cut_short_over_an_older_one_keeps_no_older_record(ws, data, monkeypatch):
    """Building over an older copy removes that copy's record first: a copy cut short there can never be taken for
    the older table it replaced."""
    from bench.core.storage import Files

    built: list[str] = []
    states(ws, built).base_table(SPARK, FakeFormat(ws), "payments", data)  # settings A, with its record

    def cut_short(self, target):
        Path(target.path).mkdir(parents=True)
        (Path(target.path) / "part-0.parquet").write_bytes(b"half")  # some files copied, then the disk filled
        raise OSError("disk full (simulated, mid-copy)")

    monkeypatch.setattr(Files, "copy_tree", cut_short)
    with pytest.raises(OSError):
        states(ws, built).base_table(SPARK, FakeFormat(ws, "zstd"), "payments", data)  # settings B, cut short
    monkeypatch.undo()
    later = states(ws, built)
    later.base_table(SPARK, FakeFormat(ws), "payments", data)  # settings A again: built, not the cut-short copy
    assert built == ["payments"] * 3 and later.adopted == []
