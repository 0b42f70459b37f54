"""The round a log's own content points to (format, benchmark, date), by rounds.yml."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cache

from collector.ingest import data
from collector.ingest.values import wall_clock


@dataclass(frozen=True)
class Round:
    """One official round: its publication date, log formats and benchmarks."""

    name: str
    published_unix_s: float
    formats: frozenset[str]
    benchmarks: frozenset[str]


@cache
def rounds() -> tuple[Round, ...]:
    """The official rounds, oldest first."""
    return tuple(
        Round(
            r["round"],
            dt.datetime.combine(r["published"], dt.time(), dt.UTC).timestamp(),
            frozenset(r["formats"]),
            frozenset(r["benchmarks"]),
        )
        for r in data("rounds.yml")["rounds"]
    )


def candidates(fmt: str | None, benchmark: str | None) -> tuple[Round, ...]:
    """The rounds whose logs have this format and could run this benchmark."""
    return tuple(
        r
        for r in rounds()
        if (fmt is None or fmt in r.formats)
        and (benchmark is None or benchmark == "unknown" or benchmark in r.benchmarks)
    )


def signature(fmt: str | None, benchmark: str | None, run_start_s: float | None) -> str | None:
    """The round a log's format, benchmark and run_start date point to; None if they do not
    single one out."""
    found = candidates(fmt, benchmark)
    if not found:
        return None
    if wall_clock(run_start_s):
        for r in found:
            if run_start_s <= r.published_unix_s:
                return r.name
        return None
    return found[0].name if len(found) == 1 else None


def agrees(round_: str, fmt: str | None, benchmark: str | None, run_start_s: float | None) -> bool:
    """Whether a stated round fits the log: its format and benchmark are the round's, and it
    ran before the round was published (within the late_days allowance)."""
    found = {r.name: r for r in candidates(fmt, benchmark)}
    known = {r.name for r in rounds()}
    if round_ not in known:
        return True  # a local suite or an unofficial round: nothing to compare with
    if round_ not in found:
        return False
    late = data("rounds.yml")["late_days"] * 86400.0
    return not wall_clock(run_start_s) or run_start_s <= found[round_].published_unix_s + late


def target(round_: str, benchmark: str) -> float | None:
    """The quality target the round's rules set for a benchmark, where rounds.yml has it."""
    return (data("rounds.yml").get("targets") or {}).get(round_, {}).get(benchmark)
