"""Deterministic base data: written once per (shape, seed) as Parquet and loaded into every configuration.

Each Parquet file holds the rows of exactly one settlement day, so a table loaded with one output file
per input file has the same layout in every format (the "many files per day" of the payments hotfix).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bench.core.storage import Files, ensure_free

GENERATOR_VERSION = 1
FIRST_DAY = dt.date(2026, 1, 1)
TXN_ID_BASE = 1_000_000_000
STATUSES = ("SETTLED", "PENDING", "FAILED")
STATUS_WEIGHTS = (0.90, 0.07, 0.03)
HOTFIX_STATUS = "REVERSED"  # never generated, so the rows carrying it are exactly the updated ones
CURRENCIES = ("INR", "USD", "EUR", "GBP")
CURRENCY_WEIGHTS = (0.85, 0.08, 0.05, 0.02)
TAX_BUCKETS = ("GST_0", "GST_5", "GST_12", "GST_18", "GST_28")
METHODS = ("UPI", "CARD", "NETBANKING", "WALLET")
MERCHANTS = 2000

PAYMENTS_SCHEMA = pa.schema([
    ("txn_id", pa.int64()),
    ("settled_date", pa.date32()),
    ("merchant_id", pa.int32()),
    ("amount", pa.decimal128(12, 2)),
    ("currency", pa.string()),
    ("status", pa.string()),
    ("tax_bucket", pa.string()),
    ("payment_method", pa.string()),
    ("created_at", pa.timestamp("us", tz="UTC")),
    ("gateway_ref", pa.string()),
    ("notes", pa.string()),
])


def decimal_from_cents(cents: np.ndarray, precision: int = 12, scale: int = 2) -> pa.Array:
    """Exact decimal128 from integer cents (little-endian 128-bit unscaled values), no float round trip."""
    words = np.empty((len(cents), 2), dtype=np.int64)
    words[:, 0] = cents
    words[:, 1] = np.where(cents < 0, -1, 0)
    return pa.Array.from_buffers(pa.decimal128(precision, scale), len(cents), [None, pa.py_buffer(words.tobytes())])


def _choice(rng: np.random.Generator, values: tuple[str, ...], weights: tuple[float, ...], n: int) -> pa.Array:
    idx = rng.choice(len(values), size=n, p=np.array(weights) / sum(weights))
    return pa.DictionaryArray.from_arrays(pa.array(idx, pa.int32()), pa.array(values)).cast(pa.string())


def payments_file(seed: int, day: int, file_no: int, files_per_day: int, rows_per_file: int) -> pa.Table:
    """The rows of one base file; depends only on its arguments (so files can be made in any order)."""
    rng = np.random.default_rng([seed, day, file_no])
    n = rows_per_file
    first = (day * files_per_day + file_no) * rows_per_file
    txn_id = np.arange(first, first + n, dtype=np.int64) + TXN_ID_BASE
    date = FIRST_DAY + dt.timedelta(days=day)
    merchant = np.minimum(rng.zipf(1.3, n), MERCHANTS).astype(np.int32)
    cents = np.round(rng.lognormal(7.0, 1.2, n) * 100).astype(np.int64) + 100
    seconds = rng.integers(0, 86400, n)
    created = (np.datetime64(date, "s") - np.timedelta64(1, "D") + seconds.astype("timedelta64[s]")).astype("datetime64[us]")
    ref = rng.integers(0, 2**63 - 1, n, dtype=np.int64)
    columns = [
        pa.array(txn_id),
        pa.array(np.full(n, date), pa.date32()),
        pa.array(merchant),
        decimal_from_cents(cents),
        _choice(rng, CURRENCIES, CURRENCY_WEIGHTS, n),
        _choice(rng, STATUSES, STATUS_WEIGHTS, n),
        _choice(rng, TAX_BUCKETS, (1, 2, 3, 4, 1), n),
        _choice(rng, METHODS, (6, 2, 1, 1), n),
        pa.array(created, pa.timestamp("us", tz="UTC")),
        pa.array([f"pg_{r:016x}" for r in ref.tolist()]),
        pa.array([f"batch {day:03d}/{file_no:03d} settlement via {m}" for m in rng.choice(METHODS, n).tolist()]),
    ]
    return pa.Table.from_arrays(columns, schema=PAYMENTS_SCHEMA)


# rows converted at a time into the expected answers' frame (a part peaks at a few hundred bytes a row in Arrow and
# pandas together): bounds the harness's own memory whatever the table's size and its files' sizes
ROWS_PER_PART = 1_000_000


@dataclass(frozen=True)
class TableShape:
    """A date-clustered table: ``days`` x ``files_per_day`` base files of ``rows_per_file`` rows each."""

    days: int
    files_per_day: int
    rows_per_file: int
    seed: int

    @property
    def rows(self) -> int:
        return self.days * self.files_per_day * self.rows_per_file

    @property
    def last_day(self) -> dt.date:
        return FIRST_DAY + dt.timedelta(days=self.days - 1)


@dataclass(frozen=True)
class PaymentsData(TableShape):
    """A generated payments dataset at ``path``."""

    path: str = ""

    @property
    def _sizes(self) -> dict[str, int]:
        return {rel: size for rel, size in Files.of(self.path).walk().items()
                if rel.startswith("part-") and rel.endswith(".parquet")}

    @property
    def files(self) -> list[str]:
        return sorted(f"{self.path}/{rel}" for rel in self._sizes)

    @property
    def bytes(self) -> int:
        return sum(self._sizes.values())

    @property
    def bytes_per_row(self) -> float:
        return self.bytes / self.rows

    def read(self, columns: list[str] | None = None) -> pa.Table:
        return pq.read_table(self._paths(range(len(self.files))), columns=columns, filesystem=Files.of(self.path).fs)

    def read_in_parts(self, columns: list[str], rows_per_part: int = ROWS_PER_PART) -> Iterator[pa.Table]:
        """The data about ``rows_per_part`` rows at a time, whatever the files' sizes (a part is whole record batches:
        four 2-million-row files are four parts, 120 files of 5,000 rows one), so a caller that converts as it goes
        never holds more than a part in Arrow beside its own copy (the seed's 152M rows would not fit a laptop twice)."""
        fs, held, rows = Files.of(self.path).fs, [], 0
        for path in self._paths(range(len(self.files))):
            with fs.open_input_file(path) as f:
                for batch in pq.ParquetFile(f).iter_batches(batch_size=rows_per_part, columns=columns):
                    held.append(batch)
                    rows += batch.num_rows
                    if rows >= rows_per_part:
                        yield pa.Table.from_batches(held)
                        held, rows = [], 0
        if held:
            yield pa.Table.from_batches(held)

    def rows_with(self, keys: list[int]) -> pa.Table:
        """The generated rows with these txn_ids, read only from the files that hold them (contiguous ranges per file)."""
        return pq.read_table(self._paths(sorted(self._holding(keys))), filters=[("txn_id", "in", [int(k) for k in keys])],
                             filesystem=Files.of(self.path).fs)

    def keys_by_file(self) -> list[list[int]]:
        """Each file's txn_ids, sorted, files in day order (a table loaded one file per input file has these files)."""
        fs = Files.of(self.path).fs
        return [sorted(pq.read_table(path, columns=["txn_id"], filesystem=fs).column(0).to_pylist())
                for path in self._paths(range(len(self.files)))]

    def files_holding(self, keys) -> int:
        """How many of the generated files hold at least one of ``keys`` (each file holds a contiguous txn_id range)."""
        return len(self._holding(keys))

    def days_holding(self, keys) -> int:
        """How many settlement days (the tables' partitions) hold at least one of ``keys``: a format that pays per
        partition an update touches pays this many."""
        return len({position // self.files_per_day for position in self._holding(keys)})

    def _paths(self, positions) -> list[str]:
        """The generated files at these positions (in ``files``), as paths on their own filesystem."""
        root, files = Files.of(self.path), self.files
        return [(root / files[i].rsplit("/", 1)[1]).path for i in positions]

    def _holding(self, keys) -> set[int]:
        """The positions (in ``files``) of the files holding ``keys``."""
        return {(int(k) - TXN_ID_BASE) // self.rows_per_file for k in keys}

    def hotfix_keys(self, n: int) -> list[int]:
        """``n`` txn_ids drawn uniformly over the whole table, so they scatter over the files."""
        rng = np.random.default_rng([self.seed, 1])
        return sorted((rng.choice(self.rows, size=n, replace=False) + TXN_ID_BASE).tolist())

    def describe(self) -> dict[str, object]:
        return {"path": str(self.path), "rows": self.rows, "files": len(self.files), "bytes": self.bytes,
                "days": self.days, "files_per_day": self.files_per_day, "rows_per_file": self.rows_per_file,
                "seed": self.seed, "generator_version": GENERATOR_VERSION}


def write_once(data_dir: Path | str, table: str, shape: dict, files, progress=print, total: int | None = None) -> str:
    """Write ``files`` ((name, arrow table) pairs) under a folder named by ``shape``'s hash, unless a complete
    copy is already there (a manifest written last marks it complete). Returns the folder's location.

    With ``total`` (how many files come), the first file's size times ``total`` is checked against the free disk
    before the rest are written (``NotEnoughDisk``)."""
    shape = {"table": table, "v": GENERATOR_VERSION, **shape}
    digest = hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:12]
    folder = Files.of(str(data_dir)) / f"{table}-{digest}"
    manifest = folder / "_manifest.json"  # "_" prefix: Spark skips it when reading the folder
    if manifest.is_file():
        return folder.uri
    folder.mkdir()
    count = 0
    for count, (name, data) in enumerate(files, start=1):
        pq.write_table(data, (folder / name).path, compression="snappy", filesystem=folder.fs)
        if count == 1 and total and total > 1:
            first = folder.fs.get_file_info((folder / name).path).size
            ensure_free(folder.uri, first * (total - 1), f"generating {table} ({total:,} files of about "
                        f"{first / 2**20:.2f} MB)")
        if progress and count % 120 == 0:
            progress(f"generated {table}: {count} files")
    (folder / "_manifest.json").write_text(json.dumps(shape | {"files": count}, indent=2))  # last: marks completeness
    return folder.uri


def generate_payments(data_dir: Path, days: int, files_per_day: int, rows_per_file: int, seed: int,
                      progress=print) -> PaymentsData:
    """Write the payments dataset under ``data_dir`` unless a complete copy is already there; return it."""
    files = ((f"part-{day:03d}-{file_no:03d}.parquet", payments_file(seed, day, file_no, files_per_day, rows_per_file))
             for day in range(days) for file_no in range(files_per_day))
    shape = {"days": days, "files_per_day": files_per_day, "rows_per_file": rows_per_file, "seed": seed}
    return PaymentsData(days, files_per_day, rows_per_file, seed,
                        path=write_once(data_dir, "payments", shape, files, progress, total=days * files_per_day))
