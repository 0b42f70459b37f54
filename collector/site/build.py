"""Build the generated pages, charts and downloads, and write them with the static sources
into one docs folder for MkDocs."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import vl_convert

from collector.site import charts
from collector.site.common import benchmark_names
from collector.site.data import SiteData, load
from collector.site.model import ChartRef, Page, Sheet
from collector.site.pages import (
    benchmarks,
    compare,
    downloads,
    guide,
    home,
    method,
    sources,
    systems,
)
from collector.site.render import render

INDEX = ".generated.json"  # list of the files written, so stale ones can be removed
# Pages that lay out derived tables as they are: template, path, title, the tables it reads.
SHEETS = (
    ("benchmarks.md.j2", "benchmarks/index.md", "Benchmarks", ("site_benchmarks",)),
    ("systems.md.j2", "systems/index.md", "Systems", ("site_systems",)),
    ("rounds.md.j2", "rounds.md", "Rounds", ("site_round_gains",)),
    ("local_checks.md.j2", "local-checks.md", "Local pipeline checks", ("site_scores",)),
    (
        "full_size.md.j2",
        "full-size.md",
        "Full-size runs",
        ("site_language_models", "full_size_ratios", "full_size_scaling"),
    ),
)


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
        ("compare.md.j2", compare.page(data)),
        ("sources.md.j2", sources.page(data)),
        ("data.md.j2", downloads.page(data)),
        ("method_sql.md.j2", method.page(data)),
    ]
    out += [
        (template, Sheet(path, title, data.snapshot, rows={t: data.rows(t) for t in tables}))
        for template, path, title, tables in SHEETS
    ]
    out += [("benchmark.md.j2", benchmarks.page(data, b)) for b in benchmark_names(data)]
    out += [("system.md.j2", systems.page(data, s)) for s in systems.systems_with_runs(data)]
    return out


def generate(store: str | Path | None = None) -> Result:
    """Render everything in memory: pages, chart specs, downloads (SVGs come at write time)."""
    data = load(store)
    files: dict[str, bytes] = {}
    chart_list: list[ChartRef] = []
    for template, page in pages(data):
        files[page.path] = render(template, page).encode()
        for refs in page.charts.values() if isinstance(page, Sheet) else ():
            chart_list.extend(refs)
    for c in chart_list:
        files[f"charts/{c.chart_id}.vl.json"] = (
            json.dumps(c.spec, indent=1, sort_keys=True) + "\n"
        ).encode()
    files.update(downloads.files(data))
    files.update(guide.files(data))
    return Result(data.snapshot, files, tuple(chart_list))


def write(result: Result, out: Path, static: Path | None = None) -> list[str]:
    """Write the docs folder `out`: the static sources under `static` (pages and assets kept
    in the repository), the generated files and each chart's static SVG. Files an earlier
    write made and this one does not are removed; unchanged files are not touched, so that
    `mkdocs serve`, which watches the folder, sees no change when the data has none."""
    out.mkdir(parents=True, exist_ok=True)
    previous = _index(out)
    current = {**_static(static), **result.files, **_svgs(result.charts)}
    for rel in sorted(set(previous) - set(current)):
        (out / rel).unlink(missing_ok=True)
    for rel, content in {**current, INDEX: _listing(current)}.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != content:
            target.write_bytes(content)
    return sorted(current)


def _static(folder: Path | None) -> dict[str, bytes]:
    if folder is None:
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _listing(files: dict[str, bytes]) -> bytes:
    return (json.dumps(sorted(files), indent=1) + "\n").encode()


def _index(out: Path) -> list[str]:
    path = out / INDEX
    return json.loads(path.read_text()) if path.exists() else []


def _svgs(chart_list: tuple[ChartRef, ...]) -> dict[str, bytes]:
    def one(c: ChartRef) -> tuple[str, bytes]:
        svg = vl_convert.vegalite_to_svg(charts.at_width(c.spec, charts.STATIC_WIDTH))
        return f"charts/{c.chart_id}.svg", svg.encode()

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, chart_list))
