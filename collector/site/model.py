"""Typed page contexts and the small value types the templates print."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

Cell = str | Markup | int | float | None


@dataclass(frozen=True)
class Table:
    """A Markdown table: a header and rows of cells (plain text is escaped when printed)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    caption: str = ""
    title: str = ""  # a heading of its own, where a section holds several tables


@dataclass(frozen=True)
class ChartRef:
    """A chart as the page embeds it: inline spec, static SVG and spec file beside it."""

    chart_id: str
    title: str
    description: str
    spec: dict[str, Any]
    svg_href: str
    spec_href: str


@dataclass(frozen=True)
class Finding:
    """A headline: a sentence (escaped Markdown) and the link to its evidence."""

    sentence: Markup
    href: str
    kind: str


@dataclass(frozen=True)
class Section:
    """A titled block of a page: prose, an optional table and optional charts."""

    title: str
    intro: Markup = Markup("")
    table: Table | None = None
    charts: tuple[ChartRef, ...] = ()
    tables: tuple[Table, ...] = ()  # after `table`, each under its title
    notes: tuple[Markup, ...] = ()


@dataclass(frozen=True)
class Page:
    """Common to every generated page: where it goes, its title and its sections."""

    path: str
    title: str
    snapshot: str
    intro: Markup = Markup("")
    sections: tuple[Section, ...] = ()


@dataclass(frozen=True)
class HomePage(Page):
    """Home: the headline findings of the current data, under their topics."""

    topics: tuple[tuple[str, tuple[Finding, ...]], ...] = ()
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class GuidePage(Page):
    """Guide: every configuration, the workloads, deadlines and data-driven advice."""

    workloads: tuple[tuple[str, str], ...] = ()
    deadlines_hours: tuple[float, ...] = ()
    configurations: tuple[dict[str, Any], ...] = ()
    advice: dict[str, tuple[str, ...]] = field(default_factory=dict)
