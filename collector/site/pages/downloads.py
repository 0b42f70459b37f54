"""Data page and the downloads it links: every derived table as CSV and Parquet."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from collector import store as stores
from collector.queries import query
from collector.queries.export import csv_text
from collector.site.data import SiteData
from collector.site.model import Sheet


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
    return csv_text(table).encode()


def _parquet(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def page(data: SiteData) -> Sheet:
    """data.md: every table with its grain (its contract's) and row count."""
    grains = {name: c.grain for name, c in query.contracts().items()}
    tables = [
        {"name": name, "grain": grains.get(name), "rows": table.num_rows}
        for name, table in sorted(data.tables.items())
    ]
    return Sheet("data.md", "Data", data.snapshot, rows={"tables": tables})
