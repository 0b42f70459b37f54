"""Data page and the downloads it links: every table as compressed Parquet and compressed CSV,
one file of each per table."""

from __future__ import annotations

import gzip
import os
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.parquet as pq

from collector.queries import query
from collector.queries.export import csv_bytes
from collector.site.data import SiteData
from collector.site.model import Sheet

GZIP_LEVEL = 6  # gzip's default: level 9 takes twice as long for 2% less
PARQUET_LEVEL = 9  # zstd: 15% smaller than its default level 1, in about the same time


def files(data: SiteData) -> dict[str, bytes]:
    """data/<table>.parquet (zstd) and data/<table>.csv.gz for every table, made on every
    CPU (Arrow and zlib release the GIL)."""

    def one(item: tuple[str, pa.Table]) -> dict[str, bytes]:
        name, table = item
        parquet = pa.BufferOutputStream()
        pq.write_table(table, parquet, compression="zstd", compression_level=PARQUET_LEVEL)
        return {
            f"data/{name}.csv.gz": gzip.compress(csv_bytes(table), GZIP_LEVEL, mtime=0),
            f"data/{name}.parquet": parquet.getvalue().to_pybytes(),
        }

    with ThreadPoolExecutor(len(os.sched_getaffinity(0))) as pool:
        made = list(pool.map(one, [(name, data.table(name)) for name in data.names()]))
    return {path: content for found in made for path, content in found.items()}


def page(data: SiteData) -> Sheet:
    """data.md: every table with its grain (its contract's) and row count."""
    grains = {name: c.grain for name, c in query.contracts().items()}
    tables = [
        {"name": name, "grain": grains.get(name), "rows": data.count(name)} for name in data.names()
    ]
    return Sheet("data.md", "Data", data.snapshot, rows={"tables": tables})
