"""Helpers the page builders and the templates share: number formats, page paths, charts."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import posixpath
from collections.abc import Iterable
from typing import Any

import altair as alt

from collector.queries import parameters
from collector.site.config import settings
from collector.site.escape import slug
from collector.site.model import ChartRef, Row


def num(value: Any, digits: int = 3) -> str:
    """A number with `digits` significant digits; an em dash when absent."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if isinstance(value, int):
        return str(value)
    text = f"{value:.{digits}g}"
    if "e+" in text:  # 99.97 to 3 digits is 100, not 1e+02
        return f"{value:,.0f}"
    if abs(value) < 1000:
        return text
    # thousands grouped as at fewer digits: 1,058.7 beside 1,059, not 1058.7
    decimals = len(text.partition(".")[2])
    return f"{value:,.{decimals}f}"


def interval(low: Any, high: Any, unit: str = "") -> str:
    """'low–high unit', or an em dash when either end is absent; ends that differ get the
    digits that tell them apart (up to six), so no range reads '21.5–21.5'."""
    if low is None or high is None:
        return "—"
    digits = 3
    while digits < 6 and low != high and num(low, digits) == num(high, digits):
        digits += 1
    return f"{num(low, digits)}–{num(high, digits)}{unit}"


def rel(src: str, dest: str) -> str:
    """Relative link from page `src` to file `dest` (both relative to the docs folder)."""
    return posixpath.relpath(dest, posixpath.dirname(src) or ".")


def built(path: str) -> str:
    """The address of docs page `path` (relative, maybe with an #anchor) once built: a link in
    raw HTML is not rewritten by MkDocs, which builds x.md as x.html."""
    page, hash_, anchor = path.partition("#")
    page = page.removesuffix(".md") + ".html" if page.endswith(".md") else page
    return page + hash_ + anchor


def system_page(system_id: str) -> str:
    """Docs path of a system's section: on the page of its round (the first part of its id),
    which holds every system of that round, so the site has a dozen such pages, not a
    thousand."""
    return f"{systems_page(system_id)}#{system_slug(system_id)}"


def systems_page(system_id: str) -> str:
    """Docs path of the page that holds a system's section."""
    return f"systems/{slug(system_id.split('/', 1)[0])}.md"


def system_slug(system_id: str) -> str:
    """Slug of a system id plus a short hash, so ids that differ only in symbols stay apart."""
    digest = hashlib.sha256(system_id.encode()).hexdigest()[:6]
    return f"{slug(system_id)[:60]}-{digest}"


def benchmark_page(name: str) -> str:
    """Docs path of a benchmark's page."""
    return f"benchmarks/{slug(name)}.md"


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


def chart_ref(
    page: str,
    name: str,
    chart: alt.TopLevelMixin,
    title: str,
    desc: str,
    rows: Iterable[Row] = (),
) -> ChartRef:
    """A chart placed beside page `page`: its spec inline, its static SVG in
    charts/<page-stem>-<name>.svg, and the derived table's `rows` it draws from."""
    stem = slug(posixpath.splitext(page)[0] + "-" + name)
    return ChartRef(
        chart_id=stem,
        title=title,
        description=desc,
        spec=spec(chart),
        svg_href=rel(page, f"charts/{stem}.svg"),
        rows=tuple(rows),
    )


def spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """A chart's Vega-Lite spec, as `chart.to_dict()` gives it without checking it against the
    schema (the chart tests do). Its inline rows are set aside while Altair builds the rest:
    Altair copies and walks every value, which took longer than the rest of the site's pages;
    the rows are plain JSON values already."""
    data = getattr(chart, "data", None)
    rows = data["values"] if isinstance(data, alt.Data) else None
    if not isinstance(rows, list | tuple):
        return chart.to_dict(validate=False)
    out = chart.properties(data=alt.Data(values=[])).to_dict(validate=False)
    out["data"] = {**out["data"], "values": list(rows)}
    return out


def evidence_heading(kind: str) -> str:
    """The heading of rows of one kind of evidence (evidence.yml): 'Official MLPerf results'
    for 'official MLPerf'; a proxy-scale kind keeps its scale ('Local runs, proxy scale tiny')."""
    for row in parameters.evidence_kinds().rows:
        if kind == row["kind"] or kind.startswith(row["kind"] + " "):
            return row["heading"] + kind[len(row["kind"]) :]
    return kind


def round_key(name: str) -> tuple[int, ...]:
    """A round's sort key: 'v5.1' -> (5, 1), so v10.0 sorts after v9.1."""
    return tuple(int(p) if p.isdigit() else -1 for p in name.lstrip("v").split("."))


def newest(rounds: Iterable[str]) -> str:
    """The newest of some rounds ('' when there are none)."""
    return max(rounds, key=round_key, default="")


def site_rank(benchmark: str) -> tuple[int, str]:
    """A benchmark's place in site.yml's order; one it does not list comes after, by name."""
    order = list(settings().benchmarks)
    return (order.index(benchmark), "") if benchmark in order else (len(order), benchmark)


def benchmark_names(rows: Iterable[Row]) -> list[str]:
    """The benchmarks that rows name, each once, in the order site.yml lists them."""
    return sorted({r["benchmark"] for r in rows}, key=site_rank)


def code(value: object) -> str:
    """Text for a Markdown code span (which escapes HTML itself): backticks and pipes replaced."""
    return " ".join(str(value or "").replace("`", "'").replace("|", "/").split())


def groups(rows: Iterable[Row], key: str = "kind") -> list[tuple[Any, list[Row]]]:
    """Rows grouped by `key`, each group where its key first appears and its rows in the order
    given: one group per key, however the table orders its rows."""
    found: dict[Any, list[Row]] = {}
    for r in rows:
        found.setdefault(r[key], []).append(r)
    return list(found.items())
