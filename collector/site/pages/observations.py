"""Measured comparisons read from the derived tables, as (value, interval) observations.

The derived tables name an estimate and its 95% interval by column; this module finds them by
name (`efficiency_pct` with `efficiency_pct_low`/`_high`, or `_lo`/`_hi`, `ci_low`/`ci_high`).
"""

from __future__ import annotations

from dataclasses import dataclass

from collector.site.config import settings
from collector.site.data import SiteData
from collector.site.pages.common import Row, kind, on_nodes

# measure -> (table, candidate value columns)
MEASURES = {
    "scaling": ("scaling", ("efficiency_pct",)),
    "precision": ("precision_gain", ("speedup", "gain", "ratio", "precision_gain")),
    "interconnect": ("interconnect_delta", ("delta_pct", "slowdown_pct", "interconnect_delta_pct")),
}
_LOW = ("{}_low", "{}_lo", "{}_ci_low", "ci_low", "low", "lo")
_HIGH = ("{}_high", "{}_hi", "{}_ci_high", "ci_high", "high", "hi")


@dataclass(frozen=True)
class Observation:
    """One measured value with its interval, the benchmark and where it came from."""

    measure: str
    benchmark: str
    domain: str
    value: float
    low: float | None
    high: float | None
    accelerators: int | None
    kind: str
    row: Row


def _pick(row: Row, names: tuple[str, ...], base: str) -> float | None:
    stem = base.removesuffix("_pct")
    suffix = "_pct" if base.endswith("_pct") else ""
    side = "low" if "{}_low" in names else "high"
    for n in (f"{stem}_ci_{side}{suffix}", *names):
        v = row.get(n.format(base))
        if isinstance(v, int | float):
            return float(v)
    return None


def observations(data: SiteData, measure: str) -> list[Observation]:
    """Every row of the measure's table that has a value, as observations."""
    table, candidates = MEASURES[measure]
    out = []
    for row in data.rows(table):
        base = next((c for c in candidates if isinstance(row.get(c), int | float)), None)
        if base is None or not row.get("benchmark"):
            continue
        out.append(
            Observation(
                measure=measure,
                benchmark=row["benchmark"],
                domain=settings().benchmark(row["benchmark"]).domain,
                value=float(row[base]),
                low=_pick(row, _LOW, base),
                high=_pick(row, _HIGH, base),
                accelerators=row.get("accelerators") or row.get("accelerators_to"),
                kind=kind(row),
                row=row,
            )
        )
    return out


def advice(data: SiteData) -> dict[str, tuple[str, ...]]:
    """Advice per domain: for each measure, the first rule in site.yml that the data meets.

    Scaling uses the largest accelerator count at the fewest nodes measured; the others use
    the median observation.
    """
    out: dict[str, list[str]] = {}
    for measure, rules in settings().advice.items():
        by_domain: dict[str, list[Observation]] = {}
        for o in observations(data, measure):
            by_domain.setdefault(o.domain, []).append(o)
        for domain, obs in sorted(by_domain.items()):
            if measure == "scaling":
                fewest = min((o.row.get("nodes") or 1) for o in obs)
                obs = [o for o in obs if (o.row.get("nodes") or 1) == fewest]
                top = max(o.accelerators or 0 for o in obs)
                obs = [o for o in obs if (o.accelerators or 0) == top]
            chosen = sorted(obs, key=lambda o: o.value)[len(obs) // 2]
            rule = next((r for r in rules if r.holds(chosen.value)), None)
            if rule is None:
                continue
            text = rule.text.format(
                domain=domain.capitalize(),
                value=_fmt(chosen.value),
                accelerators=chosen.accelerators or "?",
                on_nodes=on_nodes(chosen.row.get("nodes")),
            )
            if chosen.low is not None and chosen.high is not None:
                text += f" 95% interval {_fmt(chosen.low)}–{_fmt(chosen.high)}."
            out.setdefault(domain, []).append(f"{text} ({chosen.kind}, {chosen.benchmark})")
    return {d: tuple(v) for d, v in out.items()}


def _fmt(value: float | None) -> str:
    return "?" if value is None else f"{value:.3g}"
