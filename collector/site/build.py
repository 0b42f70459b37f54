"""Build the generated pages, charts and downloads, and write them with the static sources
into one docs folder for MkDocs."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import vl_convert
from altair.utils.schemapi import debug_mode

from collector.errors import InputError
from collector.queries.query import files_digest
from collector.site import charts
from collector.site.common import benchmark_names
from collector.site.data import SiteData, load
from collector.site.model import ChartRef, Page, Sheet
from collector.site.pages import (
    answers,
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
from collector.warehouse import Warehouse

INDEX = ".generated.json"  # record of the files written, so stale ones can be removed
WRITER = "collector site"
STAMP = ".stamp"  # the store, snapshot and collector that the generated files come from
TEMPLATES = Path(__file__).resolve().parent / "templates"
SVG_MARK = "<!-- spec sha256 {} -->\n"  # first line of a chart's SVG: the spec it shows
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
        ("answers.md.j2", answers.page(data)),
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
    out += [
        ("benchmark.md.j2", benchmarks.page(data, b)) for b in benchmark_names(data.rows("runs"))
    ]
    out += [("systems_round.md.j2", page) for page in systems.pages(data)]
    return out


def generate(store: str | Path | Warehouse | None = None, saved: Path | None = None) -> Result:
    """Render everything in memory: pages, chart specs, downloads (SVGs come at write time),
    from one store snapshot; with `saved`, a docs folder holding this snapshot's downloads as
    this collector makes them, the tables are read back from there instead of computed."""
    if not isinstance(store, Warehouse):
        with Warehouse(store, threads=1) as wh:
            return generate(wh, saved)
    data = load(store, saved)
    files: dict[str, bytes] = {}
    chart_list: list[ChartRef] = []
    with debug_mode(False):  # no schema check per chart object: the chart tests check specs
        made = pages(data)
    for template, page in made:
        files[page.path] = render(template, page).encode()
        for refs in page.charts.values() if isinstance(page, Sheet) else ():
            chart_list.extend(refs)
    files.update(data.downloads if data.downloads is not None else downloads.files(data))
    return Result(data.snapshot, files, tuple(chart_list))


@dataclass(frozen=True)
class Update:
    """What `update` did: the snapshot the docs folder shows, and whether it generated."""

    snapshot: str
    generated: bool
    files: int


def update(out: Path, static: Path | None = None, store: str | Path | None = None) -> Update:
    """Bring the docs folder `out` up to date: the static sources, and the generated files of
    the store's live snapshot. MkDocs' hook calls this before every build, so it does no more
    than what changed, as the folder's stamp tells: nothing when the folder holds that
    snapshot's files as this collector makes them (after `collector site` or an earlier
    build); the pages alone, their tables read back from the folder's downloads, when only
    the templates or the static sources changed (`mkdocs serve` after an edit)."""
    _check_out(out, static)
    stamp_path = out / STAMP
    held = _read_plain(stamp_path).decode(errors="replace").split("\n", 1) + [""]
    with Warehouse(store, threads=1) as wh:
        tables, page_sources = _stamp(wh, static)
        if held[:2] == [tables, page_sources]:
            return Update(wh.snapshot or "", False, len(_index(out)))
        result = generate(wh, out if held[0] == tables else None)
    written = write(result, out, static)
    write_file(stamp_path, f"{tables}\n{page_sources}".encode(), check_store=False)
    return Update(result.snapshot, True, len(written))


def _stamp(wh: Warehouse, static: Path | None) -> tuple[str, str]:
    """What the generated files come from, in two digests: of the tables (the store, its
    snapshot and collector's code and SQL), and of the pages' own sources (the templates and
    the static sources)."""
    package = TEMPLATES.parents[1]
    code = files_digest(package, f"{os.path.realpath(wh.path)}\0{wh.snapshot}", skip=TEMPLATES)
    return code, files_digest(static, files_digest(TEMPLATES, ""))


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
    current = {**_static(static), **result.files, **_svgs(result.charts, out)}
    digests = {rel: hashlib.sha256(content).hexdigest() for rel, content in current.items()}
    # recorded before they are written: an interrupted write leaves nothing unrecorded
    _update(out / INDEX, _listing({**previous, **digests}))
    for rel, content in current.items():
        _update(_place(out, rel), content)
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


def _place(out: Path, rel: str) -> Path:
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


def _read_plain(path: Path) -> bytes:
    """A regular file's bytes (not through a link, nor a folder that is one); empty where
    there is none such."""
    try:
        if os.path.realpath(path) != os.path.abspath(path):
            return b""
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return b""
        return path.read_bytes()
    except OSError:
        return b""


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


# coordinates and sizes in an SVG's geometry: one decimal of a pixel is all that shows
_GEOMETRY = re.compile(r'\b(d|transform|points|x|y|x1|y1|x2|y2|cx|cy|r|width|height)="([^"]*)"')
_DECIMALS = re.compile(r"(\d+\.\d)\d+")
# what each mark says to a screen reader and to the pointer: a page shows this SVG as an image
# (its description in the alt text), where neither reaches anyone
_MARK_ROLES = re.compile(r' (?:aria-[a-z]+|role|pointer-events)="[^"]*"')
SVG_FORM = "2"  # changes when _shorter does: a kept SVG of another form is made again


def _shorter(svg: str) -> str:
    """A static SVG for a page's image: its geometry's numbers cut to one decimal of a pixel,
    its marks without their roles (together less than half the size, for the largest charts),
    its text as it was."""
    svg = _MARK_ROLES.sub("", svg)
    return _GEOMETRY.sub(lambda m: m[1] + '="' + _DECIMALS.sub(r"\1", m[2]) + '"', svg)


def _svgs(chart_list: tuple[ChartRef, ...], out: Path) -> dict[str, bytes]:
    """Each chart's static SVG; one `out` holds already for the same spec is kept (its first
    line names the spec's sha256), as converting the large ones takes seconds."""

    def one(c: ChartRef) -> tuple[str, bytes]:
        rel = f"charts/{c.chart_id}.svg"
        spec = charts.at_width(c.spec, charts.STATIC_WIDTH)
        text = SVG_FORM + json.dumps(spec, sort_keys=True)
        mark = SVG_MARK.format(hashlib.sha256(text.encode()).hexdigest())
        kept = _read_plain(out / rel)
        if kept.startswith(mark.encode()):
            return rel, kept
        return rel, (mark + _shorter(vl_convert.vegalite_to_svg(spec))).encode()

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, chart_list))
