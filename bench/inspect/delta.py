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
    files = [DataFile(data["path"][i], int(data["size_bytes"][i]),
                      int(data["num_records"][i]) if data.get("num_records") and data["num_records"][i] is not None else None,
                      data.get(f"min.{key}", [None] * n)[i] if key else None,
                      data.get(f"max.{key}", [None] * n)[i] if key else None,
                      "/".join(f"{p}={data.get(f'partition.{p}', [None] * n)[i]}" for p in partitions))
             for i in range(n)]
    commits = []
    for entry in reversed(table.history()):
        metrics = entry.get("operationMetrics") or {}
        operation = str(entry.get("operation") or "?")
        commits.append(Commit(int(entry.get("timestamp") or 0), operation, _sum(metrics, ROWS_CHANGED),
                              _sum(metrics, FILES_ADDED), _sum(metrics, FILES_REMOVED), operation in COMPACTIONS))
    dvs = sum(1 for v in data.get("deletionVector.storageType", []) if v) if "deletionVector.storageType" in data else 0
    kept = any(v is not None for v in data.get(f"min.{key}", [])) if key else True  # a column of nulls: none kept
    notes = [] if kept or not files else [f"the log keeps no statistics for {key}: key spread unknown"]
    return TableFacts("delta", location, files, commits, key, partitions, dvs, notes)
