"""Copy-on-write ÷ merge-on-read per route (bench/report/locate.py): which updates are paired."""

from __future__ import annotations

from bench.report.locate import Located, ratios
from bench.results.contract import FILE_SIZE, Matrix


def _update(config_id: str, seconds: list[float], layout: str) -> Located:
    return Located(FILE_SIZE, "0.34MB", config_id, "join", seconds, 8, 8, 1, 1000, 100, True, None, layout)


def test_two_layouts_of_one_file_size_are_two_ratios_never_one_over_the_other():
    """Runs of the preset's layout (2 of 4 files touched) and another (1 of 8) measure the same file sizes: merged,
    each layout keeps its own ratio, each from its own updates."""
    items = [_update("iceberg-cow", [4.0, 4.2], "2 of 4 files"), _update("iceberg-mor", [2.0, 2.1], "2 of 4 files"),
             _update("iceberg-cow", [3.0, 3.1], "1 of 8 files"), _update("iceberg-mor", [3.0, 3.1], "1 of 8 files")]
    by_layout = {r.layout: r for r in ratios(items, Matrix.from_ids(["iceberg-cow", "iceberg-mor"]))}
    assert set(by_layout) == {"2 of 4 files", "1 of 8 files"}
    assert by_layout["2 of 4 files"].ratio == 4.1 / 2.05
    assert by_layout["1 of 8 files"].ratio == 1.0
    assert by_layout["1 of 8 files"].step == "0.34MB (1 of 8 files)"
