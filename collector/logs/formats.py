"""The registry of MLPerf log formats seen in the wild, as data.

Each format is a marker and one regular expression applied to the whole bytes of a log.
The pattern matches every occurrence of the marker, its groups None where the rest of the
line does not parse, so malformed lines are found in the same single pass. The shared
scanner in `collector.logs.scan` does everything else (line numbers, duplicates, issues).
Markers may appear mid-line, after other program output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class LogFormat:
    """One MLPerf log dialect: its marker, its event pattern and the meaning of its groups."""

    name: str
    marker: bytes
    pattern: re.Pattern[bytes]
    fields: tuple[str, ...]  # names of the pattern's groups, in order
    time_unit_s: float
    default_round: str | None


_KEY = rb"([A-Za-z_][^\s:]*)"
_TS = rb"([0-9]+(?:\.[0-9]*)?)"

FORMATS: tuple[LogFormat, ...] = (
    LogFormat(
        name="mlperf-v0.5",
        marker=b":::MLPv0.5.0",
        # :::MLPv0.5.0 <benchmark> <timestamp> (<file>:<line>) <key>[: <value>]
        pattern=re.compile(
            rb":::MLPv0\.5\.0(?=[ \t])(?:[ \t]+(\S+)[ \t]+"
            + _TS
            + rb"[ \t]+\([^)\n]*\)[ \t]+"
            + _KEY
            + rb"(?:[ \t]*:([^\n]*))?)?"
        ),
        fields=("bench", "ts", "key", "value"),
        time_unit_s=1.0,
        default_round="v0.5",
    ),
    LogFormat(
        name="mllog",
        marker=b":::MLLOG",
        # :::MLLOG {"time_ms": ..., "key": ..., "value": ..., "metadata": {...}}
        pattern=re.compile(rb":::MLLOG(?=[ \t])(?:[ \t]+(\{[^\n]*))?"),
        fields=("json",),
        time_unit_s=0.001,
        default_round=None,
    ),
    LogFormat(
        name="mlperf-v0.6",
        marker=b":::MLL",
        # :::MLL <timestamp> <key>: {"value": ..., "metadata": {...}}
        pattern=re.compile(
            rb":::MLL(?=[ \t])(?:[ \t]+" + _TS + rb"[ \t]+" + _KEY + rb"[ \t]*:([^\n]*))?"
        ),
        fields=("ts", "key", "value"),
        time_unit_s=1.0,
        default_round="v0.6",
    ),
)

BY_NAME = {fmt.name: fmt for fmt in FORMATS}


def detect(data: bytes) -> LogFormat | None:
    """The format of a log: that of the first MLPerf marker followed by a blank."""
    pos = data.find(b":::ML")
    while pos >= 0:
        for fmt in FORMATS:
            end = pos + len(fmt.marker)
            if data.startswith(fmt.marker, pos) and data[end : end + 1] in (b" ", b"\t"):
                return fmt
        pos = data.find(b":::ML", pos + 1)
    return None
