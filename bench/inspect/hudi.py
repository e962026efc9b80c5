"""A Hudi table's facts through hudi-rs: its latest file slices, its timeline's commits and their write stats."""

from __future__ import annotations

import json
import os

from bench.inspect import Commit, DataFile, TableFacts, library_uri, object_store_options

COMPACTIONS = ("compaction", "replacecommit", "clustering")


def read(location: str, key: str | None) -> TableFacts:
    import hudi

    path = library_uri(location)
    builder = hudi.HudiTableBuilder.from_base_uri(path if "://" in path else os.path.abspath(path))
    if store := object_store_options(location):
        builder = builder.with_storage_options(store)
    table = builder.build()
    options = table.hudi_options()
    key = key or options.get("hoodie.table.recordkey.fields") or None
    files, logs = [], 0
    for s in table.get_file_slices():
        logs += len(s.log_file_names or [])
        files.append(DataFile(s.base_file_relative_path, int(s.base_file_size), int(s.num_records) if s.num_records else None,
                              partition=s.partition_path or ""))
    timeline = table.get_timeline()
    commits = []
    instants = [*timeline.get_completed_commits(), *timeline.get_completed_deltacommits(),
                *timeline.get_completed_replacecommits()]
    for instant in sorted(instants, key=lambda i: i.timestamp):
        meta = json.loads(timeline.get_instant_metadata_in_json(instant) or "{}")
        stats = [w for ws in (meta.get("partitionToWriteStats") or {}).values() for w in ws]
        changed = sum(int(w.get("numUpdateWrites") or 0) + int(w.get("numDeletes") or 0) for w in stats)
        operation = str(meta.get("operationType") or instant.action)
        commits.append(Commit(int(instant.epoch_mills), operation, changed or None, len(stats), None,
                              instant.action in COMPACTIONS or bool(meta.get("compacted")) or operation == "COMPACT"))
    partitions = [p for p in (options.get("hoodie.table.partition.fields") or "").split(",") if p]
    notes = ["hudi-rs reads no per-file key statistics here: key spread unknown"] if key else []
    return TableFacts("hudi", location, files, commits, key, partitions, logs, notes)
