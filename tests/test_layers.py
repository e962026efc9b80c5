"""The package layering (each package's docstring says what it may import) holds: checked on every import
statement in bench/, and at run time for the packages that read only results/."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"

# package -> the bench packages it may import (besides itself); the layers, lowest first
ALLOWED = {
    "exceptions": set(),
    "core": {"exceptions"},
    "workload": {"exceptions", "core"},
    "formats": {"exceptions", "core"},
    "engines": {"exceptions", "core", "formats"},
    "results": {"exceptions", "core"},
    "measure": {"exceptions", "core", "workload", "formats", "engines"},
    "report": {"exceptions", "core", "results"},
    "run": {"exceptions", "core", "workload", "formats", "engines", "measure", "results"},
    "cli": {"exceptions", "core", "workload", "results", "run", "report"},
    "__main__": {"cli"},
}
# may never be imported at run time by these packages (the report renders on machines without a JVM)
NEVER = {"report": ("pyspark", "bench.formats", "bench.engines", "bench.run", "duckdb", "hudi"),
         "results": ("pyspark", "bench.formats", "bench.engines", "bench.run", "bench.report", "duckdb", "hudi")}


def _package(path: Path) -> str:
    rel = path.relative_to(BENCH)
    return rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 or rel.name != "__init__.py" else ""


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bench"):
            names = [node.module] if node.module != "bench" else [f"bench.{a.name}" for a in node.names]
            out += [(node.lineno, n) for n in names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("bench")]
    return out


def test_every_import_respects_the_layers():
    broken = []
    for path in sorted(BENCH.rglob("*.py")):
        package = _package(path)
        if not package:
            continue
        allowed = ALLOWED[package] | {package}
        for line, module in _imports(path):
            target = module.split(".")[1] if "." in module else ""
            if target and target not in allowed:
                broken.append(f"{path.relative_to(BENCH.parent)}:{line} ({package}) imports {module}")
    assert not broken, "imports across the layers:\n" + "\n".join(broken)


def test_every_package_says_what_it_may_import():
    for init in BENCH.glob("*/__init__.py"):
        assert "May import" in (ast.get_docstring(ast.parse(init.read_text())) or ""), init


def test_the_layer_table_covers_every_package():
    found = {_package(p) for p in BENCH.rglob("*.py")} - {""}
    assert found <= set(ALLOWED), found - set(ALLOWED)


@pytest.mark.parametrize("package", sorted(NEVER))
def test_result_readers_never_load_spark_nor_the_formats(package):
    modules = sorted(p.relative_to(BENCH.parent).with_suffix("").as_posix().replace("/", ".")
                     for p in (BENCH / package).rglob("*.py"))
    code = (f"import importlib, sys; [importlib.import_module(m) for m in {modules!r}]; "
            f"bad = sorted(m for m in sys.modules if m.startswith({NEVER[package]!r})); print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{package} loaded {done.stdout.strip()} {done.stderr[-500:]}"


def test_the_layer_check_would_catch_a_crossing(tmp_path):
    """The checker is not vacuous: a report module importing a format is flagged."""
    bad = tmp_path / "x.py"
    bad.write_text("from bench.formats import CONFIGS\n")
    assert _imports(bad) == [(1, "bench.formats")] and "formats" not in ALLOWED["report"]
    importlib.import_module("bench.results.contract")
