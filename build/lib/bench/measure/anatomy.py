"""What a written Parquet data file is made of: the table's columns, the format's own columns, the footer.

Formats differ in what they add to every data file: Hudi writes five ``_hoodie_*`` meta columns and, for its
bloom index, a serialized bloom filter into each footer; Iceberg and Delta add neither. At small row counts
per file that overhead dominates the bytes a copy-on-write rewrite writes, so the report shows it on its own.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow.parquet as pq

from bench.core.storage import Files

FORMAT_COLUMN_PREFIXES = ("_hoodie_",)
INDEX_FOOTER_KEYS = ("org.apache.hudi.bloomfilter",)  # footer key-value entries that serve an index


def file_anatomy(path: Files) -> dict[str, int]:
    """Bytes of one Parquet file by part (compressed sizes; the parts sum to the file size)."""
    with path.fs.open_input_file(path.path) as handle:
        meta = pq.ParquetFile(handle).metadata
        size = handle.size()
    table_cols = format_cols = 0
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            column = group.column(c)
            if column.path_in_schema.startswith(FORMAT_COLUMN_PREFIXES):
                format_cols += column.total_compressed_size
            else:
                table_cols += column.total_compressed_size
    index = sum(len(k) + len(v) for k, v in (meta.metadata or {}).items() if k.decode() in INDEX_FOOTER_KEYS)
    footer = meta.serialized_size
    return {"files": 1, "bytes": size, "rows": meta.num_rows, "table_columns": table_cols,
            "format_columns": format_cols, "footer_index": index, "footer_other": max(0, footer - index),
            "other": max(0, size - table_cols - format_cols - footer)}


def anatomy(table_dir: Files | str, relpaths: Iterable[str], limit: int = 500) -> dict[str, int]:
    """The parts of up to ``limit`` Parquet files under ``table_dir``, summed."""
    total: dict[str, int] = {}
    root = Files.of(table_dir)
    for rel in sorted(relpaths)[:limit]:
        for key, value in file_anatomy(root / rel).items():
            total[key] = total.get(key, 0) + value
    return total
