"""Data page and the downloads it links: every derived table as CSV and Parquet."""

from __future__ import annotations

import csv
import io

import pyarrow as pa
import pyarrow.parquet as pq
from markupsafe import Markup

from collector import store as stores
from collector.queries import query
from collector.site.data import SiteData
from collector.site.model import Page, Section, Table
from collector.site.pages.common import link


def files(data: SiteData) -> dict[str, bytes]:
    """data/<table>.csv and .parquet for every table, and the raw-log manifest."""
    out: dict[str, bytes] = {}
    for name, table in sorted(data.tables.items()):
        out[f"data/{name}.csv"] = _csv(table)
        out[f"data/{name}.parquet"] = _parquet(table)
    manifest = stores.shipped("official", "manifest.csv")
    if manifest.exists():
        out["data/official-manifest.csv"] = manifest.read_bytes()
    return out


def _csv(table: pa.Table) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.column_names)
    for row in table.to_pylist():
        writer.writerow(
            ["" if v is None else repr(v) if isinstance(v, float) else v for v in row.values()]
        )
    return buffer.getvalue().encode()


def _parquet(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def page(data: SiteData) -> Page:
    """data.md."""
    contracts = query.contracts()
    rows = []
    for name, table in sorted(data.tables.items()):
        c = contracts.get(name)
        rows.append(
            (
                name,
                c.grain if c else "one row per transcribed number (runs/published)",
                table.num_rows,
                link("CSV", f"data/{name}.csv"),
                link("Parquet", f"data/{name}.parquet"),
            )
        )
    sections = [
        Section(
            "Derived tables",
            table=Table(("table", "grain", "rows", "CSV", "Parquet"), tuple(rows)),
            intro=Markup(
                "Every number on these pages comes from one of these tables. The "
                "column meanings and units are on the [Queries and rules](method-sql.md) "
                "page. `runs` names each log and its sha256."
            ),
        ),
        Section(
            "Raw logs",
            intro=Markup(
                "The [manifest of official files](data/official-manifest.csv) lists every result "
                "log and system description with its repository, commit and sha256; the `manifest` "
                "table covers every stored file, local runs included."
            ),
        ),
    ]
    return Page("data.md", "Data", data.snapshot, sections=tuple(sections))
