"""The registry of MLPerf log formats seen in the wild, as data.

Each format is a marker and the grammar of the rest of an event line, applied to the whole
bytes of a log in one pass. The shared scanner in `collector.ingest.scan` does everything else
(line numbers, duplicates, issues). Markers may appear mid-line, after other program output.
No grammar ever needs to backtrack (each repetition ends where the next part cannot start),
so repetitions are possessive (`*+`, `++`): the same matches, with less work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class LogFormat:
    """One MLPerf log dialect: its marker, the grammar of the rest of an event line, and
    the meaning of the grammar's groups."""

    name: str
    marker: bytes
    body: bytes  # regular expression for what follows the marker on an event line
    fields: tuple[str, ...]  # names of the body's groups, in order
    time_unit_s: float
    time_format: str | None = None  # strptime layout where timestamps are dates
    pattern: re.Pattern[bytes] = field(init=False, repr=False)
    loose: re.Pattern[bytes] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        marker = re.escape(self.marker)
        # strict: every event line; loose: every marker, groups None where the line is broken
        object.__setattr__(self, "pattern", re.compile(marker + self.body))
        object.__setattr__(
            self, "loose", re.compile(marker + rb"(?=[ \t])(?:" + self.body + rb")?")
        )


_KEY = rb"([A-Za-z_][^\s:]*+)"
_TS = rb"([0-9]++(?:\.[0-9]*+)?)"

FORMATS: tuple[LogFormat, ...] = (
    LogFormat(
        name="mlperf-v0.5",
        marker=b":::MLPv0.5.0",
        # :::MLPv0.5.0 <benchmark> <timestamp> (<file>:<line>) <key>[: <value>]
        body=rb"[ \t]++(\S++)[ \t]++"
        + _TS
        + rb"[ \t]++\([^)\n]*+\)[ \t]++"
        + _KEY
        + rb"[ \t]*+:?[ \t]*+([^\n]*+)",
        fields=("bench", "ts", "key", "value"),
        time_unit_s=1.0,
    ),
    LogFormat(
        name="mllog",
        marker=b":::MLLOG",
        # :::MLLOG {"time_ms": ..., "key": ..., "value": ..., "metadata": {...}}
        body=rb"[ \t]++(\{[^\n]*+)",
        fields=("json",),
        time_unit_s=0.001,
    ),
    LogFormat(
        name="mlperf-v0.6",
        marker=b":::MLL",
        # :::MLL <timestamp> <key>: {"value": ..., "metadata": {...}}
        body=rb"[ \t]++" + _TS + rb"[ \t]++" + _KEY + rb"[ \t]*+:([^\n]*+)",
        fields=("ts", "key", "value"),
        time_unit_s=1.0,
    ),
    LogFormat(
        name="mlperf-bench",
        marker=b"MLPerf:",
        # Alibaba v0.6: MLPerf: <benchmark> [06/13/19 00:30:56], <key>[: <value>]
        body=rb"[ \t]++(\S++)[ \t]++\[([0-9/]++[ \t]++[0-9:]++)\],[ \t]*+"
        + _KEY
        + rb"[ \t]*+:?[ \t]*+([^\n]*+)",
        fields=("bench", "ts", "key", "value"),
        time_unit_s=1.0,
        time_format="%m/%d/%y %H:%M:%S",
    ),
)


def detect_tagged(data: bytes) -> LogFormat | None:
    """The format of the first `:::ML` marker followed by a blank, if any."""
    pos = data.find(b":::ML")
    while pos >= 0:
        for fmt in FORMATS:
            end = pos + len(fmt.marker)
            if data.startswith(fmt.marker, pos) and data[end : end + 1] in (b" ", b"\t"):
                return fmt
        pos = data.find(b":::ML", pos + 1)
    return None


def detect_untagged(data: bytes) -> LogFormat | None:
    """A format whose marker (not a `:::ML` one) starts a line, if any."""
    for fmt in FORMATS:
        if not fmt.marker.startswith(b":::ML") and (
            data.startswith(fmt.marker) or b"\n" + fmt.marker in data
        ):
            return fmt
    return None
