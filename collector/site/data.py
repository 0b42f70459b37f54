"""The data behind the site: every derived table that exists, read once from one store snapshot.

Derived tables are optional: a page shows what exists and says what is not measured yet.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from collector import store as stores
from collector.errors import InputError
from collector.ingest.published import load_studies
from collector.queries import query
from collector.site.config import settings
from collector.store.snapshot import current_name

Row = dict[str, Any]


@dataclass
class SiteData:
    """Derived tables by name, plus system descriptions and the published studies."""

    store: Path
    snapshot: str
    tables: dict[str, pa.Table]
    descriptions: dict[str, dict[str, Any]] = field(default_factory=dict)
    studies: dict[str, dict[str, str]] = field(default_factory=dict)  # by study id
    read: dict[str, list[Row]] = field(default_factory=dict)  # rows already read, by table

    def rows(self, name: str) -> list[Row]:
        """The table's rows (read once: pages share them and must not change them), or none
        when the table is not defined yet."""
        if name not in self.read:
            table = self.tables.get(name)
            self.read[name] = table.to_pylist() if table is not None else []
        return self.read[name]


def load(store: str | Path | None = None) -> SiteData:
    """Read every defined derived table and the extras the pages need from one snapshot."""
    store_path = stores.resolve(store)
    snapshot = current_name(store_path)
    if snapshot is None:
        raise InputError(f"{store_path}: no store snapshot here; run collector ingest first")
    con = query.connect(store_path)
    # One thread: rows that tie in a table's ORDER BY, and sums over many values, come out in
    # the same order every time, so regenerated pages are byte-identical when the data is.
    con.execute("SET threads TO 1")
    tables = {}
    for name in query.names():  # dependencies first: each table is computed once
        query.materialize(con, name)
        if name not in settings().internal_tables:
            tables[name] = settle(con.sql(f"SELECT * FROM {name}").to_arrow_table())
    if "published" not in tables:
        tables["published"] = _published(con)
    descriptions = {}
    for sid, text in con.sql("SELECT system_id, description_json FROM store.systems").fetchall():
        descriptions[sid] = _parse(text)
    studies = load_studies(stores.shipped("published"))
    return SiteData(store_path, snapshot, tables, descriptions, studies)


SIGNIFICANT_DIGITS = 12


def settle(table: pa.Table) -> pa.Table:
    """Round float columns to 12 significant digits.

    Parallel aggregation sums in varying order, so the last bits of a mean or an interval
    differ from one run to the next; the pages must not (their staleness check compares
    bytes), and no number on them carries more than a few digits.
    """
    for i, col in enumerate(table.schema):
        if pa.types.is_floating(col.type):
            values = table.column(i).to_numpy(zero_copy_only=False).astype(np.float64)
            finite = np.isfinite(values) & (values != 0)
            digits = np.zeros_like(values)
            digits[finite] = SIGNIFICANT_DIGITS - 1 - np.floor(np.log10(np.abs(values[finite])))
            rounded = values.copy()
            rounded[finite] = np.array(
                [round(v, int(d)) for v, d in zip(values[finite], digits[finite], strict=True)]
            )
            mask = table.column(i).is_null().to_numpy(zero_copy_only=False)
            table = table.set_column(i, col, pa.array(rounded, col.type, mask=mask))
    return table


def _published(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """Transcribed study numbers straight from runs/published/*.csv, labelled as published."""
    files = sorted(stores.shipped("published").glob("*.csv"))
    if not files:
        return pa.table({"source": pa.array([], pa.string())})
    listing = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
    return con.sql(
        f"SELECT 'published' AS source, * REPLACE (TRY_CAST(value AS DOUBLE) AS value, "
        f"TRY_CAST(accelerators AS BIGINT) AS accelerators) "
        f"FROM read_csv([{listing}], all_varchar = true, header = true) ORDER BY row_id"
    ).to_arrow_table()


def _parse(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        doc = json.loads(text)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}
