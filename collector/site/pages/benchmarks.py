"""Benchmark pages: time to train by system, scaling, time-to-accuracy curves, throughput."""

from __future__ import annotations

from collections import defaultdict

from markupsafe import Markup

from collector.site import charts
from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.escape import markdown_text
from collector.site.model import Page, Section, Table
from collector.site.pages.common import (
    Row,
    benchmark_names,
    benchmark_page,
    by_evidence,
    chart_ref,
    distinct,
    evidence_order,
    interval,
    is_proxy,
    kind,
    link,
    num,
    rel,
    round_key,
    round_label,
    system_page,
)

TTA_RUNS_PER_SYSTEM = 5  # curves drawn per configuration (the first runs by index)


def index_page(data: SiteData) -> Page:
    """benchmarks/index.md: one row per benchmark in a table per kind of evidence (a proxy-scale
    local run is not faster than an official result, it is a different test)."""
    path = "benchmarks/index.md"
    configs = [
        c for c in data.rows("site_scores") if c["score_minutes"] and c["evidence"] != "proxy"
    ]
    rows = []
    for evidence in sorted({kind(c) for c in configs}, key=evidence_order):
        for name in benchmark_names(data):
            mine = [c for c in configs if c["benchmark"] == name and kind(c) == evidence]
            if not mine:
                continue
            best = min(mine, key=lambda c: c["score_minutes"])
            cells = (
                link(settings().benchmark(name).title, rel(path, benchmark_page(name))),
                settings().family_title(settings().benchmark(name).family),
                len(mine),
                Markup(markdown_text(num(best["score_minutes"]))),
                f"{best['hardware']} ({best['submitter']}, {round_label(best)})",
            )
            rows.append((evidence, cells))
    columns = ("benchmark", "kind of job", "scored configurations", "fastest, minutes", "by")
    intro = Markup(
        "The fastest scored configuration of each benchmark, one table per kind of evidence: "
        "times of runs at a proxy scale are not comparable with official results."
        if rows
        else "No benchmark has a scored configuration yet."
    )
    section = Section("All benchmarks", intro=intro, tables=by_evidence(columns, rows))
    return Page(path, "Benchmarks", data.snapshot, sections=(section,))


def page(data: SiteData, name: str) -> Page:
    """One benchmark's page."""
    path = benchmark_page(name)
    bench = settings().benchmark(name)
    configs = sorted(
        (
            c
            for c in data.rows("site_scores")
            if c["benchmark"] == name and c["evidence"] != "proxy"
        ),
        key=lambda c: (
            evidence_order(kind(c)),
            tuple(-p for p in round_key(c["round"])),
            c["score_minutes"] is None,
            c["score_minutes"] or 0,
        ),
    )
    intro = Markup(
        f"Kind of job: **{markdown_text(settings().family_title(bench.family))}**. "
        f"MLPerf allows {num(bench.variance_pct)}% "
        "run-to-run variance for this benchmark; differences smaller than that are noise. "
        "Official MLPerf results, local runs and published studies are shown apart; "
        "proxy-scale runs are on [Local pipeline checks](../local-checks.md)."
    )
    sections = [
        _models_section([r for r in data.rows("site_model_ratios") if r["benchmark"] == name]),
        _time_section(path, bench.title, configs),
        _scaling_section(path, bench.title, configs),
    ]
    sections.append(_tta_section(path, bench.title, [e for e in data.evals if _answers(e, name)]))
    published = [r for r in data.rows("published") if r.get("benchmark") == name]
    if published:
        sections.append(_published_section(published))
    return Page(path, bench.title, data.snapshot, intro=intro, sections=tuple(sections))


def _answers(run: Row, benchmark: str) -> bool:
    """Whether a run of the benchmark is evidence of its speed (a proxy-scale run is not)."""
    return run["benchmark"] == benchmark and not is_proxy(run)


