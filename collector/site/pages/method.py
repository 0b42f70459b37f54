"""method-sql.md: the projection's measured error, the SQL of every derived table, its
contract, scoring and variance rules."""

from __future__ import annotations

from dataclasses import asdict

from collector.queries import query
from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.model import Sheet


def page(data: SiteData) -> Sheet:
    """The generated half of the method: queries, rules and thresholds as the code has them."""
    rows = {
        "projection_error": data.rows("projection_error"),
        "projection_anchor_error": data.rows("projection_anchor_error"),
        "rules": query.score_rules().to_pylist(),
        "benchmarks": [asdict(b) for b in settings().benchmarks.values()],
        "contracts": [asdict(c) for c in query.contracts().values()],
    }
    return Sheet("method-sql.md", "Queries and rules", data.snapshot, rows=rows)
