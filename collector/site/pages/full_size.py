"""The Full-size runs page: accelerator models side by side, and data-parallel scaling on one
server as a table and a chart per server."""

from __future__ import annotations

from collector.queries.parameters import hardware_words
from collector.site import charts
from collector.site.common import chart_ref, groups
from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.escape import slug
from collector.site.model import ChartRef, Row, Sheet
from collector.site.render import phrase

PATH = "full-size.md"
LINKED = ("full_size_ratios", "full_size_scaling")  # tables whose rows name a link


def page(data: SiteData) -> Sheet:
    """The page's rows of site_language_models and site_suite_runs, and of full_size_ratios
    and full_size_scaling each with its link in words (``link``), and one scaling chart per
    server (a campaign's submitter) under its name."""
    # each recorded link in the words of hardware_words.yml: peer-to-peer off is the same
    # NVLink server with NCCL's GPU-to-GPU transfers disabled, never a PCIe server
    words = {r["interconnect"]: r["words"] for r in hardware_words()["link_names"].to_pylist()}
    rows = {
        t: [{**r, "link": words.get(r["interconnect"], r["interconnect"])} for r in data.rows(t)]
        for t in LINKED
    }
    rows["site_language_models"] = data.rows("site_language_models")
    rows["site_suite_runs"] = data.rows("site_suite_runs")
    rows["projection_anchored"] = data.rows("projection_anchored")
    refs: dict[str, tuple[ChartRef, ...]] = {}
    for server, mine in groups(rows["full_size_scaling"], "submitter"):
        points = scaling_points(mine)
        title = phrase("server_scaling_title", model=mine[0]["accelerator_model"], server=server)
        desc = phrase("server_scaling_desc", rows=points)
        chart = charts.efficiency(points, title, desc)
        refs[server] = (chart_ref(PATH, f"scaling-{slug(server)}", chart, title, desc),)
    return Sheet(PATH, "Full-size runs", data.snapshot, rows=rows, charts=refs)


def scaling_points(rows: list[Row]) -> list[Row]:
    """One server's full_size_scaling rows (with ``link``) as chart points: a line per
    benchmark (with its precision where the server ran several) and link, starting at one
    accelerator, which is 100% of linear by definition."""
    several = len({r["precision"] for r in rows}) > 1
    points: dict[tuple, Row] = {}
    for r in rows:
        if r["efficiency_pct"] is None:  # withheld: not a point on a chart
            continue
        title = settings().benchmark(r["benchmark"]).title
        series = f"{title} ({r['precision']})" if several else title
        link = r["link"] or "not recorded"
        one = {"accelerators": 1, "value": 100.0, "low": None, "high": None}
        points.setdefault((series, link, 1), {**one, "series": series, "link": link})
        points[(series, link, r["accelerators"])] = {
            "accelerators": r["accelerators"],
            "value": r["efficiency_pct"],
            "low": r["efficiency_ci_low_pct"],
            "high": r["efficiency_ci_high_pct"],
            "series": series,
            "link": link,
        }
    for p in points.values():
        p["value_text"] = f"{p['value']:.1f}%"
    return sorted(points.values(), key=lambda p: (p["series"], p["link"], p["accelerators"]))
