"""`report --table`'s memory lines, read from the reference memory search at the seeds' size: what each configuration
needed on the measured table nearest the user's, how far the user's table lies beyond it, and the warnings."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from bench.report.model import parse_table
from bench.report.sections.memory import needed_for
from bench.results.contract import Run, load_run

SEED_SEARCH = Path(__file__).resolve().parents[2] / "results" / "reference" / "memory-seed-pruned-m1"


@pytest.fixture(scope="module")
def search() -> Run:
    return load_run(SEED_SEARCH)


def _on_machine(run: Run, memory_bytes: int) -> Run:
    """The same records, as if measured on a machine with ``memory_bytes``."""
    data = copy.deepcopy(run.data)
    data["cowmor"]["environment"]["machine"]["memory_bytes"] = memory_bytes
    return Run(run.path, data)


def test_a_table_like_the_seeds_gets_what_each_configuration_needed_there_and_no_warning(search):
    lines = needed_for(parse_table("orders:files=4770,file_mb=1.3,rows_per_update=1200,route=pruned"), search)
    assert "memory delta-cow (pruned): needs 768 MB, measured on 4,770 files of 1.28 MB" in lines
    assert "memory iceberg-mor (pruned): needs 512 MB, measured on 4,770 files of 1.28 MB" in lines
    assert not any("beyond" in line or line.startswith("warning") for line in lines)


def test_a_table_far_beyond_the_measured_ones_is_not_predicted_and_says_how_to_measure_it(search):
    lines = needed_for(parse_table("orders:files=200000,file_mb=1.3,rows_per_update=1200,route=pruned"), search)
    delta = next(line for line in lines if line.startswith("memory delta-cow"))
    assert "your table is 41.9x beyond it: not predicted, measure a replica" in delta


def test_large_files_take_the_largest_file_step_as_their_nearest_table(search):
    lines = needed_for(parse_table("orders:files=4,file_mb=64,rows_per_update=4,route=pruned"), search)
    assert "memory delta-cow (pruned): needs 512 MB, measured on 4 files of 65.9 MB" in lines


def test_a_need_beyond_the_machine_warns_only_for_the_configurations_that_pass_it(search):
    small_machine = _on_machine(search, 600 * 2**20)
    lines = needed_for(parse_table("orders:files=4770,file_mb=1.3,rows_per_update=1200,route=pruned"), small_machine)
    warned = sorted(line.split()[1] for line in lines if line.startswith("warning"))
    assert warned == ["delta-cow", "delta-dv"]


def test_a_search_that_never_completed_warns_that_it_needs_more(search):
    data = copy.deepcopy(search.data)
    for b in data["benchmarks"]:
        info = b["extra_info"]
        if info.get("config_id") == "iceberg-cow":
            info["attempts"] = [{**a, "completed": False, "out_of_memory": True} for a in info["attempts"]]
            info.update(needed_mb=None, more_than_ladder=True)
    lines = needed_for(parse_table("orders:files=4770,file_mb=1.3,rows_per_update=1200,route=pruned"),
                       Run(search.path, data))
    assert "warning: iceberg-cow did not complete with the most memory tried; it needs more" in lines
    assert "memory iceberg-cow (pruned): needs more than 8,192 MB, measured on 4,770 files of 1.28 MB" in lines


def test_a_route_no_search_measured_says_so(search):
    lines = needed_for(parse_table("orders:files=4770,file_mb=1.3,rows_per_update=1200,route=join"), search)
    assert lines == ["memory: no run searched the memory an update needs on the join route "
                     "(scenarios/test_memory_needed.py)"]
