"""System pages: one per round, a section per system: the description as submitted, results,
logs and measured ceilings."""

from __future__ import annotations

from collections.abc import Iterator

from collector.site.common import listed, systems_page
from collector.site.data import SiteData
from collector.site.model import Row, Sheet

TABLES = {"site_scores": "results", "runs": "logs", "ceilings": "ceilings"}  # table: rows' name


def systems_with_runs(data: SiteData) -> list[Row]:
    """Every system with a description or runs (site_systems), with its description's fields."""
    described = {s["system_id"]: s for s in data.rows("systems")}
    return [{**described.get(s["system_id"], {}), **s} for s in data.rows("site_systems")]


def pages(data: SiteData) -> list[Sheet]:
    """A page per round of systems (the first part of their ids), each holding the section of
    every system of that round, in site_systems' order."""
    by_system = {
        table: _by_system(data.rows(table)) for table in TABLES
    }  # one pass over each table, not one per system
    sections: dict[str, list[Sheet]] = {}
    for system in systems_with_runs(data):
        sid = system["system_id"]
        path = systems_page(sid)
        rows = {name: by_system[table].get(sid, []) for table, name in TABLES.items()}
        fields = _fields(data.descriptions.get(sid) or {})
        rows["submitted"] = [{"field": f, "value": v} for f, v in fields]
        section = Sheet(path, system["hardware"], data.snapshot, rows=rows, item=system)
        sections.setdefault(path, []).append(section)
    return [
        Sheet(path, f"Systems of {found[0].item['system_id'].split('/', 1)[0]}", data.snapshot,
              rows={"systems": found})
        for path, found in sections.items()
    ]  # fmt: skip


def _by_system(rows: list[Row]) -> dict[str, list[Row]]:
    found: dict[str, list[Row]] = {}
    for row in rows:
        found.setdefault(row.get("system_id"), []).append(row)
    return found


def _fields(value: object, key: str = "") -> Iterator[tuple[str, str]]:
    """A submitted description as (field, text) rows: a nested object opens into rows of its
    own, named by dotted path (collector.versions.cuda), so no row is a blob of JSON."""
    if isinstance(value, dict) and (value or not key):
        for k in sorted(value):
            yield from _fields(value[k], f"{key}.{k}" if key else str(k))
    else:
        yield key, listed(value)
