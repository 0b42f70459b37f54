"""System pages: the description as submitted, results, logs and measured ceilings."""

from __future__ import annotations

from collections.abc import Iterator

from collector.site.common import listed, system_page
from collector.site.data import SiteData
from collector.site.model import Row, Sheet

TABLES = {"site_scores": "results", "runs": "logs", "ceilings": "ceilings"}  # table: rows' name


def systems_with_runs(data: SiteData) -> list[Row]:
    """Every system with a description or runs (site_systems), with its description's fields."""
    described = {s["system_id"]: s for s in data.rows("systems")}
    return [{**described.get(s["system_id"], {}), **s} for s in data.rows("site_systems")]


def page(data: SiteData, system: Row) -> Sheet:
    """One system's page: its rows of site_scores, runs and ceilings."""
    sid = system["system_id"]
    fields = _fields(data.descriptions.get(sid) or {})
    rows = {n: [r for r in data.rows(t) if r.get("system_id") == sid] for t, n in TABLES.items()}
    rows["submitted"] = [{"field": f, "value": v} for f, v in fields]
    return Sheet(system_page(sid), system["hardware"], data.snapshot, rows=rows, item=system)


def _fields(value: object, key: str = "") -> Iterator[tuple[str, str]]:
    """A submitted description as (field, text) rows: a nested object opens into rows of its
    own, named by dotted path (collector.versions.cuda), so no row is a blob of JSON."""
    if isinstance(value, dict) and (value or not key):
        for k in sorted(value):
            yield from _fields(value[k], f"{key}.{k}" if key else str(k))
    else:
        yield key, listed(value)
