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
    return frame.to_html(index=False, classes="data", border=0, na_rep="–", escape=True)


def note(text: str) -> str:
    return f'<p class="note">{html.escape(text)}</p>'
