"""The page's building blocks: an embedded chart (also saved as a PNG), a data table, a note."""

from __future__ import annotations

import base64
import html
from pathlib import Path

import pandas as pd


def img(png: bytes, alt: str, out: Path, name: str) -> str:
    (out / "charts").mkdir(parents=True, exist_ok=True)
    (out / "charts" / f"{name}.png").write_bytes(png)
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}"></figure>'


def table(frame: pd.DataFrame) -> str:
    """A data table; float columns that hold only whole numbers (counts beside a missing value) print as integers."""
    frame = frame.copy()
    for column in frame.columns:
        values = frame[column]
        if pd.api.types.is_float_dtype(values) and values.notna().any() and (values.dropna() % 1 == 0).all():
            frame[column] = [str(int(v)) if pd.notna(v) else "–" for v in values]
    return frame.to_html(index=False, classes="data", border=0, na_rep="–", escape=True)


def note(text: str) -> str:
    return f'<p class="note">{html.escape(text)}</p>'
