"""The reference set: every run as it was added and valid, every figure in the docs as the runs give it; and the
checks themselves fail on a planted fault (an edited run file, an unlisted folder, a figure typed by hand)."""

from __future__ import annotations

import json
import shutil

import pytest

from bench.cli import ROOT, doc_files
from bench.exceptions import BadRecord
from bench.report import figures
from bench.results import reference


def test_every_reference_run_holds_the_contract_and_is_as_it_was_added():
    assert reference.check() == []


def test_every_figure_in_the_readme_and_docs_is_what_the_reference_runs_give():
    assert figures.drift(doc_files()) == []


def test_every_figure_block_explains_in_a_page_and_its_grid_is_whole_in_its_csv():
    """A block holds at most 25 table rows and 8 KB, no line over 400 characters and no machine's path; the whole grid
    of each figure is its CSV under docs/figures/, as the reference runs give it."""
    for path in doc_files():
        for m in figures.MARKER.finditer(path.read_text()):
            body = m.group("body")
            assert figures.fits(body), (path, m.group("name"), len(body.encode()))
            assert "--warehouse" not in body and "/work/" not in body and "/home/" not in body, (path, m.group("name"))
    assert figures.grid_drift(doc_files(), ROOT / figures.GRIDS_DIR) == []


def test_a_figure_quoted_in_prose_and_edited_by_hand_fails_the_check(tmp_path):
    from bench.report import values

    quoted = values.value("seed-index-hudi-cow-files-replaced")
    doc = tmp_path / "page.md"
    doc.write_text(f"it rewrote the <!-- value:seed-index-hudi-cow-files-replaced -->{quoted}<!-- /value --> files\n")
    assert figures.drift([doc]) == []
    doc.write_text(doc.read_text().replace(quoted, quoted[:-1] + str((int(quoted[-1]) + 1) % 10)))
    assert figures.drift([doc]) == [f"{doc}: value seed-index-hudi-cow-files-replaced is not what run "
                                    "hotfix-seed-hudi-cow-index-m1 records (run `make docs`)"]
    doc.write_text(figures.rewrite(doc.read_text()))
    assert figures.drift([doc]) == [] and quoted in doc.read_text()


def test_every_figure_a_manifest_line_backs_exists_and_every_doc_figure_is_known():
    for entry in reference.load_manifest():
        assert set(entry.backs) <= figures.BACKABLE, entry.run_id
    named = {m.group("name") for path in doc_files() for m in figures.MARKER.finditer(path.read_text())}
    assert named <= set(figures.FIGURES) | set(figures.ACROSS)


@pytest.fixture
def planted(tmp_path):
    """A reference set of one constructed run, to break on purpose."""
    from tests.constructed import write_run

    run_dir = write_run(tmp_path / "results", "20261128T000000Z-small-abcdef")
    (run_dir / "time_breakdown.json").write_text(json.dumps({"wall_s": 100.0}))
    folder = tmp_path / "reference"
    first = reference.add(run_dir, ["hotfix-routes"], folder, command="python -m bench run --scale small")
    assert reference.check(folder) == []
    with pytest.raises(BadRecord, match="added once"):
        reference.add(run_dir, ["hotfix-routes"], folder, command="again")
    return folder, first


def test_a_run_file_edited_after_it_was_added_fails_the_check(planted):
    folder, first = planted
    path = folder / first.run_id / "time_breakdown.json"
    data = json.loads(path.read_text())
    data["wall_s"] = data["wall_s"] / 2  # a figure made to look better
    path.write_text(json.dumps(data))
    assert any("differs from the file that was added" in p for p in reference.check(folder))


def test_a_run_folder_without_a_manifest_line_fails_the_check(planted):
    folder, first = planted
    shutil.copytree(folder / first.run_id, folder / "unlisted-run")
    assert any("no manifest line" in p for p in reference.check(folder))


