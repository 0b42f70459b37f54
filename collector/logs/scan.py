"""Scan the bytes of one log into events, whatever its format, recording every problem.

The scan is columnar: one regular-expression pass over the whole file, then list and
numpy operations over the matches, so that large corpora ingest at hundreds of MB/s.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import accumulate, repeat

import numpy as np

from collector.logs.formats import FORMATS, LogFormat, detect

MAX_EVENT_BYTES = 1 << 20  # an event longer than this is skipped, with a warning
BACKWARDS_TOLERANCE_S = 1.0  # ranks log concurrently; only larger steps back are reported


@dataclass(frozen=True)
class Issue:
    """One problem found in one input file."""

    severity: str  # "error" | "warning"
    code: str
    message: str
    line: int | None = None


@dataclass
class Events:
    """The events of one log, in file order, as parallel columns."""

    fmt: LogFormat | None
    time_s: list[float] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)  # the value text as logged
    metadata: list[str | None] = field(default_factory=list)  # JSON text (MLLOG)
    lines: list[int] = field(default_factory=list)
    benchmark: str | None = None  # v0.5 names the benchmark on every line
    issues: list[Issue] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.keys)

    def warn(self, code: str, message: str, line: int | None = None) -> None:
        self.issues.append(Issue("warning", code, message, line))

    def error(self, code: str, message: str, line: int | None = None) -> None:
        self.issues.append(Issue("error", code, message, line))


def scan(data: bytes) -> Events:
    """Parse the raw bytes of one log into events; problems land in `events.issues`."""
    events = Events(fmt=None)
    if not data or data.isspace():
        events.error("empty", "empty file")
        return events
    encoding = _check_encoding(data, events)
    fmt = detect(data)
    events.fmt = fmt
    if fmt is None:
        if b"\x00" in data[:65536]:
            events.error("binary", "binary file: no MLPerf log lines")
        else:
            events.error("no-events", "no MLPerf log lines (:::MLPv0.5.0, :::MLL, :::MLLOG)")
        return events
    _collect(data, fmt, encoding, events)
    return events


def _check_encoding(data: bytes, events: Events) -> str:
    if data.isascii():
        return "ascii"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        events.warn("not-utf8", f"bytes that are not UTF-8 (first at byte {exc.start})", line)
    return "utf-8"


def _collect(data: bytes, fmt: LogFormat, encoding: str, events: Events) -> None:
    width = len(fmt.fields) + 1
    parts = fmt.pattern.split(data)  # [text, group1, ..., groupN, text, group1, ...]
    markers = data.count(fmt.marker)
    if len(parts) // width != markers:  # a marker line the grammar rejects, or another format
        groups, lines = _collect_loose(data, fmt, events)
    else:
        counts = map(bytes.count, parts[0 : len(parts) - 1 : width], repeat(b"\n"))
        lines = list(accumulate(counts, initial=1))[1:]
        groups = list(zip(*(parts[i::width] for i in range(1, width)), strict=True))
        _drop_long(groups, lines, fmt, events)
    if not groups:
        events.error("no-events", f"{fmt.marker.decode()} lines present but none parses")
        return
    if fmt.fields == ("json",):
        _json_events(groups, lines, fmt, events)
    else:
        _text_events(groups, lines, fmt, encoding, events)
    _check_clock(events)
    if data.count(b":::ML") == markers:  # every marker in the file is ours
        return
    others = [
        f.marker.decode()
        for f in FORMATS
        if f is not fmt and not fmt.marker.startswith(f.marker) and f.marker + b" " in data
    ]
    if others:
        events.warn("mixed-formats", f"lines of other formats ignored: {others}")


def _collect_loose(
    data: bytes, fmt: LogFormat, events: Events
) -> tuple[list[tuple[bytes, ...]], list[int]]:
    """The slow path: every marker, with the lines the grammar rejects reported."""
    matches = list(fmt.loose.finditer(data))
    newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    lines = (np.searchsorted(newlines, [m.start() for m in matches]) + 1).tolist()
    groups = [m.groups() for m in matches]
    required = fmt.fields.index("json" if fmt.fields == ("json",) else "key")
    bad = [i for i, g in enumerate(groups) if g[required] is None]
    for i in bad[:5]:
        events.warn("bad-line", f"unparsable {fmt.marker.decode()} line", lines[i])
    if len(bad) > 5:
        events.warn("bad-line", f"{len(bad) - 5} more unparsable {fmt.marker.decode()} lines")
    if bad:
        drop = set(bad)
        groups = [g for i, g in enumerate(groups) if i not in drop]
        lines = [n for i, n in enumerate(lines) if i not in drop]
    _drop_long(groups, lines, fmt, events)
    return groups, lines


def _drop_long(
    groups: list[tuple[bytes, ...]], lines: list[int], fmt: LogFormat, events: Events
) -> None:
    """Skip, in place, events whose value (the only unbounded part) is over the limit."""
    tails = [g[-1] for g in groups]
    if max(map(len, filter(None, tails)), default=0) <= MAX_EVENT_BYTES:
        return
    long = [i for i, tail in enumerate(tails) if tail and len(tail) > MAX_EVENT_BYTES]
    for i in long:
        events.warn("line-too-long", f"event of {len(tails[i])} bytes skipped", lines[i])
    for i in reversed(long):
        del groups[i], lines[i]


def _text_events(
    groups: list[tuple[bytes, ...]], lines: list[int], fmt: LogFormat, encoding: str, events: Events
) -> None:
    columns = dict(zip(fmt.fields, zip(*groups, strict=True), strict=True))
    ts, keys = columns["ts"], columns["key"]
    values = list(map(bytes.strip, map(_or_empty, columns["value"])))
    if len(set(zip(ts, keys, values, strict=True))) != len(
        ts
    ):  # an event printed twice (logger prefixes)
        seen: set[tuple[bytes, bytes, bytes]] = set()
        keep = []
        for t in zip(ts, keys, values, strict=True):
            keep.append(t not in seen)
            seen.add(t)
        ts, keys, values, lines = (
            [x for x, k in zip(col, keep, strict=True) if k] for col in (ts, keys, values, lines)
        )
        if "bench" in columns:
            columns["bench"] = [b for b, k in zip(columns["bench"], keep, strict=True) if k]
    unit = fmt.time_unit_s
    events.time_s = [float(t) * unit for t in ts] if unit != 1.0 else list(map(float, ts))
    if encoding == "ascii":  # plain bytes.decode in C, no error handler needed
        events.keys, events.values = list(map(bytes.decode, keys)), list(map(bytes.decode, values))
    else:
        events.keys = [k.decode(encoding, "replace") for k in keys]
        events.values = [v.decode(encoding, "replace") for v in values]
    events.metadata = [None] * len(events.keys)
    events.lines = list(lines)
    if "bench" in columns:
        benches = set(columns["bench"])
        if len(benches) == 1:
            events.benchmark = benches.pop().decode(encoding, "replace")
        else:
            names = sorted(b.decode(encoding, "replace") for b in benches)
            events.warn("mixed-benchmarks", f"lines name several benchmarks: {names}")


def _or_empty(value: bytes | None) -> bytes:
    return value or b""


# mllog writes its fields in this order; such lines are split without a JSON round trip.
_MLLOG_FIELDS = re.compile(
    rb'\{"namespace": "[^"\\]*", "time_ms": ([0-9]+(?:\.[0-9]*)?), "event_type": "[A-Z_]+", '
    rb'"key": "([^"\\]+)", "value": (.*), "metadata": (\{.*\})\}\s*$'
)


def _json_events(
    groups: list[tuple[bytes, ...]], lines: list[int], fmt: LogFormat, events: Events
) -> None:
    seen: set[tuple[float, str, str]] = set()
    for (raw,), line in zip(groups, lines, strict=True):
        fast = _MLLOG_FIELDS.match(raw)
        if fast is not None:
            ts, key_b, value_b, meta_b = fast.groups()
            time_s = float(ts) * fmt.time_unit_s
            key, value = key_b.decode("utf-8", "replace"), value_b.decode("utf-8", "replace")
            meta: str | None = meta_b.decode("utf-8", "replace")
        else:
            try:
                obj = json.loads(raw)
                time_s = float(obj["time_ms"]) * fmt.time_unit_s
                key = str(obj["key"])
            except (ValueError, TypeError, KeyError):
                events.warn("bad-line", f"{fmt.marker.decode()} line is not an event object", line)
                continue
            value = json.dumps(obj.get("value"))
            meta = json.dumps(obj["metadata"]) if obj.get("metadata") is not None else None
        if (time_s, key, value) in seen:
            continue
        seen.add((time_s, key, value))
        events.time_s.append(time_s)
        events.keys.append(key)
        events.values.append(value)
        events.metadata.append(meta)
        events.lines.append(line)


def _check_clock(events: Events) -> None:
    """One warning at the first timestamp that steps back more than the tolerance."""
    if len(events.time_s) < 2:
        return
    times = np.asarray(events.time_s)
    running = np.maximum.accumulate(times)
    back = np.flatnonzero(times < running - BACKWARDS_TOLERANCE_S)
    if back.size:
        i = int(back[0])
        events.warn(
            "clock-backwards",
            f"timestamp {times[i]:.3f} is {running[i] - times[i]:.3f} s before an "
            f"earlier event (key {events.keys[i]})",
            events.lines[i],
        )
