"""Finding the rows: Spark's metric strings parsed, the locate record summed, the literal predicates each route sends."""

from __future__ import annotations

import argparse
import re

import pytest

from bench.formats.base import ROUTES, any_of, key_equalities, key_in_lists
from bench.measure.locate import dot_nodes, full_scan, metric_value, summarize
from bench.run.options import parse_routes


@pytest.mark.parametrize("text, value", [("1,234", 1234), ("36", 36), ("58.0 KiB", 58 * 1024), ("2.5 MiB", 2.5 * 2**20),
                                         ("total (min, med, max (stageId: taskId))\n9.5 MiB (1.0 MiB, 2.0 MiB, 3.0 MiB (1: 2))",
                                          9.5 * 2**20), ("", None), (None, None), ("n/a", None)])
def test_spark_metric_strings_are_read_as_numbers(text, value):
    assert metric_value(text) == value


# Spark 3.5's SparkPlanGraph.makeDotFile of a Delta MERGE (its command node, as printed) and a scan summed over tasks
PLAN_DOT = r"""digraph G {
  0 [labelType="html" label="<b>Execute MergeIntoCommand</b><br><br>number of target rows rewritten unmodified: 19,979<br>number of target files after skipping: 2<br>number of target bytes after skipping: 89,903<br>time taken to execute the entire operation: 7.2 s"];
  subgraph cluster1 {
    isCluster="true";
    label="WholeStageCodegen (1)\n \nduration: 12 ms";
    2 [labelType="html" label="<b>Scan parquet \"pay\"</b><br><br>number of files read: 8<br>size of files read: total (min, med, max (stageId: taskId))<br>9.5 MiB (1.0 MiB, 2.0 MiB, 3.0 MiB (stage 2.0: task 5))<br>number of output rows: 40"];
  }
  3 [labelType="html" label="<b>Project</b>"];
  2->0;
}"""


def test_plan_metrics_are_read_from_sparks_dot_rendering_one_call_per_statement():
    nodes = dict(dot_nodes(PLAN_DOT))
    assert list(nodes) == ["Execute MergeIntoCommand", 'Scan parquet "pay"', "Project"]
    assert nodes["Execute MergeIntoCommand"] == {"number of target files after skipping": "2",
                                                 "number of target bytes after skipping": "89,903"}
    scan = nodes['Scan parquet "pay"']
    assert metric_value(scan["number of files read"]) == 8 and metric_value(scan["size of files read"]) == 9.5 * 2**20
    assert nodes["Project"] == {}


def test_the_locate_record_sums_every_scan_and_keeps_the_largest():
    scans = [{"node": "BatchScan a", "files_read": 9, "data_files_skipped": 27},
             {"node": "BatchScan a", "files_read": 36, "data_files_skipped": 0}]
    out = summarize(scans, [{"target_files_before_skipping": 36, "target_files_after_skipping": 36}], 1_611_825, 2)
    assert (out["files_read"], out["largest_scan_files"], out["bytes_read"], out["statements"]) == (45, 36, 1_611_825, 2)
    assert out["data_files_skipped"] == 27 and out["target_files_after_skipping"] == 36


def test_files_larger_than_the_split_size_count_as_files_not_splits():
    """Iceberg's "number of file splits read": 4 files of 263 MB are 12 splits of 128 MB (measured at the file-size step)."""
    big = summarize([{"node": "s", "files_read": 12, "data_files_planned": 4}], [], 0, 1)
    assert (big["files_read"], big["largest_scan_files"], big["scans"][0]["file_splits_read"]) == (4, 4, 12)
    assert full_scan(big, table_data_files=4, files_touched=2) is True
    small = summarize([{"node": "s", "files_read": 2, "data_files_planned": 4}], [], 0, 1)  # a runtime filter read 2
    assert small["files_read"] == 2 and "file_splits_read" not in small["scans"][0]


def test_a_scan_of_every_file_is_a_full_scan_only_where_fewer_files_hold_a_changed_row():
    record = summarize([{"node": "s", "files_read": 36}], [], 0, 1)
    assert full_scan(record, table_data_files=36, files_touched=9) is True
    assert full_scan(summarize([{"node": "s", "files_read": 9}], [], 0, 1), 36, 9) is False
    assert full_scan(record, table_data_files=9, files_touched=9) is None  # every file is touched: nothing to tell
    assert full_scan(summarize([], [], 0, 0), 36, 9) is None  # no scan metrics: unknown, never a pass


def test_or_of_many_terms_nests_logarithmically():
    terms = [f"k = {i}" for i in range(1200)]
    text = any_of(terms)
    depth = max_depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        max_depth = max(max_depth, depth)
    assert max_depth <= 11 and all(t in text for t in ("k = 0", "k = 1199"))
    with pytest.raises(ValueError):
        any_of([])


def test_in_lists_stay_within_icebergs_pruning_limit_and_keep_every_key():
    keys = tuple(range(1000, 0, -2))  # 500 keys, unsorted
    text = key_in_lists("txn_id", keys, 200)
    lists = [[int(k) for k in found.split(",")] for found in re.findall(r"txn_id IN \(([^)]*)\)", text)]
    assert [len(x) for x in lists] == [200, 200, 100]
    assert sorted(k for x in lists for k in x) == sorted(keys)
    assert key_equalities("txn_id", (3, 1)) == "(txn_id = 1 OR txn_id = 3)"


def test_routes_option_keeps_the_routes_order_and_refuses_unknown_ones():
    assert parse_routes("pruned,join") == "join,pruned"
    assert parse_routes("all") == ",".join(ROUTES)
    with pytest.raises(argparse.ArgumentTypeError, match="unknown route"):
        parse_routes("join,scan")


def test_delta_s_literal_keys_check_rows_by_an_in_list_first_and_skip_files_by_the_or():
    from bench.formats.delta import DeltaFormat

    predicate = DeltaFormat.pruning_predicate(None, "txn_id", (3, 1))
    assert predicate == "txn_id IN (1, 3) AND (txn_id = 1 OR txn_id = 3)"
