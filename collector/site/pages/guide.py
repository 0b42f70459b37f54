"""Guide: pick a workload and a deadline; see the configurations that make it."""

from __future__ import annotations

from markupsafe import Markup

from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.model import GuidePage
from collector.site.pages.benchmarks import benchmark_names
from collector.site.pages.common import benchmark_page, kind, rel
from collector.site.pages.configs import configurations
from collector.site.pages.observations import advice, observations

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
        row["reasons"] = reasons.get((kind(c), c["benchmark"], c.get("accelerators")), [])
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
    """Per evidence kind, benchmark and accelerator count, the measured reasons a
    configuration fits: one per measure, from the same kind of evidence as the configuration
    (time-based before throughput-based), so sources are never mixed in one answer."""
    out: dict[tuple, dict[str, str]] = {}
    labels = {
        "scaling": "scaling efficiency {v}%",
        "precision": "mixed precision {v}x",
        "interconnect": "PCIe vs NVLink {v}%",
    }
    counts = {c.get("accelerators") for c in data.rows("scores")}
    for measure, label in labels.items():
        found = observations(data, measure)
        found.sort(key=lambda o: o.row.get("kind") not in ("strong", "time", None))
        for o in found:
            text = label.format(v=f"{o.value:.3g}")
            if o.low is not None and o.high is not None:
                text += f" ({o.low:.3g}–{o.high:.3g})"
            ns = [o.accelerators] if measure == "scaling" else sorted(counts, key=str)
            for n in ns:
                out.setdefault((o.kind, o.benchmark, n), {}).setdefault(measure, text)
    return {key: list(found.values()) for key, found in out.items()}
