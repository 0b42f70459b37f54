"""The data behind the site: every derived table, read once from one store snapshot (a
`Warehouse`), with the reference data the pages name.

Derived tables are optional: a page shows what exists and says what is not measured yet.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa

from collector.site.config import settings
from collector.warehouse import Warehouse

Row = dict[str, Any]


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

    def rows(self, name: str) -> list[Row]:
        """The table's rows (read once: pages share them and must not change them), or none
        when the table is not defined yet."""
        if name not in self.read:
            table = self.tables.get(name)
            self.read[name] = table.to_pylist() if table is not None else []
        return self.read[name]


def load(wh: Warehouse) -> SiteData:
    """Read every derived table and the extras the pages need from the warehouse's snapshot.

    The last snapshot read is kept in memory with its tables, for `mkdocs serve`, which
    rebuilds the pages in one process after each change of a template or static source."""
    key = (os.path.realpath(wh.path), wh.snapshot, _queries_digest())
    if _LOADED.get(key) is None:
        _LOADED.clear()
        _LOADED[key] = _load(wh)
    return _LOADED[key]


_LOADED: dict[tuple[str, str | None, str], SiteData] = {}


def _queries_digest() -> str:
    """A digest of the derived tables' SQL and contracts: what the data depends on."""
    digest = hashlib.sha256()
    for path in sorted(resources.files("collector.queries").iterdir(), key=lambda p: p.name):
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _load(wh: Warehouse) -> SiteData:
    # One thread (Warehouse(threads=1)): rows that tie in a table's ORDER BY, and sums over
    # many values, come out in the same order and to the same last bit every time, so
    # regenerated pages are byte-identical when the data is.
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
    return SiteData(
        wh.path,
        wh.snapshot or "",
        tables,
        descriptions,
        {s.pop("study"): s for s in studies},
        trees,
    )


def _parse(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        doc = json.loads(text)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}
