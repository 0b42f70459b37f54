"""Scored configurations, enriched for pages: evidence kind, run spread, domain, links."""

from __future__ import annotations

from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.pages.common import Row, accel_label, config_label, kind, system_page


def configurations(data: SiteData, scored_only: bool = True) -> list[Row]:
    """Every scores row (scored ones by default) with its spread and labels added."""
    out = []
    for row in data.rows("scores"):
        if scored_only and row["score_minutes"] is None:
            continue
        spread = data.spread(row) or {}
        bench = settings().benchmark(row["benchmark"])
        config, hardware = config_label(row), accel_label(row)
        out.append(
            {
                **row,
                "kind": kind(row),
                "minutes": row["score_minutes"],
                "fastest_minutes": spread.get("fastest_minutes"),
                "slowest_minutes": spread.get("slowest_minutes"),
                "logs": list(spread.get("logs") or []),
                "domain": bench.domain,
                "title": bench.title,
                "hardware": hardware,
                "config": config,
                "label": f"{config} · {hardware}",
                "system_doc": system_page(row),
            }
        )
    return out
