"""Rounds: what the same class of system gained from one MLPerf round to the next."""

from __future__ import annotations

from markupsafe import Markup

from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.model import Page, Section, Table
from collector.site.pages.common import benchmark_page, interval, link, num, rel, system_page

PATH = "rounds.md"


def page(data: SiteData) -> Page:
    """rounds.md: the rows of site_round_gains, one table per kind of evidence."""
    gains = data.rows("site_round_gains")
    tables = []
    for evidence in ("official", "local"):
        rows = tuple(
            (
                link(
                    settings().benchmark(g["benchmark"]).title,
                    rel(PATH, benchmark_page(g["benchmark"])),
                ),
                g["class"],
                link(
                    f"{g['old_submitter']} {g['old_system']}",
                    rel(PATH, system_page({"system_id": g["old_system_id"]})),
                ),
                g["old_round"],
                num(g["old_minutes"]),
                link(
                    f"{g['new_submitter']} {g['new_system']}",
                    rel(PATH, system_page({"system_id": g["new_system_id"]})),
                ),
                g["new_round"],
                num(g["new_minutes"]),
                Markup(f"**{num(g['speedup'])}x**"),
                interval(g["speedup_low"], g["speedup_high"], "x"),
            )
            for g in gains
            if g["evidence"] == evidence
        )
        if rows:
            columns = (
                "benchmark", "class", "earlier", "round", "minutes", "later", "round",
                "minutes", "speedup", "run range",
            )  # fmt: skip
            title = "Official MLPerf results" if evidence == "official" else "Your own runs"
            tables.append(Table(columns, rows, title=title))
    intro = Markup(
        "The fastest system of each class (the same count of the same accelerator model on "
        "one server) in each round, against the previous round it appears in. Speedup: "
        "earlier score / later score; run range: fastest earlier run / slowest later run to "
        "slowest earlier run / fastest later run. A gain mixes hardware, software and the "
        "benchmark's own rules: each system's page has its full description. Rows of the "
        "`site_round_gains` table."
        if tables
        else "No class of system has scored results in more than one round in this store."
    )
    section = Section("Same class of system, successive rounds", intro=intro, tables=tuple(tables))
    return Page(PATH, "Rounds", data.snapshot, sections=(section,))
