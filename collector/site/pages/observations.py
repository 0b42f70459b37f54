"""Measured comparisons read from the derived tables, as (value, interval) observations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from collector.site.data import SiteData
from collector.site.pages.common import (
    Row,
    kind,
)


@dataclass(frozen=True)
class Measure:
    """Where a measure lives: its table, its value column and the interval's columns; with
    ``percent_over_one`` a ratio is shown as percent above one ((ratio - 1) x 100); ``keeps``
    picks the table's rows that the measure reads (all where None)."""

    table: str
    value: str
    low: str
    high: str
    percent_over_one: bool = False
    keeps: Callable[[Row], bool] | None = None

    def rows(self, data: SiteData) -> list[Row]:
        """The rows of the measure's table that it reads."""
        return [r for r in data.rows(self.table) if self.keeps is None or self.keeps(r)]

    def read(self, row: Row, column: str) -> float | None:
        """The column of `row` in the measure's unit, or None where it is not a number."""
        v = row.get(column)
        if not isinstance(v, int | float):
            return None
        return (float(v) - 1.0) * 100.0 if self.percent_over_one else float(v)


MEASURES = {
    "scaling": Measure(
        "scaling", "efficiency_pct", "efficiency_ci_low_pct", "efficiency_ci_high_pct"
    ),
    "precision": Measure("precision_gain", "gain", "gain_ci_low", "gain_ci_high"),
    # interconnect_delta's gain is time without NVLink / time with it: shown as percent slower
    "interconnect": Measure(
        "interconnect_delta", "gain", "gain_ci_low", "gain_ci_high", percent_over_one=True
    ),
    # one system against another (baselines.yml names them): baseline time / time
    "systems": Measure(
        "speedups",
        "speedup",
        "speedup_ci_low",
        "speedup_ci_high",
        keeps=lambda r: r.get("baseline_kind") == "system",
    ),
}
# How a row was measured, by its kind: strong scaling and time gains from time to train, weak
# scaling and throughput gains from throughput.
MEASURED_BY = {
    "strong": "time to train",
    "weak": "throughput",
    "time": "time to train",
    "throughput": "throughput",
}


def against(row: Row) -> str | None:
    """'vs N' where a scaling row's baseline is not one accelerator, else None."""
    base = row.get("baseline_accelerators")
    return f"vs {base}" if base not in (None, 1) else None


@dataclass(frozen=True)
class Observation:
    """One measured value with its interval, the benchmark and where it came from."""

    measure: str
    benchmark: str
    value: float
    low: float | None
    high: float | None
    accelerators: int | None
    kind: str
    row: Row

    @property
    def unit(self) -> str:
        """How its value is stated: 'x' for a mixed-precision gain (a ratio), '%' else."""
        return "x" if self.measure == "precision" else "%"

    def reading(self) -> tuple[float, float | None, float | None, str]:
        """(size, low, high, way) as the pages state it: an interconnect observation the way it
        went, its size positive and the way 'slower' or 'faster' without NVLink; any other
        measure as it is, with no way."""
        if self.measure != "interconnect":
            return self.value, self.low, self.high, ""
        sign, way = (1, "slower") if self.value >= 0 else (-1, "faster")
        low = high = None
        if self.low is not None and self.high is not None:
            low, high = sorted((sign * self.low, sign * self.high))
        return sign * self.value, low, high, way


def is_point(row: Row) -> bool:
    """Whether a row states a value, not a bound or one end of a range (a study's "over 80%"
    or "1-5%": the tables keep them, with their qualifiers, but no finding reads them)."""
    return not any(
        tag in (row.get("qualifiers") or "") for tag in ("bound", "range min", "range max")
    )


def observations(data: SiteData, measure: str) -> list[Observation]:
    """Every row of the measure's table that states a value, as observations."""
    m = MEASURES[measure]
    out = []
    for row in m.rows(data):
        value = m.read(row, m.value)
        if value is None or not row.get("benchmark") or not is_point(row):
            continue
        out.append(
            Observation(
                measure=measure,
                benchmark=row["benchmark"],
                value=value,
                low=m.read(row, m.low),
                high=m.read(row, m.high),
                accelerators=row.get("accelerators") or row.get("accelerators_to"),
                kind=kind(row),
                row=row,
            )
        )
    return out


def median(found: list[Observation]) -> Observation:
    """The (lower) median observation by value."""
    return sorted(found, key=lambda o: o.value)[(len(found) - 1) // 2]


def baseline_count(o: Observation) -> int:
    """The accelerator count a scaling observation is measured against."""
    return int(o.row.get("baseline_accelerators") or 1)


def at_largest_count(found: list[Observation]) -> list[Observation]:
    """The scaling observations at the largest accelerator count, against the fewest
    accelerators measured there."""
    top = max(o.accelerators or 0 for o in found)
    at_top = [o for o in found if (o.accelerators or 0) == top]
    smallest = min(baseline_count(o) for o in at_top)
    return [o for o in at_top if baseline_count(o) == smallest]


def confounded(o: Observation) -> bool:
    """Whether a measured comparison differs in more than what it compares (a published row's
    confounders column states what the study compared instead)."""
    return bool(o.row.get("confounders")) and o.row.get("source") != "published"
