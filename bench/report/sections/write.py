"""The write-cost section: update latency, bytes by part, files, write amplification, the update sweep."""


from __future__ import annotations

from pathlib import Path

import pandas as pd

from bench.core import uncertainty
from bench.core.units import human_bytes
from bench.report import charts
from bench.report.html_parts import img as _img
from bench.report.html_parts import note as _note
from bench.report.html_parts import table as _table
from bench.results import load
from bench.results.contract import HOTFIX, UPDATE_SWEEP
from bench.results.schema import SweepUpdate


def _samples(run: load.Run, operation: str) -> pd.DataFrame:
    return pd.DataFrame([{"config_id": r.config_id, "seconds": s}
                         for r in run.records(HOTFIX, operation) for s in r.seconds])


def section_write(run: load.Run, ops: pd.DataFrame, out: Path) -> str:
    upd = ops[ops.operation == "update"]
    if upd.empty:
        return _note("no update measured in this run")
    parts = [_img(charts.latency_by_config(_samples(run, "update"), "Hotfix update latency"), "update latency", out, "update_latency")]
    by_part = written_parts(upd)
    parts.append(_img(charts.stacked_bytes(by_part, "Bytes written by the update, by part"),
                      "bytes written", out, "bytes_written"))
    files = upd[["config_id", "median_s", "fs_bytes_added", "fs_data_files_added", "fs_delete_files_added",
                 "meta_data_files_removed", "meta_delete_files_added", "meta_bytes_added", "meta_bytes_removed",
                 "fs_bytes_removed", "write_amplification", "rows_changed_reported", "rows_changed_verified"]].copy()
    files["fs_bytes_added"] = files.fs_bytes_added.map(human_bytes)
    files["meta_bytes_added"] = files.meta_bytes_added.map(human_bytes)
    files["meta_bytes_removed"] = files.meta_bytes_removed.map(human_bytes)
    files["fs_bytes_removed"] = files.fs_bytes_removed.map(human_bytes)
    files["write_amplification"] = files.write_amplification.map(lambda v: f"{v:,.0f}x" if pd.notna(v) else "–")
    files["median_s"] = [_with_interval(r) for r in upd.itertuples()]
    files.columns = ["configuration", "median s (interval) · CV", "written (fs)", "+data files", "+delete files/DVs/logs",
                     "-data files (meta)", "+delete files (meta)", "written (meta)", "removed (meta)", "removed (fs)",
                     "write amplification", "rows changed (format)", "rows changed (verified)"]
    if "req_total" in upd and upd.req_total.notna().any():  # on an object store: what the update cost in requests
        files.insert(3, "requests (GET/PUT+POST/LIST/DELETE)", [
            f"{_n(r.req_total)} ({_n(r.req_get)}/{_n(r.req_put) + _n(r.req_post)}/{_n(r.req_list)}/{_n(r.req_delete)})"
            for r in upd.itertuples()])
    parts.append(_table(files))
    anatomy = by_part.set_index("config_id").map(human_bytes).reset_index().rename(columns={"config_id": "configuration"})
    parts.append("<h3>What the written files hold</h3>" + _table(anatomy) + _note(
        "Read from the footers of the data files the update wrote. Hudi writes five _hoodie_* meta columns and a "
        "serialized bloom filter (hoodie.index.bloom.num_entries=60000, fpp 1e-9: ~430 KB whatever the file's row "
        "count) into every base file, and commits to its metadata table (.hoodie/metadata) on every write; Iceberg "
        "and Delta add neither. At small rows per file these, not the rows, dominate a copy-on-write rewrite."))
    parts.append(_note("Filesystem columns diff the table directory before and after; metadata columns come from the "
                       "format's own commit record. They disagree on purpose: replaced files stay on disk until "
                       "snapshot expiry / VACUUM / cleaning, so 'removed (fs)' is 0 where metadata removes files. "
                       "Write amplification = bytes written ÷ (rows changed × average bytes per row of the base data)."))
    return "".join(parts)


def _n(value) -> int:
    return 0 if value is None or pd.isna(value) else int(value)


