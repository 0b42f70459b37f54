"""Build the generated pages, charts and downloads, and write them with the static sources
into one docs folder for MkDocs."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import vl_convert

from collector.errors import InputError
from collector.site import charts
from collector.site.common import benchmark_names
from collector.site.data import SiteData, load
from collector.site.model import ChartRef, Page, Sheet
from collector.site.pages import (
    benchmarks,
    compare,
    downloads,
    full_size,
    guide,
    home,
    method,
    sources,
    systems,
)
from collector.site.render import render
from collector.store.outputs import refuse_store, write_file

INDEX = ".generated.json"  # record of the files written, so stale ones can be removed
WRITER = "collector site"
# Pages that lay out derived tables as they are: template, path, title, the tables it reads.
SHEETS = (
    ("benchmarks.md.j2", "benchmarks/index.md", "Benchmarks", ("site_benchmarks",)),
    ("systems.md.j2", "systems/index.md", "Systems", ("site_systems",)),
    ("rounds.md.j2", "rounds.md", "Rounds", ("site_round_gains",)),
    ("local_checks.md.j2", "local-checks.md", "Local pipeline checks", ("site_scores",)),
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
        ("full_size.md.j2", full_size.page(data)),
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
    `mkdocs serve`, which watches the folder, sees no change when the data has none.

    Only what collector wrote there is ever removed: the files its record (INDEX) lists, in
    the folder, with the sha256 it recorded. `out` must not be a link, a store's folder or
    the static sources' folder; every file is written inside it, replacing (never writing
    through) a link in its place."""
    _check_out(out, static)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{out}: cannot make the folder ({exc.strerror})") from exc
    root = os.path.realpath(out)
    previous = _index(out)
    current = {**_static(static), **result.files, **_svgs(result.charts)}
    digests = {rel: hashlib.sha256(content).hexdigest() for rel, content in current.items()}
    # recorded before they are written: an interrupted write leaves nothing unrecorded
    _update(out / INDEX, _listing({**previous, **digests}))
    for rel, content in current.items():
        _update(_place(out, root, rel), content)
    for rel in sorted(set(previous) - set(current)):
        _remove(out, root, rel, previous[rel])
    _update(out / INDEX, _listing(digests))
    return sorted(current)


def _update(target: Path, content: bytes) -> None:
    """Write a file unless it holds `content` already (so its time stays as it was)."""
    if not _same(target, content):
        write_file(target, content, check_store=False)  # the folder was checked once


def _check_out(out: Path, static: Path | None) -> None:
    if out.is_symlink():
        raise InputError(f"{out}: a symbolic link; give the folder it leads to")
    refuse_store(out, "collector site")
    if static is not None:
        here, sources = Path(os.path.realpath(out)), Path(os.path.realpath(static))
        if here == sources or sources in here.parents:
            raise InputError(f"{out}: inside the static sources {static}; write elsewhere")


def _place(out: Path, root: str, rel: str) -> Path:
    """out/rel, its folders made as real folders inside `out` (InputError otherwise)."""
    parts = rel.split("/")
    if not _plain(rel):
        raise InputError(f"{out}: refusing to write {rel!r}, not a plain path inside it")
    folder = out
    for part in parts[:-1]:
        folder = folder / part
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise InputError(f"{folder}: not a folder of {out} (a link or a file) to write in")
        folder.mkdir(exist_ok=True)
    return folder / parts[-1]


def _plain(rel: str) -> bool:
    """A relative path of names only: no root, no `..`, no empty or dot parts."""
    parts = rel.split("/")
    return all(p not in ("", ".", "..") and "\\" not in p and "\0" not in p for p in parts)


def _same(target: Path, content: bytes) -> bool:
    """Whether `target` is a regular file (not a link) holding `content`."""
    try:
        if not stat.S_ISREG(os.lstat(target).st_mode):
            return False
        return target.stat().st_size == len(content) and target.read_bytes() == content
    except OSError:
        return False


def _remove(out: Path, root: str, rel: str, digest: str) -> None:
    """Delete a file an earlier write made, if it is still the one it made."""
    if not _plain(rel):
        return
    path = out / rel
    try:
        if os.path.realpath(path.parent) != os.path.join(root, *rel.split("/")[:-1]).rstrip("/"):
            return  # a folder on the way is a link now
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return
        if hashlib.sha256(path.read_bytes()).hexdigest() == digest:
            path.unlink()
    except OSError:
        return


def _static(folder: Path | None) -> dict[str, bytes]:
    """The static sources: regular files inside the folder (a link leading out is skipped)."""
    if folder is None:
        return {}
    root = os.path.realpath(folder)
    found = {}
    for p in sorted(folder.rglob("*")):
        real = os.path.realpath(p)
        if p.is_file() and real.startswith(root + os.sep):
            found[p.relative_to(folder).as_posix()] = p.read_bytes()
    return found


def _listing(files: dict[str, str]) -> bytes:
    """The record of the files written: each with its sha256, under collector's own key."""
    doc = {"written_by": WRITER, "files": dict(sorted(files.items()))}
    return (json.dumps(doc, indent=1) + "\n").encode()


def _index(out: Path) -> dict[str, str]:
    """The files an earlier write recorded, by path, with their sha256; none where the
    record is missing, not a regular file, or not one collector wrote."""
    path = out / INDEX
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode) or os.lstat(path).st_size > 16 << 20:
            return {}
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(doc, dict) or doc.get("written_by") != WRITER:
        return {}  # an older record, without checksums, or a planted one: nothing is removed
    files = doc.get("files")
    if not isinstance(files, dict):
        return {}
    return {
        rel: digest
        for rel, digest in files.items()
        if isinstance(rel, str) and isinstance(digest, str) and _plain(rel)
    }


def _svgs(chart_list: tuple[ChartRef, ...]) -> dict[str, bytes]:
    def one(c: ChartRef) -> tuple[str, bytes]:
        svg = vl_convert.vegalite_to_svg(charts.at_width(c.spec, charts.STATIC_WIDTH))
        return f"charts/{c.chart_id}.svg", svg.encode()

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, chart_list))