def test_a_run_that_backs_no_figure_fails_the_check_and_a_retired_run_leaves_the_set(planted):
    folder, first = planted
    manifest = folder / reference.MANIFEST
    lines = json.loads(manifest.read_text())
    manifest.write_text(json.dumps([line | {"backs": []} for line in lines]))
    assert any("backs no figure" in p for p in reference.check(folder))
    assert reference.also_backs(first.run_id, ["writers-grid"], folder).backs == ["writers-grid"]
    assert reference.check(folder) == [] and reference.load_manifest(folder)[0].backs == ["writers-grid"]
    assert reference.retire(first.run_id, folder).run_id == first.run_id
    assert reference.check(folder) == [] and reference.load_manifest(folder) == []
    assert not (folder / first.run_id).exists()
    with pytest.raises(BadRecord, match="not in"):
        reference.retire(first.run_id, folder)


def test_a_figure_typed_by_hand_into_a_doc_fails_the_drift_check(planted, tmp_path):
    folder, first = planted
    name = first.backs[0]
    doc = tmp_path / "page.md"
    doc.write_text(f"intro\n<!-- figure:{name} -->\n{figures.render(name, folder)}<!-- /figure:{name} -->\n")
    assert figures.drift([doc], folder) == []
    text = doc.read_text()
    assert "|" in text, text  # a table of figures, not the empty-set note
    digits = [i for i, c in enumerate(text) if c.isdigit() and i > text.index("| pair")]
    edited = text[:digits[0]] + str((int(text[digits[0]]) + 1) % 10) + text[digits[0] + 1:]
    doc.write_text(edited)
    assert figures.drift([doc], folder) == [f"{doc}: figure {name} differs from the reference runs (run `make docs`)"]
    doc.write_text(figures.rewrite(edited, folder))
    assert figures.drift([doc], folder) == []


def test_the_findings_page_answers_first_from_the_reference_runs_alone(planted, tmp_path):
    """No JVM: the page, its chart and one full report per machine and scale, from the record files only."""
    from bench.report.findings import build_findings

    folder, first = planted
    heard: list[tuple[str, bool, int]] = []  # each progress line, whether the page existed, reports built by then
    out = tmp_path / "findings"
    page = build_findings(folder, out, progress=lambda line: heard.append(
        (line, (out / "index.html").exists(), len(list(out.glob("*/index.html"))))))
    assert heard[0][0].startswith("page: ") and heard[0][1:] == (True, 0)  # the answer first, the reports after
    assert [built for _, _, built in heard[1:]] == list(range(1, len(heard)))
    text = page.read_text()
    sections = [text.index(h) for h in ("1. Copy-on-write or merge-on-read?", "2. Along the file size",
                                        "3. On an object store", "4. The seeds' claims", "5. Memory", "6. How often to compact",
                                        "7. Several writers", "8. The reference runs")]
    assert sections == sorted(sections)
    assert "No reference run measured the seeds" in text  # a `small` run says nothing of the seeds' table
    assert "iceberg-cow ÷ iceberg-mor" in text and first.run_id in text and first.command in text
    assert list((tmp_path / "findings" / "charts").glob("ratios-*.png")) and list((tmp_path / "findings").glob("*/index.html"))


def test_two_machines_tables_of_one_layout_get_files_of_their_own():
    """The findings page writes a report and charts per (machine, scale, layout): a name cut for length must still
    tell two machines apart, or one machine's report overwrites the other's."""
    from bench.report.findings import _slug

    shape = "small-90 days x 4 files x 5,000 rows, 120 changed-2 cores, 24 GB, "
    intel, amd = _slug(shape + "Intel(R) Xeon(R) Processor"), _slug(shape + "AMD EPYC")
    assert intel != amd and max(len(intel), len(amd)) <= 60
    assert _slug("small-8 days") == "small-8-days"


def test_a_findings_section_names_only_the_runs_whose_records_it_draws():
    """A memory search's one attempt per memory is no timing with a spread: the ratio section must not name its run."""
    from bench.report.findings import _ids
    from bench.results.contract import HOTFIX, MEMORY_NEEDED, load_run

    wanted = {"hotfix-seed-iceberg-pruned-m1", "memory-seed-pruned-m1"}
    members = [(e, load_run(reference.REFERENCE_DIR / e.run_id)) for e in reference.load_manifest() if e.run_id in wanted]
    assert {e.run_id for e, _ in members} == wanted
    assert _ids(members, HOTFIX) == "<code>hotfix-seed-iceberg-pruned-m1</code>"
    assert _ids(members, MEMORY_NEEDED) == "<code>memory-seed-pruned-m1</code>"
    assert _ids(members, HOTFIX, MEMORY_NEEDED).count("<code>") == 2 == _ids(members).count("<code>")