def _time_section(path: str, title: str, configs: list[Row]) -> Section:
    rows = []
    for c in configs:
        cells = (  # what tells systems apart and the score first: the page is read across
            link(c["hardware"], rel(path, system_page(c))),
            c.get("precision") or "not stated",  # v0.5 logs do not state it
            Markup(markdown_text(num(c["score_minutes"])))
            if c["score_minutes"]
            else c["unscorable_reason"],
            interval(c["fastest_minutes"], c["slowest_minutes"]),
            f"{c['runs_used']} of {c['runs_total']}",
            c["submitter"],
            round_label(c),
        )
        rows.append((kind(c), cells))
    columns = (
        "system",
        "precision",
        "score, minutes",
        "fastest–slowest run",
        "runs averaged",
        "submitter",
        "round",
    )
    caption = (
        "Newest round first. Score: the fastest and slowest scored runs dropped, the rest "
        "averaged (see Method); rows of the site_scores table. Each system links to its page, "
        "which lists every log with its sha256."
    )
    scored = [c for c in configs if c["score_minutes"]]
    chart_list = []
    for source_kind in sorted(distinct(kind(c) for c in scored), key=evidence_order):
        # the newest round only: the table below has every round
        rows_k = [c for c in scored if kind(c) == source_kind and c["newest_round"]]
        t = f"{title}: time to train, {source_kind}, {rows_k[0]['round']}"
        desc = (
            f"Dot plot of the time to train of {len(rows_k)} configurations ({source_kind}, "
            f"{rows_k[0]['round']}, the newest round with a score); "
            f"fastest {num(min(c['score_minutes'] for c in rows_k))} minutes."
        )
        chart = charts.time_to_train(_chart_rows(rows_k), t, desc)
        chart_list.append(chart_ref(path, f"time-{source_kind}", chart, t, desc))
    return Section(
        "Time to train by system",
        tables=by_evidence(columns, rows, caption),
        charts=tuple(chart_list),
    )


def _chart_rows(rows: list[Row]) -> list[Row]:
    keep = ("fastest_minutes", "slowest_minutes", "system", "accelerators", "runs_used")
    return [
        {
            **{k: r.get(k) for k in keep},
            "label": f"{r['hardware']} · {r['submitter']} {round_label(r)}",
            "minutes": r["score_minutes"],
            "kind": kind(r),
        }
        for r in rows
    ]


def _models_section(ratios: list[Row]) -> Section:
    """Accelerator models at an equal count on one server (site_model_ratios)."""
    rows = tuple(
        (
            r["accelerators"],
            f"{r['model']} ({r['submitter']}, {r['system']})",
            f"{r['other_model']} ({r['other_submitter']}, {r['other_system']})",
            Markup(markdown_text(num(r["minutes"]))),
            Markup(markdown_text(num(r["other_minutes"]))),
            f"{num(r['speedup'])}x"
            + (
                f" ({interval(r['speedup_ci_low'], r['speedup_ci_high'])})"
                if r["speedup_ci_low"] is not None
                else ""
            ),
        )
        for r in ratios
    )
    return Section(
        "Accelerator models, same count, one server",
        intro=Markup(
            "In the newest official round: the fastest submitted configuration of each "
            "accelerator model, against the fastest model's. Times here are means over every "
            "converged run (the ratio's interval needs them), not the MLPerf score below. "
            "Each ratio rests on one configuration of each model. Rows of the "
            "`site_model_ratios` table."
            if rows
            else "No two accelerator models have an official result at the same count on one "
            "server in the newest round of this benchmark."
        ),
        table=Table(
            (
                "accelerators",
                "fastest model",
                "model compared",
                "mean minutes",
                "mean minutes compared",
                "times as fast (95% interval)",
            ),
            rows,
        )
        if rows
        else None,
    )


def _family_label(key: tuple) -> str:
    """'submitter accelerator (round)', then the precision and interconnect where known."""
    _kind, rnd, submitter, accelerator, precision, interconnect = key
    known = " ".join(str(v) for v in (precision, interconnect) if v)
    return f"{submitter} {accelerator} ({rnd})" + (f" {known}" if known else "")


