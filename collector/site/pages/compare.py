"""Compare: mixed precision, interconnect, scaling efficiency, cost and energy, by source."""

from __future__ import annotations

from markupsafe import Markup

from collector.ingest.published import qualifiers
from collector.queries import query
from collector.site import charts
from collector.site.data import SiteData
from collector.site.model import Page, Section, Table
from collector.site.pages.common import (
    Row,
    by_evidence,
    chart_ref,
    evidence_order,
    host_system,
    interval,
    kind,
    num,
)
from collector.site.pages.observations import (
    MEASURED_BY,
    MEASURES,
    Observation,
    against,
    observations,
)

TOPICS = (
    ("Scaling efficiency", "scaling", "scaling", "efficiency, % of linear"),
    ("Mixed precision", "precision_gain", "precision", "speedup over FP32, x"),
    ("Interconnect", "interconnect_delta", "interconnect", "slower without NVLink, %"),
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
# Published metrics shown under each topic, with the filter that selects them: what a number
# is measured against decides its topic (a 1-GPU baseline for scaling, FP32 for mixed
# precision, a PCIe or NVLink setup of the same precision for the interconnect), as the
# derived tables read them.
PUBLISHED = {
    "scaling": lambda r: (
        r["metric"] in ("speedup", "scaling_efficiency_pct")
        and (r.get("baseline") or "").upper().startswith("1 GPU")
    ),
    "precision_gain": lambda r: (
        r.get("precision") == "fp16"
        and r["metric"] in ("improvement_pct", "time_reduction_pct")
        and "FP32" in (r.get("baseline") or "").upper()
    ),
    "interconnect_delta": lambda r: (
        r["metric"] == "improvement_pct"
        and "FP32" not in (r.get("baseline") or "").upper()
        and any(w in (r.get("baseline") or "") + (r.get("notes") or "") for w in ("PCIe", "NVLink"))
    ),
}


def page(data: SiteData) -> Page:
    """compare.md: one section per topic; each source kind in its own table and chart."""
    path = "compare.md"
    sections = []
    for title, table, measure, axis in TOPICS:
        sections.append(_topic(data, path, title, table, measure, axis))
        if table in PUBLISHED:
            pub = [r for r in data.rows("published") if PUBLISHED[table](r)]
            if pub:
                sections.append(_published(path, title, table, pub))
    intro = Markup(
        "Each chart holds one kind of evidence: official MLPerf results, local runs "
        "or published studies. Intervals are 95% bootstrap intervals where the "
        "table computes them; published numbers are as printed."
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
    obs = observations(data, measure) if measure else []
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
        MEASURED_BY.get(o.row.get("kind") or ""),
        # a system baseline is named (baselines.yml), whatever its accelerator count
        f"vs {o.row.get('baseline')}" if o.measure == "systems" else against(o.row),
    )
    return " · ".join(str(part) for part in parts if part not in (None, ""))


PUBLISHED_AXES = {  # the published metrics charted, each on an axis of its own
    "speedup": "speedup as published, x",
    "improvement_pct": "improvement as published, %",
    "scaling_efficiency_pct": "scaling efficiency as published, %",
}


def _published(path: str, title: str, table: str, rows: list[Row]) -> Section:
    chart_list = []
    for metric, axis in PUBLISHED_AXES.items():
        crow = [
            {
                "label": f"{r.get('system') or 'unnamed'} · {r.get('benchmark') or 'all'} · "
                f"{r.get('accelerators') or '?'} GPUs · {r['row_id']}"
                + (f" · {qualifiers(r.get('notes'))}" if qualifiers(r.get("notes")) else ""),
                "value": float(r["value"]),
                "low": None,
                "high": None,
                "kind": kind(r),
                "detail": r["citation"],
            }
            for r in rows
            if r["metric"] == metric
        ]
        if not crow:
            continue
        t = f"{title}: published studies, {axis.split(' as ')[0]}"
        desc = f"Dot plot of {len(crow)} numbers transcribed from published studies ({axis})."
        chart = charts.bars(crow, t, desc, axis)
        chart_list.append(chart_ref(path, f"{table}-published-{metric}", chart, t, desc))
    tbl = Table(
        (
            "study row",
            "system",
            "benchmark",
            "accelerators",
            "metric",
            "value",
            "unit",
            "baseline",
            "citation",
            "transcription notes",
        ),
        tuple(
            (
                r["row_id"],
                r.get("system"),
                r.get("benchmark"),
                r.get("accelerators"),
                r["metric"],
                r["value"],
                r.get("unit"),
                r.get("baseline"),
                r["citation"],
                r.get("notes"),
            )
            for r in rows
        ),
        caption="The notes say how each number was read: what the study leaves unstated, "
        "ranges, and how a percentage was taken where the study's wording allows two readings.",
    )
    return Section(
        f"{title}: published studies (transcribed, not measured by collector)",
        table=tbl,
        charts=tuple(chart_list),
    )