def _with_interval(op) -> str:
    """The median with what its rounds support (``uncertainty.median_text``) · CV, flagged where the rounds vary by
    more than uncertainty.CV_FLAG."""
    low = getattr(op, "ci_low_s", None)
    text = uncertainty.median_text(op.median_s, (low, op.ci_high_s) if low is not None and pd.notna(low) else None,
                                   int(op.rounds) if pd.notna(op.rounds) else None)
    if pd.notna(low):
        text += f" · CV {op.cv:.0%}" + (" (noisy)" if op.cv > uncertainty.CV_FLAG else "")
    return text


def written_parts(upd: pd.DataFrame) -> pd.DataFrame:
    """The update's bytes split into what the rows need and what each format adds around them."""
    def col(name: str) -> pd.Series:
        return pd.to_numeric(upd[name], errors="coerce").fillna(0) if name in upd else pd.Series(0, index=upd.index)
    table, own, index = col("data_table_columns_bytes"), col("data_format_columns_bytes"), col("data_footer_index_bytes")
    has_anatomy = (table + own + index) > 0
    data = col("fs_data_bytes_added")
    mdt = col("fs_metadata_table_bytes_added")
    return pd.DataFrame({
        "config_id": upd.config_id,
        "table's columns": table.where(has_anatomy, data),
        "format's own columns (_hoodie_*)": own,
        "index in file footers (bloom filter)": index,
        "other Parquet overhead": (data - table - own - index).where(has_anatomy, 0).clip(lower=0),
        "deletes / DVs / logs": col("fs_delete_bytes_added"),
        "metadata table (Hudi)": mdt,
        "other metadata": (col("fs_metadata_bytes_added") - mdt).clip(lower=0),
    })


def section_sweep(run: load.Run, ops: pd.DataFrame, out: Path) -> str:
    """Update cost against the size of the update, and where merge-on-read starts to win."""
    sweep = ops[ops.scenario == UPDATE_SWEEP]
    if sweep.empty:
        return ""
    meta = {(r.config_id, r.param): r.view(SweepUpdate) for r in run.records(UPDATE_SWEEP)}
    sweep = sweep.assign(rows_fraction=[meta[(c, p)].rows_fraction for c, p in zip(sweep.config_id, sweep.param)],
                         files_touched=[meta[(c, p)].files_touched for c, p in zip(sweep.config_id, sweep.param)])
    fractions = sweep[sweep.param.str.endswith("pct")]
    parts = [_img(charts.series(fractions.rename(columns={"median_s": "seconds"}), "rows_fraction", "seconds",
                                "Update latency vs share of rows updated (scattered)", "share of rows updated", "seconds", logx=True),
                  "sweep", out, UPDATE_SWEEP)] if not fractions.empty else []  # (a short sweep has only the pivot points)
    rows = []
    for cow_id, other in run.matrix.cow_mor_pairs(set(fractions.config_id)):
        cow = fractions[fractions.config_id == cow_id].set_index("param")
        oth = fractions[fractions.config_id == other].set_index("param")
        wins = [p for p in ("0.01pct", "0.1pct", "1pct", "10pct") if p in cow.index and p in oth.index
                and oth.loc[p, "median_s"] < cow.loc[p, "median_s"]]
        rows.append({"pair": f"{cow_id} vs {other}", f"{other} faster at": ", ".join(wins) or "none",
                     "CoW faster at": ", ".join(p for p in ("0.01pct", "0.1pct", "1pct", "10pct") if p in cow.index and p not in wins) or "none"})
    pivot = sweep.pivot_table(index="param", columns="config_id", values="median_s").round(3).reset_index()
    files = sweep.pivot_table(index="param", columns="config_id", values="fs_bytes_added").map(human_bytes).reset_index()
    parts += [_table(pd.DataFrame(rows)) if rows else "", "<h4>median update seconds</h4>", _table(pivot),
              "<h4>bytes written</h4>", _table(files),
              _note("clustered = hotfix_rows consecutive rows (one or two files); scattered = the same count spread over the table.")]
    return "<h3>Where merge-on-read starts to win (update sweep)</h3>" + "".join(parts)