def _scaling_section(path: str, title: str, configs: list[Row]) -> Section:
    """Minutes against accelerator count for each family: same source, round, submitter,
    accelerator, precision and interconnect (one line never joins fp32 to bf16)."""
    families: dict[tuple, list[Row]] = defaultdict(list)
    for c in configs:
        if c["score_minutes"] and c.get("accelerators"):
            key = (kind(c), c["round"], c["submitter"], c.get("accelerator"))
            families[(*key, c.get("precision"), c.get("interconnect"))].append(c)
    series = {k: v for k, v in families.items() if len({c["accelerators"] for c in v}) > 1}
    if not series:
        return Section(
            "Scaling",
            intro=Markup(
                "No submitter has results at more than one accelerator count for this "
                "benchmark in one round, so no scaling curve can be drawn."
            ),
        )
    chart_list = []
    for source_kind in sorted(distinct(k[0] for k in series), key=evidence_order):
        rows = [
            {
                "accelerators": c["accelerators"],
                "value": c["score_minutes"],
                "low": c["fastest_minutes"],
                "high": c["slowest_minutes"],
                "series": _family_label(k),
                "measure": "minutes to train",
                "kind": k[0],
            }
            for k, cs in series.items()
            if k[0] == source_kind
            for c in cs
        ]
        t = f"{title}: time to train against accelerators, {source_kind}"
        desc = (
            f"Line chart of minutes to train against accelerator count for {len(series)} "
            "configuration families; bars span the fastest to the slowest converged run."
        )
        chart_list.append(
            chart_ref(path, f"scaling-{source_kind}", charts.scaling(rows, t, desc), t, desc)
        )
    return Section(
        "Scaling",
        intro=Markup(
            "Time to train against accelerator count within one submitter, round, "
            "accelerator model, precision and interconnect. Error bars span the fastest "
            "to the slowest converged run. Scaling efficiency with bootstrap intervals is "
            "on the [Compare](../compare.md) page."
        ),
        charts=tuple(chart_list),
    )


def _tta_section(path: str, title: str, evals: list[Row]) -> Section:
    if not evals:
        return Section("Time to accuracy", intro=Markup("No evaluations are logged."))
    # the newest round of each kind of evidence: every round's evaluations would make the
    # page megabytes long
    newest = {
        k: max((e["round"] for e in evals if kind(e) == k), key=round_key)
        for k in {kind(e) for e in evals}
    }
    kept: dict[str, set[int]] = defaultdict(set)
    points = []
    for e in evals:
        if e["round"] != newest[kind(e)]:
            continue
        runs = kept[e["system_id"]]
        if e["run"] not in runs and len(runs) >= TTA_RUNS_PER_SYSTEM:
            continue
        runs.add(e["run"])
        points.append(e)
    chart_list = []
    for source_kind in sorted(distinct(kind(e) for e in points), key=evidence_order):
        rows = [
            {
                "minutes": e["minutes"],
                "quality": e["quality"],
                "system": e["system"],
                "run_id": e["run_id"],
                "run": e["run"],
            }
            for e in points
            if kind(e) == source_kind
        ]
        t = f"{title}: quality against time, {source_kind}"
        desc = (
            f"Line chart of logged quality against minutes since run start, one line per run, "
            f"{len({r['run_id'] for r in rows})} runs of {len({r['system'] for r in rows})} "
            f"systems ({source_kind})."
        )
        chart_list.append(
            chart_ref(path, f"tta-{source_kind}", charts.time_to_accuracy(rows, t, desc), t, desc)
        )
    return Section(
        "Time to accuracy",
        intro=Markup(
            f"Every evaluation logged in the newest round of each kind of evidence, up to "
            f"the first {TTA_RUNS_PER_SYSTEM} runs of each system; quality in the "
            "benchmark's own metric."
        ),
        charts=tuple(chart_list),
    )


def _published_section(rows: list[Row]) -> Section:
    table = Table(
        (
            "system",
            "accelerators",
            "precision",
            "metric",
            "value",
            "unit",
            "citation",
            "transcription notes",
        ),
        tuple(
            (
                r.get("system"),
                r.get("accelerators"),
                r.get("precision"),
                r["metric"],
                r["value"],
                r.get("unit"),
                r.get("citation"),
                r.get("notes"),
            )
            for r in rows
        ),
        caption="An empty cell is one the study does not state; the notes say what it does.",
    )
    return Section(
        "Published studies (transcribed, not measured by collector)",
        intro=Markup("Numbers as the studies print them; see [Sources](../sources.md)."),
        table=table,
    )
