"""Build the generated pages, charts and downloads; write them or check they are current."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import vl_convert

from collector.errors import CollectorError
from collector.site.data import SiteData, load
from collector.site.model import ChartRef, Page
from collector.site.pages import (
    benchmarks,
    compare,
    downloads,
    guide,
    home,
    local_checks,
    method,
    rounds,
    sources,
    systems,
)
from collector.site.pages.common import benchmark_names
from collector.site.render import render

INDEX = ".generated.json"  # list of generated files, so stale ones can be removed


class StaleSiteError(CollectorError):
    """A generated file differs from what the store produces now."""


@dataclass(frozen=True)
class Result:
    """What a build wrote (or would write)."""

    snapshot: str
    files: dict[str, bytes]
    charts: tuple[ChartRef, ...]


def pages(data: SiteData) -> list[tuple[str, Page]]:
    """Every generated page with its template."""
    out: list[tuple[str, Page]] = [
        ("home.md.j2", home.page(data)),
        ("guide.md.j2", guide.page(data)),
        ("page.md.j2", benchmarks.index_page(data)),
        ("page.md.j2", systems.index_page(data)),
        ("page.md.j2", compare.page(data)),
        ("page.md.j2", rounds.page(data)),
        ("page.md.j2", sources.page(data)),
        ("page.md.j2", downloads.page(data)),
        ("page.md.j2", method.page(data)),
        ("page.md.j2", local_checks.page(data)),
    ]
    out += [("page.md.j2", benchmarks.page(data, b)) for b in benchmark_names(data)]
    out += [("page.md.j2", systems.page(data, s)) for s in systems.systems_with_runs(data)]
    return out


def generate(store: str | Path | None = None) -> Result:
    """Render everything in memory: pages, chart specs, downloads (SVGs come at write time)."""
    data = load(store)
    files: dict[str, bytes] = {}
    chart_list: list[ChartRef] = []
    for template, page in pages(data):
        files[page.path] = render(template, page).encode()
        for section in page.sections:
            chart_list.extend(section.charts)
    for c in chart_list:
        files[f"charts/{c.chart_id}.vl.json"] = (
            json.dumps(c.spec, indent=1, sort_keys=True) + "\n"
        ).encode()
    files.update(downloads.files(data))
    files.update(guide.files(data))
    return Result(data.snapshot, files, tuple(chart_list))


def write(result: Result, out: Path) -> list[str]:
    """Write the files and each chart's static SVG; remove files an earlier build made."""
    out.mkdir(parents=True, exist_ok=True)
    previous = _index(out)
    svgs = _svgs(result.charts)
    current = {**result.files, **svgs}
    for rel in sorted(set(previous) - set(current)):
        (out / rel).unlink(missing_ok=True)
    for rel, content in current.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != content:
            target.write_bytes(content)
    (out / INDEX).write_text(json.dumps(sorted(current), indent=1) + "\n")
    return sorted(current)


def check(result: Result, out: Path) -> None:
    """Raise StaleSiteError naming the first generated file that is missing, changed or extra.

    Static SVGs are derived from the chart specs, which are compared; an SVG only has to exist.
    """
    for rel, content in sorted(result.files.items()):
        target = out / rel
        if not target.exists() or target.read_bytes() != content:
            raise StaleSiteError(f"{target} is stale; run collector site")
    wanted = set(result.files) | {f"charts/{c.chart_id}.svg" for c in result.charts}
    for rel in sorted(wanted - set(result.files)):
        if not (out / rel).exists():
            raise StaleSiteError(f"{out / rel} is missing; run collector site")
    for rel in sorted(set(_index(out)) - wanted):
        if (out / rel).exists():
            raise StaleSiteError(f"{out / rel} is no longer generated; run collector site")


def _index(out: Path) -> list[str]:
    path = out / INDEX
    return json.loads(path.read_text()) if path.exists() else []


def _svgs(chart_list: tuple[ChartRef, ...]) -> dict[str, bytes]:
    def one(c: ChartRef) -> tuple[str, bytes]:
        return f"charts/{c.chart_id}.svg", vl_convert.vegalite_to_svg(c.spec).encode()

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, chart_list))
