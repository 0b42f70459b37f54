"""Benchmark pages: time to train by system, scaling, time-to-accuracy curves, throughput."""

from __future__ import annotations

from collector.site import charts
from collector.site.common import benchmark_page, chart_ref, groups
from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.model import ChartRef, Row, Sheet
from collector.site.render import phrase

TTA_FIELDS = ("minutes", "quality", "system", "run_id", "run")


def page(data: SiteData, name: str) -> Sheet:
    """One benchmark's page: its rows of site_model_ratios, site_scores (no proxy-scale run:
    those are on Local pipeline checks) and published, and its charts."""
    path, title = benchmark_page(name), settings().benchmark(name).title

    def mine(table: str) -> list[Row]:
        return [r for r in data.rows(table) if r.get("benchmark") == name]

    scores = [r for r in mine("site_scores") if r["evidence"] != "proxy"]
    times = []
    for kind, rows in groups([r for r in scores if r["score_minutes"] and r["newest_round"]]):
        dots = [_dot(r) for r in rows]
        t = phrase("time_title", title=title, kind=kind, rows=dots)
        desc = phrase("time_desc", rows=dots, kind=kind)
        chart = charts.dots(dots, t, desc, charts.TIME_MEASURE, True, charts.TIME_TIPS)
        times.append(chart_ref(path, f"time-{kind}", chart, t, desc, rows))
    scaling = []
    for kind, rows in groups(mine("site_scaling")):
        t, desc = phrase("scaling_title", title=title, kind=kind), phrase("scaling_desc", rows=rows)
        scaling.append(chart_ref(path, f"scaling-{kind}", charts.scaling(rows, t, desc), t, desc))
    tta: list[ChartRef] = []
    for kind, rows in groups(mine("site_tta")):
        points = [{f: r[f] for f in TTA_FIELDS} for r in rows]
        t = phrase("tta_title", title=title, kind=kind)
        desc = phrase("tta_desc", rows=rows, kind=kind)
        chart = charts.time_to_accuracy(points, t, desc)
        tta.append(chart_ref(path, f"tta-{kind}", chart, t, desc))
    return Sheet(
        path,
        title,
        data.snapshot,
        rows={
            "models": mine("site_model_ratios"),
            "scores": scores,
            "published": mine("published"),
        },
        charts={"time": tuple(times), "scaling": tuple(scaling), "tta": tuple(tta)},
        item={"benchmark": name},
    )


def _dot(r: Row) -> Row:
    """A site_scores row as a dot of the time chart: its score with the range of its runs."""
    return {
        "label": r["label"], "value": r["score_minutes"], "low": r["fastest_minutes"],
        "high": r["slowest_minutes"], "system": r["system"], "kind": r["kind"],
        "accelerators": r["accelerators"], "runs_used": r["runs_used"], "round": r["round"],
    }  # fmt: skip
