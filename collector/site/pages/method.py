"""method-sql.md: the projection's measured error, the SQL of every derived table, its
contract, scoring and variance rules."""

from __future__ import annotations

from markupsafe import Markup

from collector.queries import query
from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.escape import markdown_text
from collector.site.model import Page, Section, Table
from collector.site.pages.common import num


def page(data: SiteData) -> Page:
    """The generated half of the method: queries, rules and thresholds as the code has them."""
    rules = query.score_rules().to_pylist()
    sections = [
        _projection_error(data),
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
                ("allowed variance, %", "benchmarks"),
                tuple(
                    (v, ", ".join(b.title for b in bs if b.variance_pct == v))
                    for bs in [list(settings().benchmarks.values())]
                    for v in sorted({b.variance_pct for b in bs})
                ),
            ),
        ),
    ]
    site_tables = {n: c for n, c in query.contracts().items() if n.startswith("site_")}
    for name, c in query.contracts().items():
        if name in site_tables:
            continue
        cols = Table(
            ("column", "unit", "meaning"),
            tuple((col["name"], col.get("unit"), col.get("description")) for col in c.columns),
        )
        sql = c.sql.replace("```", "'''")
        sections.append(
            Section(
                f"{name}",
                intro=Markup(f"{_md(c.description)}\n\nGrain: {_md(c.grain)}."),
                table=cols,
                notes=(Markup(f"```sql\n{sql.strip()}\n```"),),
                folded=f"Its {len(c.columns)} columns and its SQL",
            )
        )
    sections.append(
        Section(
            "Tables the pages read",
            intro=Markup(
                "Joins of the tables above, in the words the pages use: no new measure. Their "
                "SQL is in `collector/queries/<table>.sql`, their columns in the downloads on "
                "[Data](data.md)."
            ),
            table=Table(
                ("table", "grain"),
                tuple((n, c.grain) for n, c in site_tables.items()),
            ),
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


def _projection_error(data: SiteData) -> Section:
    """How far projected times to train miss on official submissions (projection_error)."""
    return Section(
        "Projection error",
        intro=Markup(
            "A time to train *projected from measured throughput* is the samples that the "
            "official runs nearest in global batch trained to reach the quality target, divided "
            "by the measured samples per second, plus the measured start-up and evaluations "
            "(`projection`). The same method is checked on official submissions whose logs time "
            "their epochs and evaluations: each one is projected from its own timings and the "
            "epochs to target of the *other* submissions of the same benchmark and target "
            "nearest in global batch, and compared with its real score. The goal is a median "
            "|error| of at most 10%. Of the last two columns, the first is the error with the "
            "submission's own epochs (the timing alone), the second how far the borrowed epochs "
            "are from its own (the samples to target alone)."
        ),
        table=Table(
            (
                "benchmark",
                "quality target",
                "submissions",
                "rounds",
                "median |error|, %",
                "90th percentile |error|, %",
                "median error, %",
                "timing alone: median |error|, %",
                "epochs alone: median |error|, %",
            ),
            tuple(
                (
                    r["benchmark"],
                    num(r["quality_target"]),
                    r["submissions"],
                    ", ".join(r["rounds"]),
                    num(r["median_abs_error_pct"], 2),
                    num(r["p90_abs_error_pct"], 2),
                    num(r["median_error_pct"], 2),
                    num(r["median_abs_timing_error_pct"], 2),
                    num(r["median_abs_epochs_error_pct"], 2),
                )
                for r in data.rows("projection_error")
            ),
        ),
        notes=()
        if data.rows("projection_error")
        else (
            Markup("No official submission in the store times its epochs: nothing to check yet."),
        ),
    )


def _md(text: str) -> str:
    return markdown_text(text)