def test_the_seeds_claims_sit_beside_each_update_measured_on_their_table():
    """From the reference run at the seeds' size: one row per configuration and route, the claim of its kind, the time
    as a multiple of the claim's; a run at another scale has no row (its table is not the seeds')."""
    from bench.results.contract import load_run

    seed = load_run(reference.REFERENCE_DIR / "hotfix-seed-iceberg-pruned-m1")
    claims = figures.seed_claims(seed).set_index("configuration")
    assert list(claims.index) == ["iceberg-cow", "iceberg-mor"]
    assert claims.loc["iceberg-cow", "the seeds' claim"] == "rewrites ~6 GB in ~8 minutes"
    assert claims.loc["iceberg-mor", "the seeds' claim"] == "writes ~4 MB in ~12 seconds"
    points = figures.seed_claim_points(seed).set_index("config_id")
    assert claims.loc["iceberg-cow", "÷ the claim's time"] == f"{points.loc['iceberg-cow', 'median'] / 480:.2f}x"
    assert (claims["rows changed (checked)"] == "1,200 of 1,200").all()
    assert figures.seed_claims(load_run(reference.REFERENCE_DIR / "hotfix-small-routes-m2")).empty


def test_the_seeds_read_toll_is_decided_against_its_copy_on_write_control():
    """Merge-on-read's +80 ms a read, from the dashboards read before and after each update at the seeds' size: a toll
    is decided on its magnitude only where copy-on-write's reads (which merge nothing) moved by less than the claim."""
    from bench.results.contract import load_run

    seed = load_run(reference.REFERENCE_DIR / "hotfix-seed-iceberg-pruned-5r-m1")
    points = figures.seed_read_claim_points(seed).set_index("config_id")
    assert set(points.index) == {"iceberg-cow", "iceberg-mor", "iceberg-dv"}
    assert (points.low <= points.toll).all() and (points.toll <= points.high).all()
    claims = figures.seed_read_claims(seed).set_index("configuration")
    assert claims.loc["iceberg-cow", "verdict"] == "–"
    noise = max(abs(points.loc["iceberg-cow", "low"]), abs(points.loc["iceberg-cow", "high"]))
    assert claims.loc["iceberg-mor", "verdict"] == (
        f"too close to call (the control's reads moved by up to {noise * 1000:,.0f} ms)" if noise > 0.08
        else figures.toll_verdict((points.loc["iceberg-mor", "low"], points.loc["iceberg-mor", "high"]), (0, 0)))
    quiet = (-0.01, 0.02)
    assert figures.toll_verdict((0.05, 0.12), quiet).startswith("holds")
    assert figures.toll_verdict((0.5, 0.9), quiet) == "does not hold (at least +500 ms, over 2x the claim's)"
    assert figures.toll_verdict((-0.02, 0.03), quiet) == "does not hold (at most +30 ms, under 1/2 of the claim's)"
    assert figures.toll_verdict((0.02, 0.3), quiet).startswith("too close to call (the range")
    assert figures.toll_verdict((0.05, 0.12), None).startswith("too close to call (no copy-on-write control")
    loud = (-0.49, 0.34)  # the control moved by more than the claim: only a toll beyond that noise and 2x decides
    assert figures.toll_verdict((0.43, 1.9), loud) == "too close to call (the control's reads moved by up to 490 ms)"
    assert figures.toll_verdict((0.76, 2.7), loud) == (
        "does not hold (at least +270 ms beyond the control's 490 ms of noise, over 2x the claim's)")
    assert figures.seed_read_claims(load_run(reference.REFERENCE_DIR / "hotfix-small-routes-m2")).empty


