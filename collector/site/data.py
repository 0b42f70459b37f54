"""The data behind the site: every derived table, read once from one store snapshot (a
`Warehouse`), with the reference data the pages name.

Derived tables are optional: a page shows what exists and says what is not measured yet.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from collector.site.config import settings
from collector.site.model import Row
from collector.warehouse import Warehouse


@dataclass
class SiteData:
    """Derived tables by name, plus system descriptions, the published studies and the
    official trees read, all from one store snapshot."""

    store: Path
    snapshot: str
    tables: dict[str, pa.Table]
    descriptions: dict[str, dict[str, Any]] = field(default_factory=dict)
    studies: dict[str, dict[str, str]] = field(default_factory=dict)  # by study id
    trees: list[Row] = field(default_factory=list)  # the official result trees read (sources)
    read: dict[str, list[Row]] = field(default_factory=dict)  # rows already read, by table
    downloads: dict[str, bytes] | None = None  # the download files, once made
    saved: dict[str, Path] = field(default_factory=dict)  # tables to read when asked for

    def table(self, name: str) -> pa.Table | None:
        """A table by name (read from its saved Parquet file when first asked for), or None
        when the table is not defined yet."""
        if name not in self.tables and name in self.saved:
            self.tables[name] = pq.read_table(self.saved[name])
        return self.tables.get(name)

    def names(self) -> list[str]:
        """The tables' names, sorted."""
        return sorted(self.tables.keys() | self.saved.keys())

    def count(self, name: str) -> int:
        """A table's number of rows (a saved one's from its file's footer)."""
        if name in self.tables or name not in self.saved:
            return self.tables[name].num_rows
        return pq.read_metadata(self.saved[name]).num_rows

    def rows(self, name: str) -> list[Row]:
        """The table's rows (read once: pages share them and must not change them), or none
        when the table is not defined yet."""
        if name not in self.read:
            table = self.table(name)
            self.read[name] = table.to_pylist() if table is not None else []
        return self.read[name]


def load(wh: Warehouse, saved: Path | None = None) -> SiteData:
    """Read every derived table and the extras the pages need from the warehouse's snapshot;
    with `saved`, a docs folder whose downloads hold this snapshot's tables (collector.site.
    build.update says when), the tables and their download files are read from there."""
    # One thread (Warehouse(threads=1)): rows that tie in a table's ORDER BY, and sums over
    # many values, come out in the same order and to the same last bit every time, so
    # regenerated pages are byte-identical when the data is.
    tables = {}
    if saved is None:
        tables = {
            name: wh.table(name).to_arrow_table()
            for name in wh.names()
            if name not in settings().internal_tables
        }
        tables["published"] = wh.sql(
            "SELECT 'published' AS source, * FROM store.published ORDER BY row_id"
        ).to_arrow_table()
    descriptions = {
        sid: _parse(text)
        for sid, text in wh.sql("SELECT system_id, description_json FROM store.systems").fetchall()
    }
    studies = wh.sql("SELECT * FROM store.studies").to_arrow_table().to_pylist()
    trees = wh.sql("SELECT * FROM store.sources ORDER BY tree").to_arrow_table().to_pylist()
    data = SiteData(
        wh.path,
        wh.snapshot or "",
        tables,
        descriptions,
        {s.pop("study"): s for s in studies},
        trees,
    )
    if saved is not None:
        folder = saved / "data"
        data.downloads = {f"data/{p.name}": p.read_bytes() for p in sorted(folder.iterdir())}
        data.saved = {path.stem: path for path in folder.glob("*.parquet")}
    return data


def _parse(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        doc = json.loads(text)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}
