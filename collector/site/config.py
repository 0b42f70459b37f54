"""The site's settings file (site.yml): benchmark domains, variance rules, deadlines, advice."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml


@dataclass(frozen=True)
class Benchmark:
    """A benchmark's title, domain and allowed run-to-run variance."""

    name: str
    title: str
    domain: str
    variance_pct: float


@dataclass(frozen=True)
class AdviceRule:
    """One rule: when the measured value is below / at least a threshold, give this advice."""

    kind: str
    text: str
    below: float | None = None
    at_least: float | None = None

    def holds(self, value: float) -> bool:
        """Whether a measured value satisfies this rule's condition."""
        if self.below is not None and not value < self.below:
            return False
        return not (self.at_least is not None and not value >= self.at_least)


@dataclass(frozen=True)
class Settings:
    """Everything site.yml states."""

    benchmarks: dict[str, Benchmark]
    domains: tuple[str, ...]
    deadlines_hours: tuple[float, ...]
    advice: dict[str, tuple[AdviceRule, ...]]
    advice_notes: dict[str, str]
    above_linear_pct: float
    internal_tables: frozenset[str] = frozenset()

    def benchmark(self, name: str) -> Benchmark:
        """A benchmark's settings; an unknown one gets its own name and domain 'other'."""
        return self.benchmarks.get(name, Benchmark(name, name, "other", 5.0))


@cache
def settings() -> Settings:
    """Read site.yml from the package."""
    doc: dict[str, Any] = yaml.safe_load(
        resources.files("collector.site").joinpath("site.yml").read_text()
    )
    benchmarks = {
        name: Benchmark(name, b["title"], b["domain"], float(b["variance_pct"]))
        for name, b in doc["benchmarks"].items()
    }
    advice = {
        kind: tuple(AdviceRule(kind=kind, **rule) for rule in rules)
        for kind, rules in doc["advice"].items()
    }
    return Settings(
        benchmarks=benchmarks,
        domains=tuple(doc["domains"]),
        deadlines_hours=tuple(float(h) for h in doc["deadlines_hours"]),
        advice=advice,
        advice_notes=dict(doc["advice_notes"]),
        above_linear_pct=float(doc["above_linear_pct"]),
        internal_tables=frozenset(doc.get("internal_tables", ())),
    )
