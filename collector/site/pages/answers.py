"""Answers: a buyer's six questions, each answered directly from its own derived table: the
smallest system within a deadline (site_smallest), any two accelerator models side by side
(site_model_pairs), the interconnect from controlled comparisons (site_interconnect), precision
gains measured here (site_precision), whether N x MODEL trains it in time (site_nearest) and
cost and energy per model of the newest round (site_cost). The pickers run in the browser on
the rows embedded in the page (answers.js); the tables that need no picking are rendered here."""

from __future__ import annotations

from collector.site.common import benchmark_names, benchmark_page, built, rel
from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.model import Row, Sheet

PATH = "answers.md"
# The tables the page reads, each row with its benchmark's title and page: of the tables the
# pickers read, the columns they need (the rest is in the downloads); None: every column.
TABLES = {
    "site_smallest": None,
    "site_model_pairs": (
        "benchmark", "round", "quality_target", "accelerators", "model_a", "model_b",
        "hardware_a", "hardware_b",
        "submitter_a", "submitter_b", "runs_a", "runs_b", "score_a_minutes", "score_b_minutes",
        "raw_a_minutes", "raw_b_minutes", "rcp_a", "rcp_b", "logs_url_a", "logs_url_b",
        "a_over_b_speed", "ci_low", "ci_high", "tie",
    ),
    "site_nearest": (
        "benchmark", "model", "asked_accelerators", "step_rank", "evidence_kind", "round",
        "hardware", "runs", "score_minutes", "raw_score_minutes", "rcp_scaling_factor",
        "fastest_minutes", "slowest_minutes", "quality_target", "quality_metric", "logs_url",
        "inferred_minutes", "step",
    ),
    "site_cost": None,
    "site_interconnect": None,
    "site_precision": None,
}  # fmt: skip


def page(data: SiteData) -> Sheet:
    """answers.md: the picker tables embedded as data (with each benchmark's title and page),
    and the interconnect and precision tables as rows."""
    rows: dict[str, list[Row]] = {}
    for table, columns in TABLES.items():
        rows[table] = [
            {**{c: r[c] for c in (columns or r.keys())}, **_benchmark(r["benchmark"])}
            for r in data.rows(table)
        ]
    rows["site_interconnect_summary"] = [
        {**r, "largest_title": settings().benchmark(r["largest_benchmark"]).title}
        for r in data.rows("site_interconnect_summary")
    ]
    # the first picker offers what it can answer: a benchmark a later round renamed is asked
    # for by its new name only
    rows["benchmarks"] = [
        {"benchmark": b, **_benchmark(b)} for b in benchmark_names(data.rows("site_smallest"))
    ]
    return Sheet(PATH, "Answers to a buyer's questions", data.snapshot, rows=rows)


def _benchmark(name: str) -> Row:
    """A benchmark's title and the address of its page (relative to this page, as built)."""
    href = built(rel(PATH, benchmark_page(name)))
    return {"title": settings().benchmark(name).title, "href": href}
