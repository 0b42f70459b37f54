"""System pages: one per round, a section per system: the description as submitted, results,
logs and measured ceilings."""

from __future__ import annotations

from collections.abc import Iterator

from collector.site.common import groups, listed, systems_page
from collector.site.data import SiteData
from collector.site.model import Sheet

TABLES = {"site_scores": "results", "runs": "logs", "ceilings": "ceilings"}  # table: rows' name


def pages(data: SiteData) -> list[Sheet]:
    """A page per round of systems (the first part of their ids), each holding the section of
    every system with a description or runs (site_systems) of that round, in site_systems'
    order."""
    # one pass over each table, not one per system
    by_system = {table: dict(groups(data.rows(table), "system_id")) for table in TABLES}
    described = {s["system_id"]: s for s in data.rows("systems")}
    sections: dict[str, list[Sheet]] = {}
    for row in data.rows("site_systems"):
        sid = row["system_id"]
        system = {**described.get(sid, {}), **row}  # with its description's fields
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


def _fields(value: object, key: str = "") -> Iterator[tuple[str, str]]:
    """A submitted description as (field, text) rows: a nested object opens into rows of its
    own, named by dotted path (collector.versions.cuda), so no row is a blob of JSON."""
    if isinstance(value, dict) and (value or not key):
        for k in sorted(value):
            yield from _fields(value[k], f"{key}.{k}" if key else str(k))
    else:
        yield key, listed(value)
