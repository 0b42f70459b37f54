"""Compare: mixed precision, interconnect, scaling efficiency, cost and energy, by source;
the measured comparisons read from their tables as (value, interval) observations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup

from collector.queries import query
from collector.site import charts
from collector.site.data import SiteData
from collector.site.model import Page, Section
from collector.site.pages.common import (
    Row,
    by_evidence,
    chart_ref,
    evidence_order,
    host_system,
    interval,
    is_proxy,
    kind,
    num,
)


@dataclass(frozen=True)
class Measure:
    """Where a measure lives: its table, its value column and the interval's columns; with
    ``percent_over_one`` a ratio is shown as percent above one ((ratio - 1) x 100); ``keeps``
    picks the table's rows that the measure reads (all where None)."""

    table: str
    value: str
    low: str
    high: str
    percent_over_one: bool = False
    keeps: Callable[[Row], bool] | None = None

    def rows(self, data: SiteData) -> list[Row]:
        """The rows of the measure's table that it reads."""
        return [r for r in data.rows(self.table) if self.keeps is None or self.keeps(r)]

    def read(self, row: Row, column: str) -> float | None:
        """The column of `row` in the measure's unit, or None where it is not a number."""
        v = row.get(column)
        if not isinstance(v, int | float):
            return None
        return (float(v) - 1.0) * 100.0 if self.percent_over_one else float(v)


MEASURES = {
    "scaling": Measure(
        "scaling", "efficiency_pct", "efficiency_ci_low_pct", "efficiency_ci_high_pct"
    ),
    "precision": Measure("precision_gain", "gain", "gain_ci_low", "gain_ci_high"),
    # interconnect_delta's gain is time without NVLink / time with it: shown as percent slower
    "interconnect": Measure(
        "interconnect_delta", "gain", "gain_ci_low", "gain_ci_high", percent_over_one=True
    ),
    # one system against another (baselines.yml names them): baseline time / time
    "systems": Measure(
        "speedups",
        "speedup",
        "speedup_ci_low",
        "speedup_ci_high",
        keeps=lambda r: r.get("baseline_kind") == "system",
    ),
}
# How a row was measured, by its kind: strong scaling and time gains from time to train, weak
# scaling and throughput gains from throughput.
MEASURED_BY = {
    "strong": "time to train",
    "weak": "throughput",
    "time": "time to train",
    "throughput": "throughput",
}


def against(row: Row) -> str | None:
    """'vs N' where a scaling row's baseline is not one accelerator, else None."""
    base = row.get("baseline_accelerators")
    return f"vs {base}" if base not in (None, 1) else None


@dataclass(frozen=True)
class Observation:
    """One measured value with its interval, the benchmark and where it came from."""

    measure: str
    benchmark: str
    value: float
    low: float | None
    high: float | None
    accelerators: int | None
    kind: str
    row: Row

    @property
    def unit(self) -> str:
        """How its value is stated: 'x' for a mixed-precision gain (a ratio), '%' else."""
        return "x" if self.measure == "precision" else "%"


def is_point(row: Row) -> bool:
    """Whether a row states a value, not a bound or one end of a range (a study's "over 80%"
    or "1-5%": the tables keep them, with their qualifiers, but no finding reads them)."""
    return not any(
        tag in (row.get("qualifiers") or "") for tag in ("bound", "range min", "range max")
    )


def observations(data: SiteData, measure: str) -> list[Observation]:
    """Every row of the measure's table that states a value, as observations."""
    m = MEASURES[measure]
    out = []
    for row in m.rows(data):
        value = m.read(row, m.value)
        if value is None or not row.get("benchmark") or not is_point(row):
            continue
        out.append(
            Observation(
                measure=measure,
                benchmark=row["benchmark"],
                value=value,
                low=m.read(row, m.low),
                high=m.read(row, m.high),
                accelerators=row.get("accelerators") or row.get("accelerators_to"),
                kind=kind(row),
                row=row,
            )
        )
    return out


def confounded(o: Observation) -> bool:
    """Whether a measured comparison differs in more than what it compares (a published row's
    confounders column states what the study compared instead)."""
    return bool(o.row.get("confounders")) and o.row.get("source") != "published"