def test_the_layouts_of_one_machine_and_scale_are_also_reported_together(tmp_path):
    """Each layout is its own answer, and one report over all of them lets the cost model price partitions touched; a
    set of one layout has no such report."""
    from bench.report.findings import build_findings
    from tests.constructed import write_run

    folder = tmp_path / "reference"
    for number, (days, files_per_day) in enumerate([(12, 3), (4, 9)]):
        run_dir = write_run(tmp_path / "results", f"20261128T00000{number}Z-small-abcdef")
        for name in ("benchmark.json", "environment.json"):
            data = json.loads((run_dir / name).read_text())
            env = data["cowmor"]["environment"] if name == "benchmark.json" else data
            env["scale"] |= {"days": days, "files_per_day": files_per_day, "rows_per_file": 800, "hotfix_rows": 12}
            (run_dir / name).write_text(json.dumps(data))
        (run_dir / "time_breakdown.json").write_text(json.dumps({"wall_s": 100.0}))
        reference.add(run_dir, ["hotfix-routes"], folder, command="python -m bench run --scale small")
        text = build_findings(folder, tmp_path / f"findings-{number}").read_text()
        assert ("its 2 layouts together" in text) is (number == 1)
    assert list((tmp_path / "findings-1").glob("tiny-every-layout-*/index.html"))


def test_the_headline_sets_one_machines_tables_side_by_side_and_never_mixes_machines():
    """A column per table measured, each cell the ratio its own run gives; a pair one run lacks is a dash; the runs of
    a machine that did not record its CPU get a table of their own."""
    from bench.results.contract import load_run

    seed = load_run(reference.REFERENCE_DIR / "hotfix-seed-iceberg-pruned-m1")
    small = load_run(reference.REFERENCE_DIR / "hotfix-small-routes-d8x45-m1")
    wide = figures.hotfix_layouts([("seed", seed), ("small", small)]).set_index(["pair", "route"])
    assert list(wide.columns) == ["seed", "small"]
    for label, run in (("seed", seed), ("small", small)):
        for row in figures.hotfix_routes(run).itertuples():
            assert wide.loc[(row.pair, row.route), label].startswith(row[3].split(" ")[0]), (label, row)
    assert wide.loc[("delta-cow ÷ delta-dv", "join"), "seed"] == "–"
    text = figures.render("hotfix-headline")
    headers = [line for line in text.splitlines() if line.startswith("| pair | route |")]
    assert len(headers) == len({e.machine_label for e, _ in reference.backing("hotfix-routes")})
    for header in headers:  # the seeds' table first, then one scale's layouts from most days to fewest
        columns = [c.strip() for c in header.strip("|").split("|")[2:]]
        small = [int(c.split(": ")[1].split(" days")[0]) for c in columns if c.startswith("small")]
        assert small == sorted(small, reverse=True) and not any(c.startswith("seed") for c in columns[1:]), header


def test_the_ratio_along_the_file_size_is_each_steps_own():
    """A row per pair, route and layout, a column per step (rows per file), each cell the ratio of that step's two
    medians; every pair measured on every route it has."""
    from bench.results.contract import load_run

    run = load_run(reference.REFERENCE_DIR / "file-size-small-routes-m1")
    points = figures.file_size_ratio_points(run)
    wide = figures.file_size_ratios(run).set_index(["pair", "route", "layout"])
    assert len(wide.columns) == points.rows_per_file.nunique() >= 2
    assert set(wide.index.get_level_values("route")) == {"join", "pruned", "index"}
    for p in points.itertuples():
        column = next(c for c in wide.columns if c.startswith(f"{p.rows_per_file:,} rows"))
        assert wide.loc[(p.pair, p.route, p.layout), column].startswith(f"{p.ratio:.2f}x")
        assert p.low is None or p.low <= p.ratio <= p.high


