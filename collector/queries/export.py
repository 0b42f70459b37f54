"""Derived tables as CSV, for `collector query -f csv` and the site's downloads."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

# a cell a spreadsheet would run as a formula (or a command, through DDE) when it starts so
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "|")
FORMULA_PATTERN = "^[=+\\-@\t\r|]"


def csv_rows(columns: Sequence[str], rows: Iterable[Iterable[Any]]) -> str:
    """Rows as CSV: every column, floats with every digit (repr), nulls empty. A text cell
    that a spreadsheet would read as a formula starts with an apostrophe, which shows the
    text as written instead."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([csv_cell(v) for v in row] for row in rows)
    return buffer.getvalue()


def csv_cell(value: Any) -> str:
    """One value as CSV text (see csv_rows)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    return "'" + text if isinstance(value, str) and text.startswith(FORMULA_START) else text


def csv_bytes(table: pa.Table) -> bytes:
    """The table as CSV for downloads, written by Arrow: a header, then one line per row;
    numbers with every digit they need, null as an empty cell, a list as its JSON text, and a
    text cell that a spreadsheet would read as a formula started with an apostrophe (as in
    csv_rows)."""
    import json

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as csv_arrow

    for i, field in enumerate(table.schema):
        column = table.column(i)
        if pa.types.is_list(field.type):
            text = [None if v is None else json.dumps(v) for v in column.to_pylist()]
            column = pa.chunked_array([pa.array(text, pa.string())])
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            risky = pc.match_substring_regex(column, FORMULA_PATTERN)
            column = pc.if_else(risky, pc.binary_join_element_wise("'", column, ""), column)
            table = table.set_column(i, field.name, column)
    sink = io.BytesIO()
    csv_arrow.write_csv(table, sink, csv_arrow.WriteOptions(quoting_style="needed"))
    return sink.getvalue()
