"""Home: headline findings, each computed from the tables with its number and interval."""

from __future__ import annotations

from markupsafe import Markup

from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.escape import markdown_text as md
from collector.site.model import Finding, HomePage
from collector.site.pages.benchmarks import benchmark_names
from collector.site.pages.common import benchmark_page, interval, num, rel
from collector.site.pages.configs import configurations
from collector.site.pages.observations import observations
from collector.site.pages.rounds import round_gains


def page(data: SiteData) -> HomePage:
    """index.md with one finding per benchmark, per scaling domain and per round pair."""
    path = "index.md"
    findings: list[Finding] = []
    configs = configurations(data)
    for name in benchmark_names(data):
        mine = [c for c in configs if c["benchmark"] == name]
        for single_node in (False, True):
            pool = [c for c in mine if not single_node or c.get("nodes") == 1]
            if not pool:
                continue
            best = min(pool, key=lambda c: c["minutes"])
            if single_node and best is min(mine, key=lambda c: c["minutes"]):
                continue
            what = "on one server" if single_node else "fastest of all"
            findings.append(
                Finding(
                    Markup(
                        f"**{md(settings().benchmark(name).title)}** {what}: "
                        f"**{num(best['minutes'])} minutes** on {md(best['hardware'])} "
                        f"({md(best['label'])}); runs ranged "
                        f"{interval(best['fastest_minutes'], best['slowest_minutes'])} minutes."
                    ),
                    rel(path, benchmark_page(name)),
                    best["kind"],
                )
            )
    for o in observations(data, "scaling"):
        if o.accelerators and o.accelerators == max(
            (p.accelerators or 0)
            for p in observations(data, "scaling")
            if p.benchmark == o.benchmark
        ):
            findings.append(
                Finding(
                    Markup(
                        f"**{md(settings().benchmark(o.benchmark).title)}** scales at "
                        f"**{num(o.value)}%** efficiency on {o.accelerators} accelerators "
                        f"(95% interval {interval(o.low, o.high, '%')})."
                    ),
                    "compare.md#scaling-efficiency",
                    o.kind,
                )
            )
    for g in round_gains(data):
        findings.append(
            Finding(
                Markup(
                    f"**{md(g['title'])}** on {md(g['class'])}: {md(g['new_label'])} "
                    f"({md(g['new_round'])}) trains **{num(g['ratio'])}x** as fast as "
                    f"{md(g['old_label'])} ({md(g['old_round'])}); run range "
                    f"{interval(g['ratio_low'], g['ratio_high'], 'x')}."
                ),
                "rounds.md",
                g["kind"],
            )
        )
    counts = {
        "runs": len(data.rows("runs")),
        "systems": len(data.rows("systems")),
        "configurations": len(configs),
    }
    return HomePage(
        path, "What the data says", data.snapshot, findings=tuple(findings), counts=counts
    )
