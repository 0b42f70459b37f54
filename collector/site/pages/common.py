"""Helpers every page builder shares: labels, number formats, links, evidence kinds."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import posixpath
from collections.abc import Iterable
from typing import Any

import altair as alt
from markupsafe import Markup

from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.escape import markdown_text, slug
from collector.site.model import Cell, ChartRef, Table

Row = dict[str, Any]

KIND_LABELS = {
    "official": "official MLPerf",
    "local": "local run",
    "published": "published study",
}


def kind(row: Row) -> str:
    """The evidence kind of a row, with the proxy scale of local runs."""
    source = row.get("source") or "official"
    label = KIND_LABELS.get(source, source)
    if source == "local":
        scale = row.get("scale") or "unknown scale"
        label = (
            f"local run, {scale} scale" if scale == "full" else f"local run, proxy scale {scale}"
        )
    return label


def is_proxy(row: Row) -> bool:
    """Whether a row comes from local runs at a proxy scale: a pipeline check, which answers
    no deadline and no buying question."""
    return row.get("source") == "local" and row.get("scale") != "full"


def evidence_order(kind_label: str) -> tuple[int, str]:
    """Official results first, then local runs, then published studies."""
    for rank, prefix in enumerate(("official", "local", "published")):
        if kind_label.startswith(prefix):
            return rank, kind_label
    return 3, kind_label


def evidence_title(kind_label: str) -> str:
    """A heading for one kind of evidence: 'Official MLPerf results', 'Local runs, proxy scale
    small', 'Published studies'."""
    if kind_label.startswith("official"):
        return "Official MLPerf results"
    if kind_label.startswith("local run"):
        return "Local runs" + kind_label.removeprefix("local run")
    if kind_label.startswith("published"):
        return "Published studies"
    return kind_label


def by_evidence(
    columns: tuple[str, ...], rows: Iterable[tuple[str, tuple[Cell, ...]]], caption: str = ""
) -> tuple[Table, ...]:
    """One table per kind of evidence (official first), each under its kind's heading, from
    (kind, cells) pairs in the order given: no table ranks one kind against another."""
    kinds: dict[str, list[tuple[Cell, ...]]] = {}
    for kind_label, cells in rows:
        kinds.setdefault(kind_label, []).append(cells)
    return tuple(
        Table(columns, tuple(kinds[k]), caption=caption, title=evidence_title(k))
        for k in sorted(kinds, key=evidence_order)
    )


def num(value: Any, digits: int = 3) -> str:
    """A number with `digits` significant digits; an em dash when absent."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}g}" if abs(value) < 10**digits else f"{value:.0f}"


def interval(low: Any, high: Any, unit: str = "") -> str:
    """'low–high unit', or an em dash when either end is absent."""
    if low is None or high is None:
        return "—"
    return f"{num(low)}–{num(high)}{unit}"


def link(text: Any, href: str) -> Markup:
    """A Markdown link whose text is escaped; href is built by the site, never from data."""
    return Markup(f"[{markdown_text(text)}]({href})")


def rel(src: str, dest: str) -> str:
    """Relative link from page `src` to file `dest` (both relative to the docs folder)."""
    return posixpath.relpath(dest, posixpath.dirname(src) or ".")


def system_page(row: Row) -> str:
    """Docs path of a system's page."""
    return f"systems/{system_slug(row['system_id'])}.md"


def system_slug(system_id: str) -> str:
    """Slug of a system id plus a short hash, so ids that differ only in symbols stay apart."""
    digest = hashlib.sha256(system_id.encode()).hexdigest()[:6]
    return f"{slug(system_id)[:60]}-{digest}"


def benchmark_page(name: str) -> str:
    """Docs path of a benchmark's page."""
    return f"benchmarks/{slug(name)}.md"


def host_system(system_id: str | None) -> str | None:
    """A system id less its round, '<submitter>/<system>': local systems of two hosts can
    share a name."""
    return system_id.split("/", 1)[-1] if system_id else None


def round_label(row: Row) -> str:
    """The MLPerf round of an official result; for a local run, the version of the suite it
    ran ('suite v0.5': run today, not submitted in 2018)."""
    rnd = str(row.get("round") or "")
    return f"suite {rnd}" if row.get("source") == "local" and rnd else rnd


def listed(value: object) -> str:
    """A value as text: a list as its items joined ('; ' between rows of a matrix or
    objects, ', ' between scalars), an object as its key=value pairs; text that holds a JSON
    list or object (as the store keeps a description's software stack) is read first."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        with contextlib.suppress(ValueError):  # text that only starts like JSON stays text
            value = json.loads(value)
    if isinstance(value, list):
        nested = any(isinstance(v, list | dict) for v in value)
        return ("; " if nested else ", ").join(listed(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={listed(v)}" for k, v in sorted(value.items()))
    return str(value)


def chart_ref(page: str, name: str, chart: alt.TopLevelMixin, title: str, desc: str) -> ChartRef:
    """A chart placed beside page `page`: charts/<page-stem>-<name>.{svg,vl.json}."""
    stem = slug(posixpath.splitext(page)[0] + "-" + name)
    return ChartRef(
        chart_id=stem,
        title=title,
        description=desc,
        spec=chart.to_dict(),
        svg_href=rel(page, f"charts/{stem}.svg"),
        spec_href=rel(page, f"charts/{stem}.vl.json"),
    )


def distinct(values: Iterable[Any]) -> list[Any]:
    """Distinct values in first-seen order."""
    return list(dict.fromkeys(values))


def round_key(name: str) -> tuple[int, ...]:
    """A round's sort key: 'v5.1' -> (5, 1), so v10.0 sorts after v9.1."""
    return tuple(int(p) if p.isdigit() else -1 for p in name.lstrip("v").split("."))


def newest(rounds: Iterable[str]) -> str:
    """The newest of some rounds ('' when there are none)."""
    return max(rounds, key=round_key, default="")


def benchmark_names(data: SiteData) -> list[str]:
    """Benchmarks that have runs, in the order site.yml lists them."""
    present = {r["benchmark"] for r in data.rows("runs")}
    known = [b for b in settings().benchmarks if b in present]
    return known + sorted(present - set(known))
