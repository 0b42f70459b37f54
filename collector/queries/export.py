"""Derived tables as CSV, for `collector query -f csv` and the site's downloads."""

from __future__ import annotations

import csv
import io
from typing import Any

import pyarrow as pa

# a cell a spreadsheet would run as a formula (or a command, through DDE) when it starts so
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "|")


def csv_text(table: pa.Table) -> str:
    """The table as CSV: every column, floats with every digit (repr), nulls empty. A text
    cell that a spreadsheet would read as a formula starts with an apostrophe, which shows
    the text as written instead."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.column_names)
    writer.writerows([csv_cell(v) for v in row.values()] for row in table.to_pylist())
    return buffer.getvalue()


def csv_cell(value: Any) -> str:
    """One value as CSV text (see csv_text)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    return "'" + text if isinstance(value, str) and text.startswith(FORMULA_START) else text
