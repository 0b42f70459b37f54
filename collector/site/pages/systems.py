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
    accel_label,
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
    """Every system described, plus systems that have runs but no description."""
    described = {s["system_id"]: s for s in data.rows("systems")}
    for r in data.rows("runs"):
        if r["system_id"] not in described:
            described[r["system_id"]] = {
                k: r.get(k)
                for k in (
                    "source",
                    "round",
                    "submitter",
                    "system",
                    "division",
                    "accelerator",
                    "accelerators",
                    "nodes",
                    "interconnect",
                    "system_id",
                    "scale",
                )
            }
    # a description names neither the proxy scale nor how the runs used the links (a local
    # system with NVLink may run with peer-to-peer off); the system's runs do
    scales: dict[str, set[str]] = {}
    modes: dict[str, set[str]] = {}
    for r in data.rows("runs"):
        if r.get("scale"):
            scales.setdefault(r["system_id"], set()).add(r["scale"])
        if r.get("interconnect"):
            modes.setdefault(r["system_id"], set()).add(r["interconnect"])
    for sid, system in described.items():
        if not system.get("scale") and sid in scales:
            system = described[sid] = {**system, "scale": ", ".join(sorted(scales[sid]))}
        if modes.get(sid, set()) - {system.get("interconnect")}:
            described[sid] = {**system, "run_interconnect": ", ".join(sorted(modes[sid]))}
    return sorted(
        described.values(), key=lambda s: (s["source"], s["round"], s["submitter"], s["system"])
    )


def index_page(data: SiteData) -> Page:
    """systems/index.md: one row per system, in a table per kind of evidence."""
    path = "systems/index.md"
    rows = [
        (
            kind(s),
            (
                round_label(s),
                s["submitter"],
                link(s["system"], rel(path, system_page(s))),
                accel_label(s),
                s.get("interconnect"),
                s.get("run_interconnect") or s.get("interconnect"),
                s.get("cpu"),
            ),
        )
        for s in systems_with_runs(data)
    ]
    columns = (
        "round",
        "submitter",
        "system",
        "hardware",
        "interconnect hardware",
        "interconnect of its runs",
        "host processor",
    )
    caption = (
        "A system with NVLink can run with peer-to-peer off (no-p2p): the last interconnect "
        "column is what its runs used."
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
    title = f"{system['system']} ({system['submitter']}, {system['round']})"
    intro = Markup(
        f"Evidence: **{markdown_text(kind(system))}**. {markdown_text(accel_label(system))}."
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
            c["hardware"],
            c.get("precision"),
            Markup(num(c["score_minutes"])) if c["score_minutes"] else c["unscorable_reason"],
            interval(c["fastest_minutes"], c["slowest_minutes"]),
            f"{c['runs_used']} of {c['runs_total']}",
        )
        for c in mine
    )
    table = Table(
        (
            "benchmark",
            "hardware",
            "precision",
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
