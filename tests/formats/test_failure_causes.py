"""Each format words why a writer's commit attempt failed, from the exceptions the several-writers grid recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.core import failures as kinds
from bench.formats import make_adapter
from bench.measure.writers import failure

# (configuration, exception class, root cause, message) as the grid at `small` recorded them (paths shortened)
SEEN = [
    ("iceberg-cow", "org.apache.iceberg.exceptions.ValidationException", "org.apache.iceberg.exceptions.ValidationException",
     'Found conflicting files that can contain records matching ref(name="txn_id") in (1000000001, 1000000005): [/w/d.parquet',
     "another commit added rows its statement matches"),
    ("iceberg-cow", "java.lang.IllegalStateException", "java.lang.IllegalStateException",
     "Runtime file filtering is not possible: the table has been concurrently modified. Row-level operation scan snapshot",
     "the table changed while its statement scanned"),
    ("iceberg-mor", "org.apache.iceberg.exceptions.ValidationException", "org.apache.iceberg.exceptions.ValidationException",
     'Found new conflicting delete files that can apply to records matching ref(name="txn_id") in (1000010004): [/w/d',
     "another commit deleted rows its statement matches"),
    ("iceberg-mor", "org.apache.iceberg.exceptions.ValidationException", "org.apache.iceberg.exceptions.ValidationException",
     "Cannot commit, missing data files: [/w/warehouse/iceberg_jdbc/bench/payments_writers/data/d.parquet]",
     "the files it deletes from were rewritten by a concurrent commit"),
    ("iceberg-mor", "IllegalArgumentException", None, "Snapshot 2520488127738002114 is not an ancestor of 6157759643349676998",
     "its starting snapshot was expired before it committed"),
    ("hudi-mor", "org.apache.hudi.exception.HoodieWriteConflictException", "java.util.ConcurrentModificationException",
     "Cannot resolve conflicts for overlapping writes between first operation = {actionType=deltacommit, instantTime="
     "20261127080319270, actionState=INFLIGHT'}, second operation = {actionType=deltacommit, instantTime=20261127080319569, "
     "actionState=COMPLETED", "overlapping write with a concurrent deltacommit"),
    ("hudi-mor", "org.apache.hudi.exception.HoodieIOException", "org.apache.hadoop.fs.FileAlreadyExistsException",
     "File already exists: file:/w/hudi/payments_writers_pruned_nbcc/.hoodie/timeline/20261127063237031.clean.inflight",
     "another application ran the same clean instant"),
    ("hudi-mor", "org.apache.hudi.exception.HoodieRollbackException", "org.apache.hudi.exception.HoodieIOException",
     "Could not delete instant [==>20261127064259913__deltacommit__INFLIGHT] with path file:/w/.hoodie/timeline/2026.deltacommit.inflight",
     "another application rolled back the same failed write"),
    ("hudi-mor", "org.apache.hudi.exception.HoodieRollbackException", "org.apache.hudi.exception.HoodieRollbackException",
     "No pending rollback instants found to execute rollback", "another application rolled back the same failed write"),
    ("hudi-mor", "org.apache.hudi.exception.HoodieMetadataException", "java.io.FileNotFoundException",
     "File file:/w/hudi/t/.hoodie/metadata/files/.files-0000-0_20261127063434987.log.1_2-149-799 does not exist",
     "a metadata-table file it read was gone"),
    ("delta-dv", "io.delta.exceptions.ConcurrentAppendException", "io.delta.exceptions.ConcurrentAppendException",
     "[DELTA_CONCURRENT_APPEND] ConcurrentAppendException: Files were added to partition [settled_date=2026-01-01] by a "
     "concurrent update. Please try the operation again.", "another commit added files where its statement read"),
    ("delta-cow", "io.delta.exceptions.MetadataChangedException", "io.delta.exceptions.MetadataChangedException",
     "[DELTA_METADATA_CHANGED] MetadataChangedException: The metadata of the Delta table has been changed",
     "conflict (MetadataChanged)"),
]


@pytest.mark.parametrize("config_id, cls, root, message, cause", SEEN)
def test_each_recorded_failure_gets_its_cause(config_id, cls, root, message, cause):
    fmt = make_adapter(config_id, Path("/w"), 1 << 27)
    assert fmt.failure_cause({"class": cls, "root_cause": root, "message": message}) == cause


def test_a_failure_no_format_words_keeps_its_class():
    fmt = make_adapter("iceberg-cow", Path("/w"), 1 << 27)
    assert fmt.failure_cause(failure(OSError("disk full"))) == "other (OSError)"
    assert fmt.failure_cause({"class": "org.x.Boom", "root_cause": "java.io.IOException", "message": ""}) == "other (IOException)"


# the kinds the words alone decide; the rest (None) the race decides by what committed meanwhile
WORDED_KINDS = {
    "its starting snapshot was expired before it committed": kinds.HARNESS_EXPIRY,
    "overlapping write with a concurrent deltacommit": kinds.WRITE_CONFLICT,
    "another application ran the same clean instant": kinds.TABLE_SERVICE,
    "another application rolled back the same failed write": kinds.TABLE_SERVICE,
}


@pytest.mark.parametrize("config_id, cls, root, message, cause", SEEN)
def test_a_failure_s_words_decide_its_kind_only_where_they_name_who_caused_it(config_id, cls, root, message, cause):
    fmt = make_adapter(config_id, Path("/w"), 1 << 27)
    assert fmt.failure_kind({"class": cls, "root_cause": root, "message": message}) == WORDED_KINDS.get(cause)


@pytest.mark.parametrize("action, kind", [("compaction", kinds.TABLE_SERVICE), ("clean", kinds.TABLE_SERVICE),
                                          ("replacecommit", kinds.TABLE_SERVICE), ("commit", None)])
def test_hudi_s_concurrent_action_names_the_service_but_a_commit_may_be_either(action, kind):
    message = ("Cannot resolve conflicts for overlapping writes between first operation = {actionType=deltacommit, "
               f"instantTime=1, actionState=INFLIGHT'}}, second operation = {{actionType={action}, instantTime=2, "
               "actionState=COMPLETED")
    failed = {"class": "org.apache.hudi.exception.HoodieWriteConflictException",
              "root_cause": "java.util.ConcurrentModificationException", "message": message}
    fmt = make_adapter("hudi-mor", Path("/w"), 1 << 27)
    assert fmt.failure_kind(failed) == kind
    assert fmt.failure_cause(failed) == f"overlapping write with a concurrent {action}"


def test_hudi_s_expired_heartbeat_is_its_own_kind():
    failed = {"class": "org.apache.hudi.exception.HoodieException", "root_cause": "org.apache.hudi.exception.HoodieException",
              "message": "Heartbeat for instant 20261128101010101 has expired, last heartbeat 1764324610000"}
    fmt = make_adapter("hudi-mor", Path("/w"), 1 << 27)
    assert (fmt.failure_cause(failed), fmt.failure_kind(failed)) == ("its heartbeat expired before it committed",
                                                                     kinds.HEARTBEAT_EXPIRY)
