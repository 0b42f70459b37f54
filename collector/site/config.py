"""The site's settings file (site.yml): benchmark titles and families, Home's limits; each
benchmark's allowed run-to-run variance comes from the benchmark definitions the queries rank
by (collector/queries/definitions.yml), so that pages and tables state one rule."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from collector.queries import parameters


@dataclass(frozen=True)
class Benchmark:
    """A benchmark's title, workload family and allowed run-to-run variance."""

    name: str
    title: str
    family: str
    variance_pct: float


@dataclass(frozen=True)
class Settings:
    """Everything site.yml states."""

    benchmarks: dict[str, Benchmark]
    families: dict[str, str]  # key -> title, in Home's order
    guide_deadline_hours: float
    home_findings: int
    home_model_comparisons: int
    internal_tables: frozenset[str] = frozenset()

    def benchmark(self, name: str) -> Benchmark:
        """A benchmark's settings; an unknown one gets its own name and family 'other'."""
        return self.benchmarks.get(name, Benchmark(name, name, "other", 5.0))

    def family_title(self, key: str) -> str:
        """A family's title ('LLM fine-tuning'); an unknown key as it is."""
        return self.families.get(key, key)


@cache
def settings() -> Settings:
    """Read site.yml from the package."""
    doc: dict[str, Any] = yaml.safe_load(
        resources.files("collector.site").joinpath("site.yml").read_text()
    )
    variance = {d["benchmark"]: d["variance_pct"] for d in parameters.definitions().rows}
    benchmarks = {
        name: Benchmark(
            name, b["title"], b["family"], float(variance.get(name, b.get("variance_pct", 5.0)))
        )
        for name, b in doc["benchmarks"].items()
    }
    return Settings(
        benchmarks=benchmarks,
        families=dict(doc["families"]),
        guide_deadline_hours=float(doc["guide_deadline_hours"]),
        home_findings=int(doc["home_findings"]),
        home_model_comparisons=int(doc["home_model_comparisons"]),
        internal_tables=frozenset(doc.get("internal_tables", ())),
    )
