"""Rounds: what the same class of system gained from one MLPerf round to the next."""

from __future__ import annotations

from itertools import pairwise

from markupsafe import Markup

from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.escape import markdown_text as md
from collector.site.model import Page, Section, Table
from collector.site.pages.common import (
    Row,
    benchmark_page,
    interval,
    kind,
    link,
    listed,
    num,
    rel,
    round_key,
)

DIFF_FIELDS = (
    "accelerator",
    "interconnect",
    "accelerator_interconnect",
    "cpu",
    "cpu_cores",
    "host_memory_gib",
    "framework",
    "os",
    "software",
)


def _class(c: Row) -> str | None:
    """'8 x NVIDIA V100, one server' for one-node configurations of a known model."""
    if not c.get("one_server") or not c.get("accelerators") or not c.get("vendor"):
        return None
    return f"{c['accelerators']} x {c['accelerator_model']}, one server"


def round_gains(data: SiteData) -> list[Row]:
    """For each class and benchmark in two rounds: the best of each round and the ratio."""
    groups: dict[tuple[str, str, str], dict[str, Row]] = {}
    for c in data.rows("site_scores"):
        cls = _class(c)
        if cls is None or not c["score_minutes"] or c["evidence"] == "proxy":
            continue
        best = groups.setdefault((kind(c), cls, c["benchmark"]), {})
        if c["round"] not in best or c["score_minutes"] < best[c["round"]]["score_minutes"]:
            best[c["round"]] = c
    gains = []
    for (evidence, cls, bench), best in sorted(groups.items()):
        for old_round, new_round in pairwise(sorted(best, key=round_key)):
            old, new = best[old_round], best[new_round]
            gains.append(
                {
                    "kind": evidence,
                    "class": cls,
                    "benchmark": bench,
                    "title": settings().benchmark(bench).title,
                    "old_round": old_round,
                    "new_round": new_round,
                    "old": old,
                    "new": new,
                    "old_label": f"{old['submitter']} {old['system']}",
                    "new_label": f"{new['submitter']} {new['system']}",
                    "ratio": old["score_minutes"] / new["score_minutes"],
                    "ratio_low": _div(old["fastest_minutes"], new["slowest_minutes"]),
                    "ratio_high": _div(old["slowest_minutes"], new["fastest_minutes"]),
                }
            )
    return gains


def _div(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def page(data: SiteData) -> Page:
    """rounds.md."""
    path = "rounds.md"
    systems = {s["system_id"]: s for s in data.rows("systems")}
    gains = round_gains(data)
    if not gains:
        return Page(
            path,
            "Rounds",
            data.snapshot,
            intro=Markup(
                "No class of system (same accelerator count and model, one server) has scored "
                "results in more than one round in this store."
            ),
        )
    rows = tuple(
        (
            g["kind"],
            link(g["title"], rel(path, benchmark_page(g["benchmark"]))),
            g["class"],
            f"{g['old_label']} ({g['old_round']})",
            num(g["old"]["score_minutes"]),
            f"{g['new_label']} ({g['new_round']})",
            num(g["new"]["score_minutes"]),
            Markup(f"**{num(g['ratio'])}x**"),
            interval(g["ratio_low"], g["ratio_high"], "x"),
        )
        for g in gains
    )
    table = Table(
        (
            "evidence",
            "benchmark",
            "class",
            "earlier",
            "minutes",
            "later",
            "minutes",
            "speedup",
            "run range",
        ),
        rows,
        caption="Speedup: earlier score / later score. "
        "Run range: fastest earlier run / slowest later run to slowest earlier run / "
        "fastest later run.",
    )
    notes = []
    seen = set()
    for g in gains:
        pair = (g["old"]["system_id"], g["new"]["system_id"])
        if pair in seen:
            continue
        seen.add(pair)
        notes.append(_differences(g, systems.get(pair[0], {}), systems.get(pair[1], {})))
    sections = (
        Section("Same class of system, successive rounds", table=table),
        Section(
            "What differs",
            intro=Markup(
                "Every field of the two system descriptions that is not the same. A gain between "
                "rounds mixes all of these: hardware, software, and the benchmark's own rules."
            ),
            notes=tuple(notes),
        ),
    )
    return Page(path, "Rounds", data.snapshot, sections=sections)


def _differences(g: Row, old: Row, new: Row) -> Markup:
    lines = [
        f"**{md(g['old_label'])} ({md(g['old_round'])}) → {md(g['new_label'])} "
        f"({md(g['new_round'])})**, {md(g['class'])}:",
        "",
    ]
    for f in DIFF_FIELDS:
        a, b = old.get(f), new.get(f)
        if a != b:
            lines.append(
                f"- {md(f.replace('_', ' '))}: {md(listed(a) if a is not None else 'not stated')}"
                f" → {md(listed(b) if b is not None else 'not stated')}"
            )
    return Markup("\n".join(lines))
