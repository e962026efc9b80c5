from __future__ import annotations

import pytest

from bench.exceptions import BadOption
from bench.workload.scales import PRESETS, get_scale


def test_presets_grow_and_seed_matches_the_seed_story():
    assert PRESETS["tiny"].rows < PRESETS["small"].rows < PRESETS["medium"].rows < PRESETS["seed"].rows
    seed = PRESETS["seed"]
    assert seed.hotfix_rows == 1200 and abs(seed.files - 4800) < 100 and seed.days == 90


def test_small_has_several_hundred_files():
    assert 300 <= PRESETS["small"].files <= 1000


def test_override_applies_and_is_recorded():
    scale = get_scale("tiny", {"hotfix_rows": 5, "rounds": 1})
    assert (scale.hotfix_rows, scale.rounds) == (5, 1)
    assert scale.as_dict()["hotfix_rows"] == 5
    assert get_scale("small", {"writer_service": 0, "warm_up": 0}).writer_service == 0  # switches take 0
    assert get_scale("small", {"writer_inline_clean": 1}).writer_inline_clean == 1


@pytest.mark.parametrize("name, overrides, message", [
    ("huge", {}, "unknown scale 'huge'"),
    ("tiny", {"nope": 1}, "unknown scale parameter 'nope'"),
    ("tiny", {"rounds": 0}, "positive integer"),
    ("tiny", {"hotfix_rows": 10**9}, "exceeds"),
    ("small", {"writer_service": 2}, "a switch: 0 or 1"),
])
def test_bad_scales_fail_in_one_line(name, overrides, message):
    with pytest.raises(BadOption, match=message) as err:
        get_scale(name, overrides)
    assert "\n" not in str(err.value)


def test_the_writers_stress_variant_sets_its_values_unless_the_run_gives_them():
    realistic = get_scale("small")
    assert (realistic.writer_service_every, realistic.writer_heartbeat_ms, realistic.writer_keep_snapshots_s) == (5, 0, 300)
    stress = get_scale("small", {"writer_stress": 1})
    assert (stress.writer_service_every, stress.writer_heartbeat_ms, stress.writer_keep_snapshots_s,
            stress.writer_inline_clean) == (0, 2000, 0, 1)
    assert get_scale("small", {"writer_stress": 1, "writer_heartbeat_ms": 0}).writer_heartbeat_ms == 0  # the run's value wins
    assert get_scale("small", {"writer_service_every": 0}).writer_service_every == 0  # 0: back to back


def test_a_route_list_parameter_takes_route_names_and_keeps_what_is_selected():
    scale = get_scale("small", {"file_size_routes": "join,index"})
    assert scale.kept_routes(scale.file_size_routes, ["join", "pruned", "index"]) == ["join", "index"]
    assert scale.kept_routes(scale.file_size_routes, ["pruned"]) == ["pruned"]  # none kept: the first selected
    assert scale.kept_routes("", ["join", "pruned"]) == ["join", "pruned"]
    with pytest.raises(BadOption, match="a list of routes"):
        get_scale("small", {"memory_routes": 3})


def test_naming_the_days_is_a_control_of_the_literal_key_update_only():
    assert get_scale("small", {"writer_names_partition": 1}).writer_names_partition == 1
    with pytest.raises(BadOption, match="writer_names_partition=1 adds the days .* writer_route=join has none"):
        get_scale("small", {"writer_names_partition": 1, "writer_route": "join"})
    with pytest.raises(BadOption, match="is a switch"):
        get_scale("small", {"writer_names_partition": 2})
