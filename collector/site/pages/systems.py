"""System pages: the description as submitted, results, logs and measured ceilings."""

from __future__ import annotations

from collections.abc import Iterator

from markupsafe import Markup

from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.escape import markdown_text
from collector.site.model import Page, Section, Table
from collector.site.pages.common import (
    Row,
    benchmark_page,
    by_evidence,
    interval,
    kind,
    link,
    listed,
    num,
    rel,
    round_label,
    system_page,
)

SUMMARY_FIELDS = (
    ("system", "system name"),
    ("submitter", "submitter"),
    ("accelerator", "accelerator"),
    ("accelerators_per_node", "accelerators per node"),
    ("nodes", "nodes"),
    ("accelerator_memory_gib", "accelerator memory, GiB"),
    ("interconnect", "interconnect class"),
    ("run_interconnect", "interconnect its runs used"),
    ("accelerator_interconnect", "accelerator interconnect, as described"),
    ("node_interconnect", "node interconnect, as described"),
    ("cpu", "host processor"),
    ("cpu_sockets", "host processors per node"),
    ("cpu_cores", "host cores per node"),
    ("host_memory_gib", "host memory per node, GiB"),
    ("framework", "framework"),
    ("os", "operating system"),
    ("software", "software"),
    ("availability", "availability"),
    ("division", "division"),
)


def systems_with_runs(data: SiteData) -> list[Row]:
    """Every system with a description or runs (site_systems), with its description's fields."""
    described = {s["system_id"]: s for s in data.rows("systems")}
    return [{**described.get(s["system_id"], {}), **s} for s in data.rows("site_systems")]


def index_page(data: SiteData) -> Page:
    """systems/index.md: one row per system, in a table per kind of evidence."""
    path = "systems/index.md"
    rows = [
        (
            kind(s),
            (
                link(s["hardware"], rel(path, system_page(s))),
                round_label(s),
                s["submitter"],
                s.get("run_interconnect"),
                s["system"],
            ),
        )
        for s in systems_with_runs(data)
    ]
    columns = ("system", "round", "submitter", "interconnect of its runs", "name as submitted")
    caption = (
        "A system with NVLink can run with peer-to-peer off (no-p2p): the interconnect column "
        "is what its runs used."
    )
    section = Section("All systems", tables=by_evidence(columns, rows, caption))
    return Page(path, "Systems", data.snapshot, sections=(section,))


def page(data: SiteData, system: Row) -> Page:
    """One system's page."""
    path = system_page(system)
    sid = system["system_id"]
    summary = Table(
        ("", ""),
        tuple(
            (label, listed(system.get(f)))
            for f, label in SUMMARY_FIELDS
            if system.get(f) is not None
        ),
    )
    sections = [
        Section(
            "Description",
            table=summary,
            notes=(Markup("Interconnect class inferred from the hardware name."),)
            if system.get("interconnect_inferred")
            else (),
        )
    ]
    full = data.descriptions.get(sid) or {}
    if full:
        sections.append(
            Section(
                "System description as submitted",
                table=Table(("field", "value"), tuple(_fields(full))),
                notes=(Markup(f"From `{_code(system.get('description_path'))}`."),),
            )
        )
    sections.append(_results(data, path, sid))
    sections.append(_logs(data, sid))
    ceilings = [r for r in data.rows("ceilings") if r.get("system_id") == sid]
    if ceilings:
        cols = tuple(k for k in ceilings[0] if k != "system_id")
        sections.append(
            Section(
                "Ceilings measured by local runs",
                table=Table(cols, tuple(tuple(_cell(r[c]) for c in cols) for r in ceilings)),
            )
        )
    title = f"{system['hardware']} ({system['submitter']}, {round_label(system)})"
    intro = Markup(
        f"Evidence: **{markdown_text(kind(system))}**. Submitted as "
        f"{markdown_text(system['system'])}; id {markdown_text(sid)}."
    )
    return Page(path, title, data.snapshot, intro=intro, sections=tuple(sections))


def _results(data: SiteData, path: str, sid: str) -> Section:
    mine = [c for c in data.rows("site_scores") if c["system_id"] == sid]
    rows = tuple(
        (
            link(
                settings().benchmark(c["benchmark"]).title,
                rel(path, benchmark_page(c["benchmark"])),
            ),
            c.get("precision"),
            c.get("interconnect"),
            Markup(num(c["score_minutes"])) if c["score_minutes"] else c["unscorable_reason"],
            interval(c["fastest_minutes"], c["slowest_minutes"]),
            f"{c['runs_used']} of {c['runs_total']}",
        )
        for c in mine
    )
    table = Table(
        (
            "benchmark",
            "precision",
            "interconnect",
            "score, minutes",
            "fastest–slowest run",
            "runs averaged",
        ),
        rows,
    )
    return Section(
        "Results", table=table if rows else None, intro=Markup("" if rows else "No scored results.")
    )


def _logs(data: SiteData, sid: str) -> Section:
    runs = [r for r in data.rows("runs") if r["system_id"] == sid]
    rows = tuple(
        (
            r["benchmark"],
            r["run"],
            r["status"],
            Markup(num(r["minutes"])),
            Markup(f"`{_code(r['log_path'])}`"),
            Markup(f"`{_code((r['log_sha256'] or '')[:16])}`"),
        )
        for r in runs
    )
    return Section(
        "Logs",
        table=Table(("benchmark", "run", "status", "minutes", "log", "sha256 (first 16)"), rows),
        intro=Markup(
            "Every run behind the results above; the full sha256 of each "
            "file is in the manifest on the [Data](../data.md) page."
        ),
    )


def _fields(value: object, key: str = "") -> Iterator[tuple[str, str]]:
    """A submitted description as (field, text) rows: a nested object opens into rows of its
    own, named by dotted path (collector.versions.cuda), so no row is a blob of JSON."""
    if isinstance(value, dict) and (value or not key):
        for k in sorted(value):
            yield from _fields(value[k], f"{key}.{k}" if key else str(k))
    else:
        yield key, listed(value)


def _cell(value: object) -> object:
    return num(value) if isinstance(value, float) else value


def _code(value: object) -> str:
    """Text for a Markdown code span (which escapes HTML itself): backticks and pipes replaced."""
    return " ".join(str(value or "").replace("`", "'").replace("|", "/").split())
