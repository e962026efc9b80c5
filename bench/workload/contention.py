"""Which keys each of several writers updates, by how much their work overlaps (pure: no Spark).

- ``disjoint_files``: each writer owns whole days (day ``d`` is writer ``d mod N``'s), so no two writers touch one file;
- ``shared_files``: every writer's batch ``b`` touches the same files, each writer its own keys in them (key ``i`` of
  a file is writer ``i mod N``'s): disjoint keys, shared files, where file-level conflict detection fails writers;
- ``same_keys``: every writer updates the same keys, batch by batch.

Keys that a writer updates are never the ``deleted`` ones, deleted before the race in files the writers share, so a
table service that rewrites those files must not bring them back.
"""

from __future__ import annotations

from dataclasses import dataclass

DISJOINT_FILES, SHARED_FILES, SAME_KEYS = "disjoint_files", "shared_files", "same_keys"
OVERLAPS = (DISJOINT_FILES, SHARED_FILES, SAME_KEYS)


@dataclass(frozen=True)
class Contention:
    batches: list[list[list[int]]]  # writer -> batch -> keys
    deleted: list[int]
    days: list[list[list[int]]]  # writer -> batch -> the days (partitions, counted from the first) its keys sit in

    @property
    def touched(self) -> list[int]:
        return sorted({k for writer in self.batches for batch in writer for k in batch})


def plan(keys_by_file: list[list[int]], files_per_day: int, writers: int, batches: int, keys_per_batch: int,
         files_per_batch: int, overlap: str, deleted_per_file: int = 1) -> Contention:
    """Each writer's batches over ``keys_by_file`` (the table's files in day order, each file's keys sorted).

    Raises:
        ValueError: an unknown overlap, or files too small for the keys asked.
    """
    if overlap not in OVERLAPS:
        raise ValueError(f"no overlap {overlap!r}; overlaps: {', '.join(OVERLAPS)}")
    per_file = max(1, keys_per_batch // files_per_batch)
    lanes = 1 if overlap == SAME_KEYS else writers  # writers that share a file take every lanes-th key of it
    if lanes * batches * per_file + deleted_per_file > min(len(f) for f in keys_by_file):
        raise ValueError(f"files of {min(len(f) for f in keys_by_file)} rows are too small for {writers} writers x "
                         f"{batches} batches x {per_file} keys per file")
    every = range(len(keys_by_file))  # files by position; file i holds day i // files_per_day
    out, out_days = [], []
    for w in range(writers):
        pool = [i for i in every if (i // files_per_day) % writers == w] if overlap == DISJOINT_FILES else list(every)
        lane = w if overlap == SHARED_FILES else 0
        mine, mine_days = [], []
        for b in range(batches):
            files = [pool[(b * files_per_batch + j) % len(pool)] for j in range(files_per_batch)]
            mine.append(sorted(keys_by_file[f][lane + lanes * (b * per_file + i)] for f in files for i in range(per_file)))
            mine_days.append(sorted({f // files_per_day for f in files}))
        out.append(mine)
        out_days.append(mine_days)
    shared = keys_by_file[:files_per_batch]  # the first batch's files: every writer's in shared_files and same_keys
    deleted = sorted(f[-1 - i] for f in shared for i in range(deleted_per_file))
    return Contention(out, deleted, out_days)
