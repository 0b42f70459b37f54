"""method-sql.md: the SQL of every derived table, its contract, scoring and variance rules."""

from __future__ import annotations

from markupsafe import Markup

from collector.queries import query
from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.escape import markdown_text
from collector.site.model import Page, Section, Table


def page(data: SiteData) -> Page:
    """The generated half of the method: queries, rules and thresholds as the code has them."""
    rules = query.score_rules().to_pylist()
    sections = [
        Section(
            "Scoring rules",
            intro=Markup("From `collector/queries/score_rules.yml`."),
            table=Table(
                ("source", "round", "benchmark", "runs required", "runs scored", "selection"),
                tuple(tuple(r.values()) for r in rules),
            ),
        ),
        Section(
            "Run-to-run variance",
            intro=Markup("From `collector/site/site.yml`."),
            table=Table(
                ("benchmark", "kind of job", "allowed variance, %"),
                tuple(
                    (b.title, settings().family_title(b.family), b.variance_pct)
                    for b in settings().benchmarks.values()
                ),
            ),
        ),
    ]
    for name, c in query.contracts().items():
        cols = Table(
            ("column", "unit", "meaning"),
            tuple((col["name"], col.get("unit"), col.get("description")) for col in c.columns),
        )
        sql = c.sql.replace("```", "'''")
        sections.append(
            Section(
                f"{name}",
                intro=Markup(
                    f"{_md(c.description)}\n\nGrain: {_md(c.grain)}.\n\n```sql\n{sql.strip()}\n```"
                ),
                table=cols,
            )
        )
    return Page(
        "method-sql.md",
        "Queries and rules",
        data.snapshot,
        sections=tuple(sections),
        intro=Markup(
            "How each metric is computed, as the code computes it. The prose "
            "is on the [Method](method.md) page."
        ),
    )


def _md(text: str) -> str:
    return markdown_text(text)
