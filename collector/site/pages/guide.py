"""Guide: pick a workload and a deadline; see the configurations that make it."""

from __future__ import annotations

from markupsafe import Markup

from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.model import GuidePage
from collector.site.pages.benchmarks import benchmark_names
from collector.site.pages.common import (
    benchmark_page,
    interval,
    kind,
    num,
    on_accelerators,
    rel,
)
from collector.site.pages.configs import configurations
from collector.site.pages.observations import (
    MEASURED_BY,
    advice,
    against,
    confounded,
    observations,
)

FIELDS = (
    "benchmark",
    "title",
    "domain",
    "kind",
    "submitter",
    "system",
    "round",
    "hardware",
    "accelerators",
    "nodes",
    "interconnect",
    "precision",
    "minutes",
    "fastest_minutes",
    "slowest_minutes",
    "runs_used",
)


def page(data: SiteData) -> GuidePage:
    """guide.md: the configurations as embedded data, filtered in the browser."""
    path = "guide.md"
    names = benchmark_names(data)
    domains = [
        d for d in settings().domains if any(settings().benchmark(b).domain == d for b in names)
    ]
    workloads = tuple(
        [(f"domain:{d}", f"all {d}") for d in domains]
        + [(b, settings().benchmark(b).title) for b in names]
    )
    reasons = _reasons(data)
    configs = []
    for c in configurations(data):
        row = {k: c.get(k) for k in FIELDS}
        row["system_href"] = rel(path, c["system_doc"])
        row["benchmark_href"] = rel(path, benchmark_page(c["benchmark"]))
        bench = (kind(c), c["benchmark"])
        count = (*bench, c.get("accelerators"))
        precision = reasons.get((*count, "precision", c.get("interconnect")))
        row["reasons"] = [
            *reasons.get((*count, c.get("system")), []),
            *reasons.get((*count, "interconnect", c.get("precision")), []),
            *(precision or reasons.get(bench, [])),
        ]
        configs.append(row)
    configs.sort(key=lambda r: (r["accelerators"] or 0, r["minutes"]))
    intro = Markup(
        "Pick a workload and a deadline. The answer lists every configuration whose score "
        "meets the deadline, one table per kind of evidence (official results first), "
        "fewest accelerators first. *All runs* means even the slowest converged run met it; "
        "*on average* means the score did but some run did not."
    )
    return GuidePage(
        path,
        "Guide: what trains in time",
        data.snapshot,
        intro=intro,
        workloads=workloads,
        deadlines_hours=settings().deadlines_hours,
        configurations=tuple(configs),
        advice=advice(data),
    )


def _reasons(data: SiteData) -> dict[tuple, list[str]]:
    """The measured reasons a configuration fits, from the same kind of evidence as the
    configuration, so sources are never mixed in one answer; one per measure and way of
    measuring it (time to train or throughput), time-based first.

    Keyed by evidence kind and benchmark, then: scaling by the configuration's accelerators
    and system (against one accelerator where that was measured), interconnect by the
    accelerator count and precision, mixed precision by the accelerator count and
    interconnect. Mixed precision is also keyed by the benchmark alone, for configurations
    measured in one precision only (its text names the count it was measured at). Interconnect
    pairs that differ in more than the link give no reason.
    """
    out: dict[tuple, dict[tuple[str, str], str]] = {}
    labels = {
        "scaling": "scaling efficiency {v}%",
        "precision": "mixed precision {v}x",
        "interconnect": "{v}% {way} without NVLink",
    }
    for measure, label in labels.items():
        found = observations(data, measure)
        found.sort(
            key=lambda o: (
                o.row.get("kind") not in ("strong", "time", None),
                o.row.get("baseline_accelerators") not in (None, 1),
            )
        )
        for o in found:
            if confounded(o):  # differs in more than the link: no reason for any configuration
                continue
            how = MEASURED_BY.get(o.row.get("kind") or "", "")
            size, low, high, way = o.reading()
            text = label.format(v=num(size), way=way) + (f" in {how}" if how else "")
            key: tuple = (o.kind, o.benchmark)
            if measure == "scaling":
                key = (*key, o.accelerators, o.row.get("system"))
                text += f" {against(o.row)}" if against(o.row) else ""
                if o.value >= settings().above_linear_pct:
                    text += ", above linear: the runs differ in more than the count"
            elif measure == "interconnect":
                key = (*key, o.accelerators, measure, o.row.get("precision"))
            elif o.accelerators:
                text += on_accelerators(o.accelerators)
            if low is not None and high is not None:
                text += f" ({interval(low, high)})"
            if measure == "precision":
                own = (*key, o.accelerators, measure, o.row.get("interconnect"))
                out.setdefault(own, {}).setdefault((measure, how), text)
            out.setdefault(key, {}).setdefault((measure, how), text)
    return {key: list(found.values()) for key, found in out.items()}
