"""Typed page contexts and the small value types the templates print."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

Cell = str | Markup | int | float | None
Row = dict[str, Any]


@dataclass(frozen=True)
class Table:
    """A Markdown table: a header and rows of cells (plain text is escaped when printed)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    title: str  # its heading: a page holds several tables
    # the columns shown before "show more columns" is pressed: what is compared and the
    # answer; the rest are details on demand
    shown: int


@dataclass(frozen=True)
class ChartRef:
    """A chart as the page embeds it: inline spec (with its data), static SVG beside it."""

    chart_id: str
    title: str
    description: str
    spec: dict[str, Any]
    svg_href: str
    # the rows of the derived table behind the chart, every one in the chart's order: the page
    # lists them beside a chart that draws fewer
    rows: tuple[Row, ...] = ()

    @property
    def drawn(self) -> int:
        """The rows the chart draws (its inline data)."""
        return len(self.spec.get("data", {}).get("values", ()))


@dataclass(frozen=True)
class Page:
    """Common to every generated page: where it goes, its title and the store snapshot."""

    path: str
    title: str
    snapshot: str


@dataclass(frozen=True)
class Sheet(Page):
    """A page whose template lays out rows of derived tables (by name, as the tables have them)
    and charts (by name); `item` is the one row a page is about (a system)."""

    rows: dict[str, list[Row]] = field(default_factory=dict)
    charts: dict[str, tuple[ChartRef, ...]] = field(default_factory=dict)
    item: Row = field(default_factory=dict)


@dataclass(frozen=True)
class FamilyFinding:
    """The fastest official configurations of one workload family's benchmark in its newest
    round: on one server and on several (site_scores rows, None where there is none)."""

    family: str
    benchmark: str
    title: str
    href: str
    round: str
    newest_round: str  # the newest official round of any benchmark
    one_server: Row | None
    at_scale: Row | None
    undescribed: Row | None  # fastest on a system of unknown node count
    # the configurations tied for fastest with one_server / at_scale (themselves first): within
    # the benchmark's allowed run-to-run variance, none of them is named the fastest
    one_server_ties: tuple[Row, ...] = ()
    at_scale_ties: tuple[Row, ...] = ()


@dataclass(frozen=True)
class ModelFinding:
    """Accelerator models at an equal count on one server: site_model_ratios rows of one
    benchmark and count, the fastest model's first."""

    title: str
    href: str
    ratios: tuple[Row, ...]


@dataclass(frozen=True)
class HomePage(Page):
    """Home: one finding per workload family, then accelerator models compared."""

    families: tuple[FamilyFinding, ...] = ()
    models: tuple[ModelFinding, ...] = ()
    own_configurations: int = 0  # scored configurations of the user's own full-size runs
    proxy_configurations: int = 0
    language_models: tuple[Row, ...] = ()  # site_language_models rows that Home states


@dataclass(frozen=True)
class GuidePage(Page):
    """Guide: the workloads by family, the filters' choices and the guide table's rows."""

    workloads: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    vendors: tuple[str, ...]
    models: tuple[str, ...]
    precisions: tuple[str, ...]
    deadline_hours: float  # site.yml's guide_deadline_hours
    newest_round: str
    rows: tuple[Row, ...]
