"""A Delta table's facts through delta-rs: the live files with their statistics, the log's commits."""

from __future__ import annotations

from bench.inspect import Commit, DataFile, TableFacts, library_uri, object_store_options

# commitInfo.operationMetrics as Delta on Spark names them, then as delta-rs does
ROWS_CHANGED = ("numUpdatedRows", "numDeletedRows", "numTargetRowsUpdated", "numTargetRowsDeleted",
                "num_updated_rows", "num_deleted_rows", "num_target_rows_updated", "num_target_rows_deleted")
FILES_ADDED = ("numAddedFiles", "numTargetFilesAdded", "num_added_files", "num_target_files_added")
FILES_REMOVED = ("numRemovedFiles", "numTargetFilesRemoved", "num_removed_files", "num_target_files_removed")
COMPACTIONS = ("OPTIMIZE", "REORG")


def _sum(metrics: dict, keys: tuple[str, ...]) -> int | None:
    found = [int(metrics[k]) for k in keys if metrics.get(k) not in (None, "")]
    return sum(found) if found else None


def _deleted_rows(table) -> dict[str, int]:  # noqa: ANN001 - a deltalake.DeltaTable (imported lazily)
    """Rows each file's deletion vector removes, by the file's name: its statistics still count them."""
    import pyarrow as pa

    vectors = pa.table(table.deletion_vectors()).to_pylist()
    return {str(v["filepath"]).rsplit("/", 1)[-1]: sum(1 for keep in v["selection_vector"] if not keep) for v in vectors}


def read(location: str, key: str | None) -> TableFacts:
    import os

    os.environ.setdefault("RUST_LOG", "error")  # delta-rs logs DataFusion's deprecation warnings at WARN otherwise
    import deltalake

    table = deltalake.DeltaTable(library_uri(location), storage_options=object_store_options(location) or None)
    adds = table.get_add_actions(flatten=True)
    columns = adds.schema.names if hasattr(adds, "schema") else list(adds.column_names)
    data = {name: adds.column(name).to_pylist() for name in columns}
    partitions = list(table.metadata().partition_columns)
    n = len(data.get("path", []))
    deleted = _deleted_rows(table)
    files = []
    for i in range(n):
        rows = int(data["num_records"][i]) if data.get("num_records") and data["num_records"][i] is not None else None
        gone = deleted.get(data["path"][i].rsplit("/", 1)[-1], 0)
        files.append(DataFile(data["path"][i], int(data["size_bytes"][i]), rows - gone if rows is not None else None,
                              data.get(f"min.{key}", [None] * n)[i] if key else None,
                              data.get(f"max.{key}", [None] * n)[i] if key else None,
                              "/".join(f"{p}={data.get(f'partition.{p}', [None] * n)[i]}" for p in partitions)))
    commits = []
    for entry in reversed(table.history()):
        metrics = entry.get("operationMetrics") or {}
        operation = str(entry.get("operation") or "?")
        commits.append(Commit(int(entry.get("timestamp") or 0), operation, _sum(metrics, ROWS_CHANGED),
                              _sum(metrics, FILES_ADDED), _sum(metrics, FILES_REMOVED), operation in COMPACTIONS))
    dvs = len(deleted)  # files whose deletion vector a compaction (OPTIMIZE, REORG … PURGE) has not folded in yet
    kept = any(v is not None for v in data.get(f"min.{key}", [])) if key else True  # a column of nulls: none kept
    notes = [] if kept or not files else [f"the log keeps no statistics for {key}: key spread unknown"]
    return TableFacts("delta", location, files, commits, key, partitions, dvs, notes)