# How a configuration without NVLink ran: an NVLink server with peer-to-peer off is not PCIe.
LINKS = {"pcie": "over PCIe", "no-p2p": "NVLink server, peer-to-peer off"}
TOPICS = (
    ("Scaling efficiency", "scaling", "scaling", "efficiency, % of linear"),
    ("Mixed precision", "precision_gain", "precision", "speedup over FP32, x"),
    ("Interconnect", "interconnect_delta", "interconnect", "slower than over NVLink, %"),
    ("Against a baseline system", "speedups", "systems", "speedup over the baseline system, x"),
    ("Cost and energy", "cost_energy", None, ""),
)
# Columns shown for a topic's table: what is compared, then the answer with its interval, then
# how it was measured (the Data page has every column).
SHOWN = {
    "scaling": (
        "benchmark", "system", "accelerators", "baseline_accelerators", "efficiency_pct",
        "speedup", "within_noise", "kind", "precision", "interconnect", "runs", "baseline_runs",
        "round", "submitter", "qualifiers",
    ),
    "precision_gain": (
        "benchmark", "system", "accelerators", "precision", "baseline_precision", "gain",
        "within_noise", "kind", "runs", "baseline_runs", "round", "qualifiers",
    ),
    "interconnect_delta": (
        "benchmark", "accelerators", "precision", "interconnect", "baseline_interconnect", "gain",
        "within_noise", "confounders", "systems", "baseline_systems", "runs", "baseline_runs",
        "round", "qualifiers",
    ),
    "speedups": (
        "benchmark", "system_id", "accelerator", "accelerators", "baseline_system_id", "speedup",
        "within_noise", "precision", "interconnect", "minutes", "baseline_minutes", "runs",
        "baseline_runs", "round", "qualifiers",
    ),
    "cost_energy": (
        "benchmark", "system", "accelerators", "precision", "interconnect", "minutes",
        "accelerator_hours", "energy_at_tdp_kwh", "energy_measured_kwh",
        "power_measured_per_accelerator_w", "measured_runs", "runs", "cost_usd", "price_label",
        "round",
    ),
}  # fmt: skip
# Ratios shown with their 95% interval in the same cell, "value (low–high)", by the columns of
# the interval's ends, where the table has them.
INTERVALS = {
    "efficiency_pct": ("efficiency_ci_low_pct", "efficiency_ci_high_pct"),
    "speedup": ("speedup_ci_low", "speedup_ci_high"),
    "gain": ("gain_ci_low", "gain_ci_high"),
}
# Every table is shown one kind of evidence at a time, under its kind's heading, so the source
# column is left out of the tables above.
NOTES = {
    "scaling": " Strong scaling compares times to train, weak scaling the throughput of runs"
    " whose batch grows with the accelerators.",
    "speedups": " Each row is the baseline system's time to train over the row's (above 1: faster"
    " than the baseline), for the same benchmark and precision within one source, round and"
    " division; `collector/queries/baselines.yml` names the baseline systems. Rows of the"
    " baseline's own count and precision compare accelerator models (and, for local runs, the"
    " same code on two machines).",
    "cost_energy": " cost_usd is accelerator_hours times the rate per accelerator-hour in"
    " a CSV file named by `$COLLECTOR_PRICES` (collector ships example rates); a price_label"
    " of `example` marks an example"
    " rate shipped with collector, not a quoted price: put your own rates in such a file."
    " Minutes here are the mean of all converged runs; the benchmark pages show the MLPerf"
    " score, which drops the fastest and the slowest run first.",
}


def page(data: SiteData) -> Page:
    """compare.md: one section per topic; each source kind in its own table and chart."""
    path = "compare.md"
    sections = []
    for title, table, measure, axis in TOPICS:
        sections.append(_topic(data, path, title, table, measure, axis))
    intro = Markup(
        "Each chart holds one kind of evidence: official MLPerf results, your own runs at "
        "full size or published studies; proxy-scale runs compare nothing and are on "
        "[Local pipeline checks](local-checks.md). Intervals are 95% bootstrap intervals "
        "where the table computes them; published numbers are as printed. A chart leaves out "
        "pairs that differ in more than what they compare (the table names what differs). "
        "Numbers of published studies that these tables do not read are on each benchmark's "
        "page and in `published` on [Data](data.md)."
    )
    return Page(path, "Compare", data.snapshot, intro=intro, sections=tuple(sections))


