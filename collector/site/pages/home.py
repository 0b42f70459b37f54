"""Home: headline findings, each computed from the tables with its number and interval."""

from __future__ import annotations

from markupsafe import Markup

from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.escape import markdown_text as md
from collector.site.model import Finding, HomePage
from collector.site.pages.benchmarks import benchmark_names
from collector.site.pages.common import (
    Row,
    benchmark_page,
    counted,
    evidence_order,
    host_system,
    interval,
    num,
    on_accelerators,
    rel,
)
from collector.site.pages.configs import configurations
from collector.site.pages.observations import (
    MEASURED_BY,
    Observation,
    at_largest_count,
    baseline_count,
    median,
    observations,
)
from collector.site.pages.rounds import round_gains


def page(data: SiteData) -> HomePage:
    """index.md: per benchmark and kind of evidence, the fastest configuration, the scaling
    at the largest count, the cost of training without NVLink, the gain of mixed precision,
    accelerator models against a baseline system and what rounds gained, each under its
    topic. Kinds of evidence are never ranked together: a proxy-scale local run is not faster
    than an official result, it is a different test."""
    path = "index.md"
    configs = configurations(data)
    topics = (
        ("Fastest time to train", _fastest_findings(data, configs, path)),
        ("Scaling with more accelerators", _scaling_findings(data)),
        ("Without NVLink", _interconnect_findings(data)),
        ("Mixed precision against FP32", _precision_findings(data)),
        ("Accelerator models", _system_findings(data)),
        ("Across MLPerf rounds", _round_findings(data)),
    )
    counts = {
        "runs": len(data.rows("runs")),
        "systems": len(data.rows("systems")),
        "configurations": len(configs),
    }
    return HomePage(
        path,
        "What the data says",
        data.snapshot,
        topics=tuple((title, tuple(found)) for title, found in topics if found),
        counts=counts,
    )


def _fastest_findings(data: SiteData, configs: list[Row], path: str) -> list[Finding]:
    """Per benchmark and kind of evidence: the fastest configuration, and the fastest on one
    server where that is another."""
    findings: list[Finding] = []
    for name in benchmark_names(data):
        kinds = {c["kind"] for c in configs if c["benchmark"] == name}
        for evidence in sorted(kinds, key=evidence_order):
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
                            f"{md(best['hardware'])} ({md(best['config'])}); runs ranged "
                            f"{interval(best['fastest_minutes'], best['slowest_minutes'])} "
                            "minutes."
                        ),
                        rel(path, benchmark_page(name)),
                        best["kind"],
                    )
                )
    return findings


def _round_findings(data: SiteData) -> list[Finding]:
    """What a newer round's configuration gained over an older one's of the same class."""
    return [
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
        for g in round_gains(data)
    ]


def _scaling_findings(data: SiteData) -> list[Finding]:
    """Per benchmark, kind of evidence and kind of scaling: the efficiency at the largest
    accelerator count, against the fewest accelerators measured."""
    out = []
    scaling: dict[tuple[str, str, str], list] = {}
    for o in observations(data, "scaling"):
        scaling.setdefault((o.benchmark, o.kind, o.row.get("kind") or ""), []).append(o)
    for (bench, _evidence, how), found in sorted(
        scaling.items(), key=lambda i: (evidence_order(i[0][1]), i[0])
    ):
        at_top = at_largest_count(found)
        o = median(at_top)  # of what was measured or stated
        above = (
            " Above linear: the runs compared differ in more than the accelerator count "
            "(epochs, batch size or setup)."
            if o.value >= settings().above_linear_pct
            else ""
        )
        out.append(
            Finding(
                Markup(
                    f"**{md(settings().benchmark(bench).title)}** scales at "
                    f"**{num(o.value)}%** efficiency{_in(o)}{on_accelerators(o.accelerators)}"
                    f"{_HOW.get(how, '')}, against {counted(baseline_count(o), 'accelerator')}"
                    f"{_interval(o.low, o.high, '%')}." + above + _others(at_top, o)
                ),
                "compare.md#scaling-efficiency",
                o.kind,
            )
        )
    return out


def _grouped(found: list[Observation]) -> list[list[Observation]]:
    """Observations by benchmark and kind of evidence, official first."""
    groups: dict[tuple[str, str], list[Observation]] = {}
    for o in found:
        groups.setdefault((o.benchmark, o.kind), []).append(o)
    return [groups[k] for k in sorted(groups, key=lambda k: (evidence_order(k[1]), k))]


def _interconnect_findings(data: SiteData) -> list[Finding]:
    """Per benchmark and kind of evidence: how much slower it trains without NVLink at the
    largest accelerator count measured."""
    out = []
    for found in _grouped(observations(data, "interconnect")):
        top = max(o.accelerators or 0 for o in found)
        at_top = [o for o in found if (o.accelerators or 0) == top]
        o = median(at_top)
        size, low, high, way = o.reading()
        if o.row.get("within_noise"):
            way += ", within noise,"
        caveat = o.row.get("confounders")  # a published row states there what it compared
        lead = "Compared" if o.row.get("source") == "published" else "Not like for like"
        out.append(
            Finding(
                Markup(
                    f"**{md(settings().benchmark(o.benchmark).title)}** trains "
                    f"**{num(size)}%** {way} without NVLink (over PCIe, or with "
                    f"peer-to-peer off){_in(o)}{on_accelerators(o.accelerators)}"
                    f"{_interval(low, high, '%')}."
                    + (f" {lead}: {md(caveat)}." if caveat else "")
                    + _others(at_top, o)
                ),
                "compare.md#interconnect",
                o.kind,
            )
        )
    return out


