"""Compare: mixed precision, interconnect, scaling efficiency, cost and energy, one kind of
evidence at a time: each topic's table (the columns that say what is compared, the answer with
its interval, how it was measured) and its measured comparisons charted (site_comparisons)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from markupsafe import Markup

from collector.queries import parameters, query
from collector.site import charts
from collector.site.common import chart_ref, groups, interval, num
from collector.site.data import SiteData
from collector.site.model import Row, Sheet, Table
from collector.site.render import phrase

PATH = "compare.md"
# (title, table, axis of its chart): the topics in the page's order
TOPICS = (
    ("Scaling efficiency", "scaling", "efficiency, % of linear"),
    ("Mixed precision", "precision_gain", "speedup over FP32, x"),
    ("Interconnect", "interconnect_delta", "slower than over NVLink, %"),
    ("Against a baseline system", "speedups", "speedup over the baseline system, x"),
    ("Cost and energy", "cost_energy", ""),
)
# each table is shown one kind of evidence at a time, under its kind's heading (evidence.yml)
EVIDENCE = {r["evidence"]: r["heading"] for r in parameters.evidence_kinds().rows
            if r["evidence"] in ("official", "local", "published")}  # fmt: skip
# Columns of a topic's table: first those shown (what is compared, then the answer with its
# interval and whether it is a tie), which fit beside each other on a laptop; then how it was
# measured, shown on demand (the Data page has every column).
SHOWN = {
    "scaling": (
        ("benchmark", "system", "accelerators", "efficiency_pct", "speedup", "within_noise"),
        ("baseline_accelerators", "kind", "precision", "interconnect", "runs", "baseline_runs",
         "round", "submitter", "qualifiers"),
    ),
    "precision_gain": (
        ("benchmark", "system", "accelerators", "precision", "baseline_precision", "gain",
         "within_noise"),
        ("kind", "runs", "baseline_runs", "round", "qualifiers"),
    ),
    "interconnect_delta": (
        ("benchmark", "accelerators", "interconnect", "baseline_interconnect", "gain",
         "within_noise", "confounders"),
        ("precision", "systems", "baseline_systems", "runs", "baseline_runs", "round",
         "qualifiers"),
    ),
    "speedups": (
        ("benchmark", "system", "accelerators", "speedup", "within_noise", "baseline_system"),
        ("accelerator", "precision", "interconnect", "minutes", "baseline_minutes", "runs",
         "baseline_runs", "round", "qualifiers"),
    ),
    "cost_energy": (
        ("benchmark", "system", "accelerators", "cost_usd", "price_label", "energy_at_tdp_kwh",
         "energy_measured_kwh"),
        ("accelerator_hours", "minutes", "power_measured_per_accelerator_w", "measured_runs",
         "runs", "precision", "interconnect", "round"),
    ),
}  # fmt: skip
# what is compared: a study that leaves one out (a statement across benchmarks or GPU counts)
# says so in the cell
STATED = ("benchmark", "system", "accelerators", "precision", "interconnect")
# Ratios shown with their 95% interval in the same cell, "value (low–high)", by the columns of
# the interval's ends, where the table has them.
INTERVALS = {
    "efficiency_pct": ("efficiency_ci_low_pct", "efficiency_ci_high_pct"),
    "speedup": ("speedup_ci_low", "speedup_ci_high"),
    "gain": ("gain_ci_low", "gain_ci_high"),
}


def page(data: SiteData) -> Sheet:
    """compare.md: per topic, a table per kind of evidence and a chart per kind."""
    observed = data.rows("site_comparisons")
    in_words = _in_words(data)
    topics, made = [], {}
    for title, table, axis in TOPICS:
        read = [r for r in data.rows(table) if _read(table, r)]
        rows = [r for r in read if not r.get("withheld_reason")]
        withheld = Counter(r["withheld_reason"] for r in read if r.get("withheld_reason"))
        topics.append(
            {
                "title": title,
                "table": table,
                "axis": axis,
                "tables": _tables(data, table, [in_words(r) for r in rows]),
                "withheld": sorted(withheld.items()),
            }
        )
        made[table] = []
        for kind, dots in groups(r for r in observed if r["topic"] == table):
            t = phrase("compare_title", title=title, kind=kind, rows=dots)
            desc = phrase("compare_desc", rows=dots, axis=axis, kind=kind)
            chart = charts.dots(dots, t, desc, axis)
            made[table].append(chart_ref(PATH, f"{table}-{kind}", chart, t, desc, dots))
    refs = {table: tuple(c) for table, c in made.items()}
    return Sheet(PATH, "Compare", data.snapshot, rows={"topics": topics}, charts=refs)


def _read(table: str, row: Row) -> bool:
    """Whether the page reads a row: proxy-scale runs compare nothing, and a speedup is read
    against a system that baselines.yml names."""
    proxy = row.get("source") == "local" and row.get("scale") != "full"
    return not proxy and (table != "speedups" or row.get("baseline_kind") == "system")


def _in_words(data: SiteData) -> Callable[[Row], Row]:
    """A row with its benchmark and systems in words (site_benchmark_names, site_systems)."""
    words = {(r["benchmark"], r["round"]): r["words"] for r in data.rows("site_benchmark_names")}
    hardware = {r["system_id"]: r["hardware"] for r in data.rows("site_systems") if r["hardware"]}

    def row(r: Row) -> Row:
        out = dict(r, benchmark=words.get((r["benchmark"], r["round"]), r["benchmark"]))
        for column in ("system", "baseline_system"):
            if column in r:
                out[column] = _system(r.get(f"{column}_id"), r[column], hardware)
        return out

    return row


def _tables(data: SiteData, table: str, rows: list[Row]) -> list[Table]:
    """The topic's rows, one table per kind of evidence, official first."""
    units = {c["name"]: c.get("unit") for c in query.contracts()[table].columns}
    first, more = SHOWN[table]
    cols = first + more
    ends = {c: INTERVALS[c] for c in cols if c in INTERVALS and units.keys() >= set(INTERVALS[c])}
    head = tuple(_heading(c, units.get(c)) + (" (95% interval)" if c in ends else "") for c in cols)
    return [
        Table(head, cells, heading, len(first))
        for source, heading in EVIDENCE.items()
        if (cells := tuple(tuple(_cell(data, r, c, ends.get(c)) for c in cols)
                           for r in rows if r.get("source") == source))
    ]  # fmt: skip