def _topic(
    data: SiteData, path: str, title: str, table: str, measure: str | None, axis: str
) -> Section:
    if not data.has(table):
        return Section(
            title,
            intro=Markup(f"Not measured yet: the `{table}` table is not defined in this version."),
        )
    rows = MEASURES[measure].rows(data) if measure else data.rows(table)
    rows = [r for r in rows if not is_proxy(r)]  # pipeline checks compare nothing
    if not rows:
        return Section(
            title, intro=Markup(f"The `{table}` table has no rows for this in this store.")
        )
    units = {c["name"]: c.get("unit") for c in query.contracts()[table].columns}
    cols = SHOWN.get(table, tuple(rows[0]))
    ends = {c: INTERVALS[c] for c in cols if c in INTERVALS and units.keys() >= set(INTERVALS[c])}
    head = tuple(_heading(c, units.get(c)) + (" (95% interval)" if c in ends else "") for c in cols)
    body = [(kind(r), tuple(_cell(data, r, c, ends.get(c)) for c in cols)) for r in rows]
    chart_list = []
    # a comparison that differs in more than what it compares is a row of the table, no dot
    obs = [
        o
        for o in (observations(data, measure) if measure else [])
        if not confounded(o) and not is_proxy(o.row)
    ]
    for k in sorted(dict.fromkeys(o.kind for o in obs), key=evidence_order):
        mine = [o for o in obs if o.kind == k]
        crow = [
            {
                "label": _label(o),
                "value": o.value,
                "low": o.low,
                "high": o.high,
                "kind": k,
                "detail": o.row.get("round") or "",
            }
            for o in mine
        ]
        t = f"{title}, {k}"
        desc = f"Dot plot of {axis} for {len(crow)} comparisons ({k}), with 95% intervals."
        chart_list.append(
            chart_ref(path, f"{table}-{k}", charts.bars(crow, t, desc, axis), t, desc)
        )
    return Section(
        title,
        tables=by_evidence(head, body),
        charts=tuple(chart_list),
        intro=Markup(
            f"From the `{table}` table (see [Data](data.md)"
            f"{', which has every column' if table in SHOWN else ''}).{NOTES.get(table, '')}"
        ),
    )


def _cell(data: SiteData, row: Row, column: str, ends: tuple[str, str] | None = None) -> object:
    """A table cell: numbers to three digits, with the interval between the columns `ends`
    where the row has one ('1.94 (1.91–1.97)', on one line); a study's id as its number
    ('study 001')."""
    value = row[column]
    if ends and isinstance(value, float) and None not in (row[ends[0]], row[ends[1]]):
        text = f"{num(value)} ({interval(row[ends[0]], row[ends[1]])})"
        return Markup('<span class="ci">{}</span>').format(text)  # kept on one line
    if isinstance(value, float):
        return num(value)
    if column in ("round", "submitter") and value in data.studies:
        return f"study {data.studies[value]['number']}"
    return value


def _heading(column: str, unit: str | None) -> str:
    """A column's heading: its name with spaces, and its unit where the name does not say it
    ('accelerators, count'; 'energy at tdp kwh', not 'energy_at_tdp_kwh, kWh')."""
    name = column.replace("_", " ")
    if not unit or unit.lower() in name.lower().split():
        return name
    return f"{name}, {unit}"


def _label(o: Observation) -> str:
    """Benchmark · system · accelerators, how it was measured (time to train or throughput)
    and, for scaling, against what count where that is not one accelerator."""
    system = o.row.get("system")
    if o.measure == "systems":  # two hosts may name their systems alike: say whose
        system = host_system(o.row.get("system_id")) or system
    parts = (
        o.benchmark,
        system,
        o.accelerators,
        o.row.get("precision") if o.measure == "interconnect" else None,  # pools, not systems
        LINKS.get(o.row.get("interconnect") or "") if o.measure == "interconnect" else None,
        MEASURED_BY.get(o.row.get("kind") or ""),
        # a system baseline is named (baselines.yml), whatever its accelerator count
        f"vs {o.row.get('baseline')}" if o.measure == "systems" else against(o.row),
    )
    return " · ".join(str(part) for part in parts if part not in (None, ""))
