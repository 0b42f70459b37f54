"""Guide: the configurations that can answer a deadline (the site_guide table: official
scores, the user's own full-size runs and projections from full-size throughput), filtered in
the browser. Proxy-scale runs never answer a deadline: they are on Local pipeline checks."""

from __future__ import annotations

from collector.site.common import benchmark_names, benchmark_page, newest, rel
from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.model import GuidePage, Row

PATH = "guide.md"
COLUMNS = (
    "benchmark", "title", "family", "evidence", "round", "hardware", "vendor",
    "accelerator_model", "accelerators", "nodes", "one_server", "precision", "score_minutes",
    "fastest_minutes", "slowest_minutes", "runs_used", "submitter", "system_id",
    "raw_score_minutes", "rcp_scaling_factor",
)  # fmt: skip


def rows(data: SiteData) -> list[Row]:
    """The guide table (site_guide): one row per scored configuration that may answer a
    deadline, newest round first, then by time; an official one with its raw olympic mean
    and RCP factor, so a deadline shows both."""
    return [
        {
            **{c: r.get(c) for c in COLUMNS},
            "title": settings().benchmark(r["benchmark"]).title,
            "family": settings().family_title(settings().benchmark(r["benchmark"]).family),
        }
        for r in data.rows("site_guide")
    ]


def page(data: SiteData) -> GuidePage:
    """guide.md: the form and the guide table embedded as data."""
    table = rows(data)
    families: dict[str, list[tuple[str, str]]] = {}
    for bench in benchmark_names(table):
        b = settings().benchmark(bench)
        families.setdefault(b.family, []).append((bench, b.title))
    workloads = tuple(
        (settings().family_title(key), tuple(families[key]))
        for key in dict.fromkeys([*settings().families, *sorted(families)])  # each once
        if key in families
    )
    for r in table:
        r["benchmark_href"] = rel(PATH, benchmark_page(r["benchmark"]))
    return GuidePage(
        PATH,
        "Guide: what trains in time",
        data.snapshot,
        workloads=workloads,
        vendors=tuple(sorted({r["vendor"] for r in table if r["vendor"]})),
        models=tuple(sorted({r["accelerator_model"] for r in table if r["accelerator_model"]})),
        precisions=tuple(sorted({r["precision"] for r in table if r["precision"]})),
        deadline_hours=settings().guide_deadline_hours,
        newest_round=newest(r["round"] for r in table if r["evidence"] == "official"),
        rows=tuple(table),
    )
