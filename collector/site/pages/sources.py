"""Sources: official MLPerf (round, division, submitter), local runs, published studies."""

from __future__ import annotations

from collections import Counter

from markupsafe import Markup

from collector.queries import query
from collector.site.data import SiteData
from collector.site.model import Page, Section, Table


def page(data: SiteData) -> Page:
    """sources.md."""
    runs = data.rows("runs")
    official = Counter(
        (r["round"], r["division"], r["submitter"]) for r in runs if r["source"] == "official"
    )
    local = Counter(
        (r["round"], r["submitter"], r.get("scale") or "unknown")
        for r in runs
        if r["source"] == "local"
    )
    sections = [
        Section(
            "Official MLPerf Training results",
            table=Table(
                ("round", "division", "submitter", "runs"),
                tuple((*k, n) for k, n in sorted(official.items())),
            ),
            intro=Markup("Result trees and the commits they were taken from:"),
        ),
        Section(
            "Result trees",
            table=Table(
                ("tree", "repository", "commit", "what it holds"),
                tuple(
                    (s["tree"], s["repository"], s["commit"], s["description"])
                    for s in query.sources().to_pylist()
                ),
            ),
        ),
        Section(
            "Local runs",
            table=Table(
                ("suite version", "host", "scale", "runs"),
                tuple((*k, n) for k, n in sorted(local.items())),
            )
            if local
            else None,
            intro=Markup(
                "Runs made with collector. Unless the scale is *full*, they are "
                "proxy-scale workloads: smaller data, shorter training; their times "
                "are not comparable with official results."
                if local
                else "No local runs are in this store yet."
            ),
        ),
    ]
    pub = data.rows("published")
    numbers = Counter(r["study"] for r in pub)
    citations = Counter((r["study"], r["citation"]) for r in pub)
    studies = Table(
        ("number", "what it is", "title", "authors", "publisher", "date", "numbers transcribed"),
        tuple(
            (s["number"], s["kind"], s["title"], s["authors"], s["publisher"], s["date"], n)
            for study in sorted(set(numbers) | set(data.studies))
            for s, n in [(data.studies.get(study) or _unlisted(study), numbers[study])]
        ),
        caption="A citation such as “001, Table 7” names the study by its number. "
        "None of these documents gives a web address. A study with no numbers transcribed "
        "states its results only in charts.",
    )
    sections.append(
        Section(
            "Published studies (transcribed)",
            intro=Markup(
                "Numbers copied from published studies, one citation per row "
                "(`runs/published/`). They are the studies' values, not measurements "
                "made by collector."
                if pub
                else "No published numbers are loaded."
            ),
            table=studies if pub else None,
            tables=(
                Table(
                    ("study", "citation", "numbers"),
                    tuple((*k, n) for k, n in sorted(citations.items())),
                    title="Numbers by citation",
                ),
            )
            if pub
            else (),
        )
    )
    return Page("sources.md", "Sources", data.snapshot, sections=tuple(sections))


def _unlisted(study: str) -> dict[str, str]:
    """A study that studies.yml does not describe: its id, and nothing claimed about it."""
    return {
        "number": study,
        "kind": "not described",
        "title": "not described in studies.yml",
        "authors": "",
        "publisher": "",
        "date": "",
    }