def _system(system_id: str | None, name: object, hardware: dict[str, str]) -> object:
    """A system in words ('8 x NVIDIA H100, 1 node, NVLink (NVSwitch)'), its name as submitted
    on hover; the name where site_systems has no words for it."""
    words = hardware.get(system_id or "")
    if not words:
        return name
    return Markup('<span title="{}">{}</span>').format(name, words)


def _cell(
    data: SiteData | None, row: Row, column: str, ends: tuple[str, str] | None = None
) -> object:
    """A table cell: numbers to three digits, with the interval between the columns `ends`
    where the row has one ('1.94 (1.91–1.97)', on one line); a study's id as its number
    ('study 001'); what a study's row leaves out of what is compared, 'not stated'; a flag
    as 'yes' or 'no'."""
    value = row[column]
    if value in (None, "") and row.get("source") == "published" and column in STATED:
        return "not stated"
    if ends and isinstance(value, float) and None not in (row[ends[0]], row[ends[1]]):
        text = f"{num(value)} ({interval(row[ends[0]], row[ends[1]])})"
        return Markup('<span class="ci">{}</span>').format(text)  # kept on one line
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return num(value)
    if data and column in ("round", "submitter") and value in data.studies:
        return f"study {data.studies[value]['number']}"
    return value


# a column name's last word that is its unit, as a heading writes it
UNIT_WORDS = {"pct": "%", "kwh": "kWh", "usd": "USD", "w": "W", "tdp": "TDP"}


def _heading(column: str, unit: str | None) -> str:
    """A column's heading in words, its unit after a comma: 'accelerators, count';
    'efficiency, %' and 'energy at TDP, kWh' for efficiency_pct and energy_at_tdp_kwh (a name
    that ends in its unit); 'minutes', not 'minutes, minutes'."""
    *words, last = column.split("_")
    if words and last in UNIT_WORDS:
        return " ".join(UNIT_WORDS.get(w, w) for w in words) + ", " + UNIT_WORDS[last]
    name = column.replace("_", " ")
    if not unit or unit.lower() in name.lower().split():
        return name
    return f"{name}, {unit}"