def _interval(low: float | None, high: float | None, unit: str) -> str:
    """' (95% interval 1–2x)', or nothing where the row has none (a study's stated number)."""
    if low is None or high is None:
        return ""
    return f" (95% interval {interval(low, high, unit)})"


def _in(o: Observation) -> str:
    """' in <precision>' where the observation's row names its precision."""
    precision = o.row.get("precision")
    return f" in {md(precision)}" if precision else ""


def _others(found: list[Observation], chosen: Observation) -> str:
    """Where several configurations were measured at the count a finding reports, what the
    others gave, so that the one stated never stands for them unnamed."""
    rest = sorted(
        (o for o in found if o is not chosen),
        key=lambda o: (str(o.row.get("precision") or ""), o.value),
    )
    unit = chosen.unit
    by_precision = len({o.row.get("precision") for o in found}) > 1
    by_system = not by_precision and len({_system(o) for o in found}) == len(found)
    said = []
    for o in rest:
        size, _, _, way = o.reading()
        # named by its precision, else by its system where the systems tell them apart
        name = o.row.get("precision") if by_precision else _system(o) if by_system else None
        label = f"{md(name)} " if name else ""
        # as the finding itself says it: a change whose interval holds none is no change
        noise = " (within noise)" if o.row.get("within_noise") and (way or unit == "x") else ""
        said.append(f"{label}{num(size)}{unit} {way}".rstrip() + noise)
    if len(rest) == 1:
        return f" The other configuration at that count: {said[0]}."
    if rest:
        return (
            f" Median of {len(found)} configurations at that count; the others: {', '.join(said)}."
        )
    return ""


def _system(o: Observation) -> str | None:
    """The system an observation was measured on: a local one with its host (two hosts can
    name their systems alike)."""
    if o.row.get("source") == "local":
        return host_system(o.row.get("system_id"))
    return o.row.get("system")


def _precision_findings(data: SiteData) -> list[Finding]:
    """Per benchmark and kind of evidence: the mixed-precision gain over FP32 at the fewest
    accelerators measured, from time to train where it was measured so."""
    out = []
    for found in _grouped(observations(data, "precision")):
        timed = [o for o in found if o.row.get("kind") != "throughput"] or found
        fewest = min(o.accelerators or 0 for o in timed)
        at_fewest = [o for o in timed if (o.accelerators or 0) == fewest]
        o = median(at_fewest)
        how = MEASURED_BY.get(o.row.get("kind") or "")
        system = _system(o) if len(at_fewest) > 1 else None
        out.append(
            Finding(
                Markup(
                    f"**{md(settings().benchmark(o.benchmark).title)}**: mixed precision "
                    f"({md(o.row.get('precision') or '?')}) trains **{num(o.value)}x** as fast "
                    f"as FP32{', within noise,' if o.row.get('within_noise') else ''}"
                    f"{on_accelerators(o.accelerators)}"
                    f"{f' in {how}' if how else ''}"
                    f"{_interval(o.low, o.high, 'x')}{f' on {md(system)}' if system else ''}."
                    + _others(at_fewest, o)
                ),
                "compare.md#mixed-precision",
                o.kind,
            )
        )
    return out


def _system_findings(data: SiteData) -> list[Finding]:
    """Per system measured against a named baseline system of another accelerator model, at
    the baseline's accelerator count: its speedup over the baseline across benchmarks (the
    median, the two extremes and how many lie outside the noise)."""
    models = {r["system_id"]: r.get("accelerator") for r in data.rows("configurations")}
    groups: dict[tuple[str, str, str], list[Observation]] = {}
    for o in observations(data, "systems"):
        r = o.row
        model = models.get(r.get("baseline_system_id"))
        if r.get("accelerators") != r.get("baseline_accelerators") or model in (
            None,
            r.get("accelerator"),
        ):
            continue  # more accelerators, or the same model: not a comparison of models
        groups.setdefault((o.kind, r["system_id"], r["baseline"]), []).append(o)
    out = []
    for (evidence, _system, _baseline), found in sorted(
        groups.items(), key=lambda i: (evidence_order(i[0][0]), i[0])
    ):
        o = median(found)
        least, most = (f(found, key=lambda x: x.value) for f in (min, max))
        clear = sum(1 for x in found if not x.row.get("within_noise"))
        base = o.row["baseline_system_id"]
        out.append(
            Finding(
                Markup(
                    f"**{md(o.row['accelerator'])}** against **{md(models[base])}**{_in(o)}"
                    f"{on_accelerators(o.accelerators)}: "
                    f"{md(host_system(o.row['system_id']))} trains "
                    f"**{num(o.value)}x** as fast as {md(host_system(base))}, the median of "
                    f"{len(found)} benchmarks, from {num(least.value)}x "
                    f"({md(settings().benchmark(least.benchmark).title)}) to {num(most.value)}x "
                    f"({md(settings().benchmark(most.benchmark).title)}); {clear} of "
                    f"{len(found)} outside the noise."
                ),
                "compare.md#against-a-baseline-system",
                evidence,
            )
        )
    return out


_HOW = {
    "strong": " in time to train (strong scaling)",
    "weak": " in throughput, the batch growing with the accelerators (weak scaling)",
}
