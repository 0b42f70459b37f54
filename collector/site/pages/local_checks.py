"""Local pipeline checks: proxy-scale runs made with `collector run`, which check that the
pipeline and the hardware work and answer no deadline or buying question."""

from __future__ import annotations

from markupsafe import Markup

from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.model import Page, Section, Table
from collector.site.pages.common import link, num, rel, system_page

PATH = "local-checks.md"


def page(data: SiteData) -> Page:
    """local-checks.md: one row per proxy-scale configuration, converged or not."""
    proxies = [r for r in data.rows("site_scores") if r["evidence"] == "proxy"]
    rows = tuple(
        (
            settings().benchmark(r["benchmark"]).title,
            link(r["hardware"], rel(PATH, system_page(r))),
            r["scale"] or "not stated",
            r["precision"] or "not stated",
            f"{r['runs_converged']} of {r['runs_total']}",
            Markup(num(r["score_minutes"])) if r["score_minutes"] else r["unscorable_reason"],
            r["submitter"],
        )
        for r in proxies
    )
    intro = Markup(
        "Runs made with `collector run` at a proxy scale (`tiny`, `small`): small synthetic data "
        "sets and models that train in seconds. They check that the pipeline, the logs and the "
        "hardware work end to end. Their times say nothing about how long the real job takes, "
        "so they answer no deadline on the [Guide](guide.md), no finding on Home and no "
        "comparison on [Compare](compare.md); the `scaling`, `precision_gain` and "
        "`interconnect_delta` tables on [Data](data.md) still hold their rows."
    )
    table = Table(
        ("benchmark", "hardware", "scale", "precision", "runs converged", "score, minutes", "host"),
        rows,
        caption="Rows of the site_scores table whose evidence is proxy.",
    )
    section = Section(
        "Proxy-scale runs",
        table=table if rows else None,
        intro=Markup("" if rows else "No proxy-scale runs in this store."),
    )
    return Page(PATH, "Local pipeline checks", data.snapshot, intro=intro, sections=(section,))
