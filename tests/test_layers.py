"""The package layering (each package's docstring says what it may import) holds: checked on every import
statement in bench/, and at run time for the packages that read only results/."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"

# package -> the bench packages it may import (besides itself); the layers, lowest first. ``scenarios`` is the
# scenario modules (scenarios/): they get Spark, adapters and tables through fixtures, never through run/.
ALLOWED = {
    "exceptions": set(),
    "core": {"exceptions"},
    "workload": {"exceptions", "core"},
    "formats": {"exceptions", "core"},
    "engines": {"exceptions", "core", "formats"},
    "results": {"exceptions", "core"},
    "measure": {"exceptions", "core", "workload", "formats", "engines"},
    "report": {"exceptions", "core", "results"},
    "inspect": {"exceptions", "core"},
    "servers": {"exceptions", "core"},
    "writers": {"exceptions", "core", "workload", "formats", "measure", "servers"},
    "run": {"exceptions", "core", "workload", "formats", "engines", "measure", "results", "inspect", "servers", "writers"},
    "cli": {"exceptions", "core", "workload", "results", "run", "report", "inspect"},
    "__main__": {"cli"},
    "scenarios": {"exceptions", "core", "workload", "formats", "measure", "results"},
}
# may never be imported at run time by these packages (the report renders on machines without a JVM)
NEVER = {"report": ("pyspark", "bench.formats", "bench.engines", "bench.run", "duckdb", "hudi"),
         "results": ("pyspark", "bench.formats", "bench.engines", "bench.run", "bench.report", "duckdb", "hudi")}
# may never import these anywhere in their source, not even inside a function (checked statically)
NEVER_IN_SOURCE = {**NEVER, "workload": ("pyspark",), "core": ("pyspark",), "inspect": ("pyspark",)}


def _package(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root)
    if rel.parts[0] == "scenarios":
        return "scenarios"
    rel = rel.relative_to("bench")
    return rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 or rel.name != "__init__.py" else ""


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts[:-1]) if rel.name == "__init__" else list(rel.parts)
    return ".".join(parts)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def _imports(path: Path, root: Path = ROOT) -> list[tuple[int, str, bool | None]]:
    """(line, module, at module level outside TYPE_CHECKING) for every import of ``path``: absolute, relative
    (resolved against the module's package) and ``importlib.import_module`` / ``__import__`` of a literal name; None
    marks ``pkg.name`` of ``from pkg import name``, which may be a module (followed for cycles only)."""
    tree = ast.parse(path.read_text())
    here = _module_name(path, root).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    top_level = {id(n) for n in tree.body}
    typing_only = _type_checking_lines(tree)
    out = []
    for node in ast.walk(tree):
        runtime = id(node) in top_level and node.lineno not in typing_only
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            names = [base] if base not in ("bench", "") else [f"{base}.{a.name}".lstrip(".") for a in node.names]
            out += [(node.lineno, n, runtime) for n in names]
            if runtime and base not in ("bench", ""):  # ``from pkg import mod``: the module is imported too (for cycles)
                out += [(node.lineno, f"{base}.{a.name}", None) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, runtime) for a in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and ast.unparse(node.func) in ("importlib.import_module", "__import__", "import_module"):
            out.append((node.lineno, node.args[0].value, False))
    return out


def _sources(root: Path) -> list[Path]:
    return sorted([*(root / "bench").rglob("*.py"), *(root / "scenarios").glob("*.py")])


def check_tree(root: Path = ROOT) -> list[str]:
    """Every layering violation under ``root`` (bench/ and scenarios/): imports across the layers, a module a package
    must never load, and import cycles between modules at run time."""
    broken = []
    graph: dict[str, set[str]] = {}
    for path in _sources(root):
        package = _package(path, root)
        if not package:
            continue
        allowed = ALLOWED.get(package, set()) | {package}
        where = path.relative_to(root)
        graph.setdefault(_module_name(path, root), set())
        for line, module, runtime in _imports(path, root):
            if runtime is None:
                graph[_module_name(path, root)].add(module)
                continue
            if module.startswith("bench.") or module == "bench":
                target = module.split(".")[1] if "." in module else ""
                if target and target not in allowed:
                    broken.append(f"{where}:{line} ({package}) imports {module}")
                if runtime:
                    graph[_module_name(path, root)].add(module)
            if any(module == n or module.startswith(f"{n}.") for n in NEVER_IN_SOURCE.get(package, ())):
                broken.append(f"{where}:{line} ({package}) must never import {module}")
    broken += [f"import cycle: {' -> '.join(c)}" for c in _cycles(graph)]
    return broken


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles among the modules' run-time imports (an import of a package counts as its ``__init__``)."""
    found, state = [], {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                found.append(trail[trail.index(nxt):] + [nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    return found


def test_every_import_respects_the_layers():
    broken = check_tree()
    assert not broken, "layering violations:\n" + "\n".join(broken)


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


PLANTED = {
    "a module-level pyspark import in workload/": ("bench/workload/planted.py", "import pyspark\n", "must never import pyspark"),
    "importlib.import_module of a format inside a report function": (
        "bench/report/planted.py", "import importlib\n\n\ndef f():\n    return importlib.import_module('bench.formats.iceberg')\n",
        "(report) imports bench.formats.iceberg"),
    "a relative import from report/ into run/": ("bench/report/planted.py", "from ..run import lab\n", "(report) imports bench.run"),
    "a relative import from report/ into engines/": ("bench/report/sections/planted.py", "from ...engines import base\n",
                                                      "(report) imports bench.engines"),
    "a scenario importing run/": ("scenarios/test_planted.py", "from bench.run.plugin import SESSION_KEY\n",
                                  "(scenarios) imports bench.run.plugin"),
    "an import cycle": ("bench/core/planted.py", "from bench.core import planted_b\n", "import cycle: bench.core.planted"),
}


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_every_kind_of_planted_violation_is_caught(kind, tmp_path):
    """The real check, run on a copy of the tree with one violation planted: it names it (and the clean copy passes)."""
    copy = tmp_path / "tree"
    shutil.copytree(BENCH, copy / "bench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "scenarios", copy / "scenarios", ignore=shutil.ignore_patterns("__pycache__"))
    assert check_tree(copy) == []
    relative, text, expected = PLANTED[kind]
    (copy / relative).write_text(text)
    if kind == "an import cycle":
        (copy / "bench/core/planted_b.py").write_text("from bench.core import planted\n")
    broken = check_tree(copy)
    assert any(expected in b for b in broken), broken


def test_every_package_of_the_harness_is_installed_by_pip():
    """``pip install .`` ships the packages pyproject lists: a package left out (a new one) breaks its commands
    for every user who installs rather than clones."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(root).parts) for p in (root / "bench").rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)