def test_the_model_is_checked_on_the_seeds_table_it_never_saw():
    """Fitted on one machine's `small` runs (file-size steps and the hotfix on two layouts), it predicts the updates
    measured on the seeds' table: a row per update measured there, its reach beyond the fitted points far above 1."""
    from bench.results import load
    from bench.results.contract import load_run

    small = load.merge([load_run(reference.REFERENCE_DIR / name) for name in
                        ("file-size-small-routes-m1", "hotfix-small-routes-d8x45-m1", "hotfix-small-routes-d30x12-m1")])
    seed = load_run(reference.REFERENCE_DIR / "hotfix-seed-iceberg-pruned-m1")
    checked = figures.model_against_unseen(small, seed).set_index("configuration")
    assert list(checked.index) == ["iceberg-cow", "iceberg-mor"] and (checked.route == "pruned").all()
    assert all(float(reach.rstrip("x").replace(",", "")) > 10 for reach in checked["beyond the fitted points"])
    assert checked.check.isin(["met", "MISSED: the interval does not meet the measurement"]).all()
    assert figures.model_against_unseen(seed, seed).empty  # no file-size steps there: nothing to fit


def test_runs_on_other_storage_are_never_merged_and_the_storage_figure_sets_them_side_by_side(tmp_path):
    """A local and an object-store run of one machine and layout: each ratio figure gives each its own table, and the
    storage figures one table with a column per storage (local disk first), the requests only where they were counted."""
    from tests.constructed import write_run

    folder = tmp_path / "reference"
    for run_id, speed, storage in (("on-s3", 1.5, {"kind": "seaweedfs 4.48", "requests_counted": True}),
                                   ("on-disk", 1.0, None)):
        run_dir = write_run(tmp_path / "results", run_id, speed=speed, storage=storage)
        (run_dir / "time_breakdown.json").write_text(json.dumps({"wall_s": 100.0}))
        reference.add(run_dir, ["hotfix-routes", "hotfix-storage"], folder, command="python -m bench run")
    assert reference.check(folder) == []
    routes = figures.render("hotfix-routes", folder)
    assert routes.count("| pair | route |") == 2 and "local disk" in routes and "seaweedfs 4.48" in routes
    ratios = figures.render("hotfix-storage", folder)
    assert ratios.count("| pair | route |") == 1
    assert "| pair | route | local disk | seaweedfs 4.48 |" in ratios
    updates = figures.render("hotfix-storage-updates", folder)
    header = next(line for line in updates.splitlines() if line.startswith("| configuration"))
    assert header == ("| configuration | route | local disk: update s, median (interval) | local disk: requests | "
                      "seaweedfs 4.48: update s, median (interval) | seaweedfs 4.48: requests |")
    row = next(line for line in updates.splitlines() if line.startswith("| iceberg-cow | join"))
    assert row.split(" | ")[3] == "–" and row.split(" | ")[5].startswith("58 (GET 40, PUT 12, LIST 6)"), row
    from bench.report.findings import build_findings

    page = build_findings(folder, tmp_path / "findings").read_text()
    section = page[page.index("3. On an object store"):page.index("4. The seeds' claims")]
    assert "on-s3" in section and "on-disk" in section and "seaweedfs 4.48: requests" in section
    assert list((tmp_path / "findings" / "charts").glob("storage-*-join.png"))
    one = tmp_path / "one"
    reference.add(tmp_path / "results" / "on-disk", ["hotfix-storage"], one, command="python -m bench run")
    assert figures.render("hotfix-storage", one).startswith("*No reference run backs this figure yet")  # one storage: no table


def test_a_run_said_to_back_a_figure_that_does_not_exist_is_refused_in_one_line(tmp_path, capsys):
    from bench import cli

    assert cli.main(["reference", "backs", "some-run", "--backs", "hotfix-routs", "--folder", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("cowmor: --backs hotfix-routs: no such figure (figures: ") and "\n" not in err


def test_the_readme_is_a_front_page():
    """The answer first, within 8 KB: the big grids are on the findings page, in docs/ and in their CSVs."""
    text = (ROOT / "README.md").read_text()
    assert len(text.encode()) <= 8 * 1024
    assert all(len(path.read_bytes()) <= 40 * 1024 for path in doc_files()), "a doc over 40 KB: move its grids out"
    assert text.index("## The answer") < text.index("## Two commands")
