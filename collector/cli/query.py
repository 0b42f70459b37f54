"""`collector query NAME`: print a derived table as a text table, CSV, JSON or Parquet.

The text table shows the columns a table's contract lists under `display` (those that say
which row it is and what it answers), each cell cut to CELL_CHARS, so that it reads in a
120-column terminal; `--all-columns` prints every column in full. CSV, JSON and Parquet always
carry every column.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from collector.cli.app import app
from collector.errors import InputError, one_line
from collector.store.outputs import refuse_store, write_file

FORMATS = ("table", "csv", "json", "parquet")
CELL_CHARS = 28  # the longest cell the default text table prints, with its ellipsis


@app.command("query")
def query_command(
    name: Annotated[
        str | None, typer.Argument(help="Derived table, e.g. scores, runs, systems, issues.")
    ] = None,
    store: Annotated[Path | None, typer.Option(help="Store folder.")] = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="table, csv, json or parquet.")
    ] = "table",
    sql: Annotated[
        str | None,
        typer.Option(
            "--sql",
            help="Ad-hoc SQL: one read-only SELECT over store.* and the derived tables, "
            "which reads nothing outside the store's snapshot.",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file instead of standard output."),
    ] = None,
    all_columns: Annotated[
        bool,
        typer.Option("--all-columns", help="Text table: every column, cells in full."),
    ] = False,
) -> None:
    """Query a derived table, or run ad-hoc SQL with --sql."""
    from collector.queries.query import contract  # the query engine loads only when a query runs
    from collector.warehouse import Warehouse

    if fmt not in FORMATS:
        raise InputError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if (name is None) == (sql is None):
        raise InputError(f"give a table name or --sql; tables: {', '.join(Warehouse.names())}")
    if fmt == "parquet" and output is None:
        raise InputError("--format parquet needs --output FILE")
    if output is not None:  # before the query runs: a wrong place is said at once
        refuse_store(output, "collector query")
    with Warehouse(store) as wh:
        relation = wh.sql(sql) if sql is not None else wh.table(name or "")
        if fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            sink = pa.BufferOutputStream()
            pq.write_table(relation.to_arrow_table(), sink)
            write_file(output, sink.getvalue().to_pybytes())
            return
        hidden = None
        if fmt == "table" and name is not None and not all_columns:
            shown = contract(name).display or None
            if shown is not None:  # only those columns are read
                hidden = len(relation.columns) - len(shown)
                relation = relation.project(", ".join(f'"{c}"' for c in shown))
        text = render(relation.columns, relation.fetchall(), fmt, hidden)
    if output is not None:
        write_file(output, text.encode())
    else:
        sys.stdout.write(text)


def render(
    columns: list[str], rows: list[tuple[Any, ...]], fmt: str, hidden: int | None = None
) -> str:
    """Rows as text: an aligned table, CSV or JSON. With `hidden`, the number of columns a
    contract's display left out, the text table cuts each cell to CELL_CHARS and says so."""
    if fmt == "json":
        from collector.queries.query import to_json_rows

        return to_json_rows([dict(zip(columns, row, strict=True)) for row in rows]) + "\n"
    if fmt == "csv":
        from collector.queries.export import csv_rows

        return csv_rows(columns, rows)
    cells = [[_cell(v) for v in row] for row in rows]
    if hidden is not None:  # each cell cut to CELL_CHARS, its ellipsis included
        cells = [
            [c if len(c) <= CELL_CHARS else c[: CELL_CHARS - 1] + "…" for c in r] for r in cells
        ]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(columns)]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(columns, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    more = f"; {hidden} more columns with --all-columns" if hidden else ""
    lines.append(f"({len(cells)} rows{more})")
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    """A cell of the text table: six significant digits, one printable line."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return one_line(str(value))
