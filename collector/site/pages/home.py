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
from collector.site.pages.observations import Observation, observations
from collector.site.pages.rounds import round_gains


def page(data: SiteData) -> HomePage:
    """index.md: per benchmark and kind of evidence, the fastest configuration and the scaling
    at the largest count; then what rounds gained. Kinds of evidence are never ranked together:
    a proxy-scale local run is not faster than an official result, it is a different test."""
    path = "index.md"
    findings: list[Finding] = []
    configs = configurations(data)
    for name in benchmark_names(data):
        for evidence in sorted({c["kind"] for c in configs if c["benchmark"] == name}, key=_order):
            mine = [c for c in configs if c["benchmark"] == name and c["kind"] == evidence]
            for single_node in (False, True):
                pool = [c for c in mine if not single_node or c.get("nodes") == 1]
                if not pool:
                    continue
                best = min(pool, key=lambda c: c["minutes"])
                if single_node and best is min(mine, key=lambda c: c["minutes"]):
                    continue
                what = "on one server" if single_node else "fastest"
                findings.append(
                    Finding(
                        Markup(
                            f"**{md(settings().benchmark(name).title)}**, {what} "
                            f"({md(evidence)}): **{num(best['minutes'])} minutes** on "
                            f"{md(best['hardware'])} ({md(best['label'])}); runs ranged "
                            f"{interval(best['fastest_minutes'], best['slowest_minutes'])} "
                            "minutes."
                        ),
                        rel(path, benchmark_page(name)),
                        best["kind"],
                    )
                )
    scaling: dict[tuple[str, str, str], list] = {}
    for o in observations(data, "scaling"):
        scaling.setdefault((o.benchmark, o.kind, o.row.get("kind") or ""), []).append(o)
    for (bench, _evidence, how), found in sorted(
        scaling.items(), key=lambda i: (_order(i[0][1]), i[0])
    ):
        top = max(o.accelerators or 0 for o in found)
        at_top = [o for o in found if (o.accelerators or 0) == top]
        smallest = min(_baseline(o) for o in at_top)  # against the fewest accelerators
        at_top = sorted((o for o in at_top if _baseline(o) == smallest), key=lambda o: o.value)
        o = at_top[(len(at_top) - 1) // 2]  # the (lower) median of what was measured or stated
        more = f" (median of {len(at_top)})" if len(at_top) > 1 else ""
        findings.append(
            Finding(
                Markup(
                    f"**{md(settings().benchmark(bench).title)}** scales at "
                    f"**{num(o.value)}%** efficiency{more} on {o.accelerators} accelerators"
                    f"{_HOW.get(how, '')}, against {_baseline(o)} accelerator(s) "
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


def _baseline(o: Observation) -> int:
    """The accelerator count a scaling observation is measured against."""
    return int(o.row.get("baseline_accelerators") or 1)


_HOW = {
    "strong": " in time to train (strong scaling)",
    "weak": " in throughput, the batch growing with the accelerators (weak scaling)",
}


def _order(kind_label: str) -> tuple[int, str]:
    """Official results first, then local runs, then published studies."""
    for rank, prefix in enumerate(("official", "local", "published")):
        if kind_label.startswith(prefix):
            return rank, kind_label
    return 3, kind_label
