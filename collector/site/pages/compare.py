"""Compare: mixed precision, interconnect, scaling efficiency, cost and energy, by source."""

from __future__ import annotations

from markupsafe import Markup

from collector import query
from collector.site import charts
from collector.site.data import SiteData
from collector.site.model import Page, Section, Table
from collector.site.pages.common import Row, chart_ref, kind, num
from collector.site.pages.observations import MEASURED_BY, Observation, against, observations

TOPICS = (
    ("Scaling efficiency", "scaling", "scaling", "efficiency, % of linear"),
    ("Mixed precision", "precision_gain", "precision", "speedup over FP32, x"),
    ("Interconnect", "interconnect_delta", "interconnect", "slower without NVLink, %"),
    ("Cost and energy", "cost_energy", None, ""),
)
# Columns shown for a topic's table, what is compared and the answer first (the Data page has
# every column).
SHOWN = {
    "scaling": (
        "benchmark", "system", "accelerators", "baseline_accelerators", "kind", "precision",
        "interconnect", "efficiency_pct", "efficiency_ci_low_pct", "efficiency_ci_high_pct",
        "speedup", "within_noise", "runs", "baseline_runs", "source", "round", "submitter",
    ),
    "precision_gain": (
        "benchmark", "system", "accelerators", "precision", "baseline_precision", "kind", "gain",
        "gain_ci_low", "gain_ci_high", "within_noise", "runs", "baseline_runs", "source", "round",
    ),
    "interconnect_delta": (
        "benchmark", "accelerators", "precision", "interconnect", "baseline_interconnect", "gain",
        "gain_ci_low", "gain_ci_high", "within_noise", "confounders", "systems",
        "baseline_systems", "runs", "baseline_runs", "source", "round",
    ),
    "cost_energy": (
        "benchmark", "system", "accelerators", "precision", "interconnect", "minutes",
        "accelerator_hours", "energy_at_tdp_kwh", "energy_measured_kwh",
        "power_measured_per_accelerator_w", "measured_runs", "runs", "cost_usd", "price_label",
        "source",
    ),
}  # fmt: skip
NOTES = {
    "scaling": " Strong scaling compares times to train, weak scaling the throughput of runs"
    " whose batch grows with the accelerators."
}
# Published metrics shown under each topic, with the filter that selects them.
PUBLISHED = {
    "scaling": lambda r: (
        r["metric"] in ("speedup", "scaling_efficiency_pct") and "GPU" in (r.get("baseline") or "")
    ),
    "precision_gain": lambda r: (
        r.get("precision") == "fp16" and r["metric"] in ("improvement_pct", "time_reduction_pct")
    ),
    "interconnect_delta": lambda r: (
        r["metric"] == "improvement_pct"
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
    rows = data.rows(table)
    if not rows:
        return Section(title, intro=Markup(f"The `{table}` table has no rows for this store."))
    units = {c["name"]: c.get("unit") for c in query.contracts()[table].columns}
    cols = SHOWN.get(table, tuple(rows[0]))
    head = tuple(f"{c}, {units[c]}" if units.get(c) else c for c in cols)
    body = tuple(tuple(num(r[c]) if isinstance(r[c], float) else r[c] for c in cols) for r in rows)
    chart_list = []
    obs = observations(data, measure) if measure else []
    for k in dict.fromkeys(o.kind for o in obs):
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
        table=Table(head, body),
        charts=tuple(chart_list),
        intro=Markup(
            f"From the `{table}` table (see [Data](data.md)"
            f"{', which has every column' if table in SHOWN else ''}).{NOTES.get(table, '')}"
        ),
    )


def _label(o: Observation) -> str:
    """Benchmark · system · accelerators, how it was measured (time to train or throughput)
    and, for scaling, against what count where that is not one accelerator."""
    parts = (
        o.benchmark,
        o.row.get("system"),
        o.accelerators,
        o.row.get("precision") if o.measure == "interconnect" else None,  # pools, not systems
        MEASURED_BY.get(o.row.get("kind") or ""),
        against(o.row),
    )
    return " · ".join(str(part) for part in parts if part not in (None, ""))


def _published(path: str, title: str, table: str, rows: list[Row]) -> Section:
    crow = [
        {
            "label": f"{r.get('system') or 'unnamed'} · {r.get('benchmark') or 'all'} · "
            f"{r.get('accelerators') or '?'} GPUs · {r['row_id']}",
            "value": float(r["value"]),
            "low": None,
            "high": None,
            "kind": kind(r),
            "detail": r["citation"],
        }
        for r in rows
        if r["metric"] in ("speedup", "improvement_pct")
    ]
    chart_list = []
    if crow:
        metric = "published speedup (ratio) or improvement (%)"
        t = f"{title}: published studies"
        desc = f"Dot plot of {len(crow)} numbers transcribed from published studies."
        chart_list.append(
            chart_ref(path, f"{table}-published", charts.bars(crow, t, desc, metric), t, desc)
        )
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
            )
            for r in rows
        ),
    )
    return Section(
        f"{title}: published studies (transcribed, not measured by collector)",
        table=tbl,
        charts=tuple(chart_list),
    )
