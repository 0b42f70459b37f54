"""Sources: official MLPerf (round, division, submitter), local runs, published studies."""

from __future__ import annotations

from collections import Counter

from collector.site.data import SiteData
from collector.site.model import Sheet

# a study that studies.yml does not describe: its id, and nothing claimed about it
UNLISTED = {"kind": "not described", "title": "not described in studies.yml", "authors": "",
            "publisher": "", "date": ""}  # fmt: skip


def page(data: SiteData) -> Sheet:
    """sources.md: site_sources, the result trees, and the studies with their numbers."""
    published = data.rows("published")
    counts = Counter(r["study"] for r in published)
    studies = [
        {"number": s, **UNLISTED, **data.studies.get(s, {}), "numbers": counts[s]}
        for s in sorted(set(counts) | set(data.studies))
    ]
    rows = {"runs": data.rows("site_sources"), "trees": data.trees}
    rows |= {"studies": studies, "published": published}
    return Sheet("sources.md", "Sources", data.snapshot, rows=rows)
