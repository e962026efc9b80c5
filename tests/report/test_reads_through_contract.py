"""The report reads records only through the contract's typed views (``Record.view``), never a record's raw
fields by string key: a field renamed in the contract then breaks mypy, not a chart in silence."""

from __future__ import annotations

import ast
from pathlib import Path

REPORT = Path(__file__).resolve().parents[2] / "bench" / "report"
RAW = {"info", "stats", "extra_info"}  # a Record's raw dicts and pytest-benchmark's own field


def raw_reads(source: str, name: str = "<planted>") -> list[str]:
    """Every read of a record's raw fields in ``source``, as 'file:line attribute'; a call of a method of that name
    (``logger.info(...)``) reads no field."""
    tree = ast.parse(source)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    return [f"{name}:{node.lineno} .{node.attr}" for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in RAW and id(node) not in called]


def test_the_report_never_reads_a_records_raw_fields():
    found = [hit for path in sorted(REPORT.rglob("*.py"))
             for hit in raw_reads(path.read_text(), str(path.relative_to(REPORT.parent.parent)))]
    assert not found, "read through Record.view(...) instead:\n" + "\n".join(found)


def test_a_planted_string_key_read_is_caught():
    planted = "def route(record):\n    return record.info['route']\n"
    assert raw_reads(planted) == ["<planted>:2 .info"]
    assert raw_reads("def route(record):\n    return record.view(Hotfix).route\n") == []
    assert raw_reads("def say(record):\n    logger.info('%s', record.info.get('route'))\n") == ["<planted>:2 .info"]
