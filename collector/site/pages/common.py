"""Helpers every page builder shares: labels, number formats, links, evidence kinds."""

from __future__ import annotations

import hashlib
import math
import posixpath
from collections.abc import Iterable
from typing import Any

import altair as alt
from markupsafe import Markup

from collector.site.escape import markdown_text, slug
from collector.site.model import ChartRef

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


def evidence_order(kind_label: str) -> tuple[int, str]:
    """Official results first, then local runs, then published studies."""
    for rank, prefix in enumerate(("official", "local", "published")):
        if kind_label.startswith(prefix):
            return rank, kind_label
    return 3, kind_label


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


def on_nodes(nodes: int | None) -> str:
    """' on 1 node', ' on 4 nodes', or '' where the node count is not known."""
    return _on(nodes, "node")


def on_accelerators(count: int | None) -> str:
    """' on 1 accelerator', ' on 4 accelerators', or '' where the count is not known."""
    return _on(count, "accelerator")


def _on(count: int | None, unit: str) -> str:
    return f" on {count} {unit}{'s' if count != 1 else ''}" if count else ""


def accel_label(row: Row) -> str:
    """'8 x Tesla V100-SXM2-16GB on 1 node', or 'CPU only' for hosts without accelerators."""
    count = row.get("accelerators")
    where = on_nodes(row.get("nodes"))
    if not count:
        return f"CPU only{where}"
    return f"{count} x {row.get('accelerator') or 'accelerator'}{where}"


def config_label(row: Row) -> str:
    """A configuration in one line: submitter, system, round, precision where known."""
    parts = [str(row.get("submitter") or ""), str(row.get("system") or ""), str(row["round"])]
    if row.get("precision"):
        parts.append(str(row["precision"]))
    return " ".join(p for p in parts if p)


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
