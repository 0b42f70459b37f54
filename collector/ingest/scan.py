"""Scan the bytes of one log into events, whatever its format, recording every problem.

The scan is columnar: one regular-expression pass over each piece of the file, then list,
numpy and Arrow operations over the matches, so that large corpora ingest at hundreds of MB/s.
A log larger than one piece (files.PIECE_BYTES) is read piece by piece, each piece's events
kept as Arrow arrays of their bytes: a log's events take about its size, never several times
it, and the whole file is never in memory at once.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from array import array
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress, repeat

import numpy as np
import pyarrow as pa

from collector.ingest.files import LargeFile
from collector.ingest.formats import FORMATS, LogFormat, detect_tagged, detect_untagged

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
    """The events of one log, in file order, as parallel columns.

    Values and metadata stay UTF-8 bytes (bytes that were not UTF-8 replaced by U+FFFD), as
    most are only stored: in Arrow binary arrays once the scan is done (lists while a piece
    is scanned); `values_at` decodes those picked, the `values` and `metadata` lists all.
    """

    fmt: LogFormat | None
    time_s: list[float] | np.ndarray = field(default_factory=list)  # seconds (float64)
    keys: list[str] = field(default_factory=list)
    raw_values: list[bytes] | pa.ChunkedArray = field(default_factory=list)  # as logged
    raw_metadata: list[bytes | None] | pa.ChunkedArray = field(default_factory=list)  # JSON
    lines: list[int] | array = field(default_factory=list)
    benchmark: str | None = None  # v0.5 names the benchmark on every line
    issues: list[Issue] = field(default_factory=list)
    benchmarks: set[str] = field(default_factory=set)  # every one the lines name

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def values(self) -> list[str]:
        """Every value text, decoded."""
        return self.values_at(range(len(self)))

    @property
    def metadata(self) -> list[str | None]:
        """Every metadata text, decoded; None where an event has none."""
        return self.metas_at(range(len(self)))

    def values_at(self, picked: Sequence[int]) -> list[str]:
        """The value texts of the events picked (indices in file order)."""
        return [b.decode() for b in _take(self.raw_values, picked)]

    def metas_at(self, picked: Sequence[int]) -> list[str | None]:
        """The metadata texts of the events picked; None where an event has none."""
        return [None if b is None else b.decode() for b in _take(self.raw_metadata, picked)]

    def warn(self, code: str, message: str, line: int | None = None) -> None:
        self.issues.append(Issue("warning", code, message, line))

    def error(self, code: str, message: str, line: int | None = None) -> None:
        self.issues.append(Issue("error", code, message, line))


def _take(column: list | pa.ChunkedArray, picked: Sequence[int]) -> list:
    # a column is a list only where the scan found no format, so no event to pick
    return column.take(pa.array(picked, pa.int64())).to_pylist() if len(picked) else []


def scan(data: bytes | LargeFile) -> Events:
    """Parse one log (its bytes, or a large file read in pieces) into events; problems land
    in `events.issues`."""
    events = Events(fmt=None)
    pieces = data.pieces if isinstance(data, LargeFile) else lambda: iter([data])
    fmt = _format(pieces, events)
    if fmt is None:
        return events
    events.fmt = fmt
    line0 = byte0 = 0
    times: list[np.ndarray] = []
    values: list[pa.Array] = []
    metadata: list[pa.Array] = []
    lines = array("q")
    broken = False
    for piece in pieces():
        part = Events(fmt)
        encoding = _check_encoding(piece, part, line0, byte0, warn=not broken)
        broken = broken or encoding == "broken"
        _collect(piece, fmt, encoding, part, line0)
        times.append(np.asarray(part.time_s, np.float64))
        events.keys += part.keys
        lines.extend(part.lines)
        values.append(pa.array(part.raw_values, pa.binary()))
        metadata.append(pa.array(part.raw_metadata, pa.binary()))
        events.benchmarks |= part.benchmarks
        events.issues += [i for i in part.issues if i not in events.issues or i.line]
        line0 += piece.count(b"\n")
        byte0 += len(piece)
    events.time_s = np.concatenate(times) if times else np.empty(0)
    events.raw_values = pa.chunked_array(values, pa.binary())
    events.raw_metadata = pa.chunked_array(metadata, pa.binary())
    events.lines = lines
    if not len(events):
        events.error("no-events", f"{fmt.marker.decode()} lines present but none parses")
        return events
    _name_benchmark(events)
    _check_clock(events)
    return events


def _format(pieces: Callable[[], Iterator[bytes]], events: Events) -> LogFormat | None:
    """The log's format: that of its first `:::ML` marker (reading on only until one is found),
    else of a marker that starts a line; None, with an error, for an empty, binary or other
    file."""
    head, blank = None, True
    for piece in pieces():
        head = piece[:65536] if head is None else head
        blank = blank and (not piece or piece.isspace())
        found = detect_tagged(piece)
        if found is not None:
            return found
    if blank:
        events.error("empty", "empty file")
        return None
    for piece in pieces():
        found = detect_untagged(piece)
        if found is not None:
            return found
    if head is not None and b"\x00" in head:
        events.error("binary", "binary file: no MLPerf log lines")
    else:
        events.error("no-events", "no MLPerf log lines (:::MLPv0.5.0, :::MLL, :::MLLOG)")
    return None


def _name_benchmark(events: Events) -> None:
    """The benchmark the lines name (v0.5), or a warning where they name several."""
    if len(events.benchmarks) == 1:
        events.benchmark = next(iter(events.benchmarks))
    elif events.benchmarks:
        names = sorted(events.benchmarks)
        events.warn("mixed-benchmarks", f"lines name several benchmarks: {names}")


def _check_encoding(data: bytes, events: Events, line0: int, byte0: int, warn: bool) -> str:
    """The encoding: ascii, utf-8, or broken (not UTF-8 throughout, with a warning)."""
    if data.isascii():
        return "ascii"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if warn:
            line = line0 + data.count(b"\n", 0, exc.start) + 1
            where = byte0 + exc.start
            events.warn("not-utf8", f"bytes that are not UTF-8 (first at byte {where})", line)
        return "broken"
    return "utf-8"


def _texts(raw: Sequence[bytes], encoding: str) -> Sequence[bytes]:
    """Value texts as UTF-8: as they are, unless the log is not UTF-8 throughout."""
    if encoding != "broken":
        return raw
    return [text.decode("utf-8", "replace").encode() for text in raw]


def _names(raw: Sequence[bytes]) -> list[str]:
    """Keys decoded (invalid UTF-8 replaced), each distinct key once."""
    names = {key: key.decode("utf-8", "replace") for key in set(raw)}
    return list(map(names.__getitem__, raw))


def _collect(data: bytes, fmt: LogFormat, encoding: str, events: Events, line0: int) -> None:
    """The events of one piece of a log (whose first line is line0 + 1) into `events`."""
    width = len(fmt.fields) + 1
    parts = fmt.pattern.split(data)  # [text, group1, ..., groupN, text, group1, ...]
    found = len(parts) // width
    tagged = data.count(b":::ML")  # the markers of every format
    # each match starts with one of our markers: if every marker matched, one count suffices
    markers = found if tagged == found else data.count(fmt.marker)
    if found != markers:  # a marker line the grammar rejects, or another format
        columns, lines = _collect_loose(data, fmt, events, line0)
    else:  # the line of each match, from the newlines before it
        counts = map(bytes.count, parts[0 : len(parts) - 1 : width], repeat(b"\n"))
        lines = list(accumulate(counts, initial=line0 + 1))
        del lines[0]
        columns = [parts[i::width] for i in range(1, width)]
        if len(data) > MAX_EVENT_BYTES:  # else no value can be over the limit
            _drop_long(columns, lines, events)
    if not lines:
        return
    if fmt.fields == ("json",):
        _json_events(columns[0], lines, fmt, encoding, events)
    else:
        _text_events(dict(zip(fmt.fields, columns, strict=True)), lines, fmt, encoding, events)
    if tagged == markers:  # every marker in the file is ours
        return
    others = [
        f.marker.decode()
        for f in FORMATS
        if f is not fmt and not fmt.marker.startswith(f.marker) and f.marker + b" " in data
    ]
    if others:
        events.warn("mixed-formats", f"lines of other formats ignored: {others}")


def _lines_at(data: bytes, offsets: Sequence[int] | np.ndarray, line0: int) -> list[int]:
    """The 1-based line number of each byte offset (line0 lines before the data)."""
    newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    return (np.searchsorted(newlines, offsets) + 1 + line0).tolist()


def _first_seen(rows: Iterable[Hashable]) -> list[bool]:
    """For each row, whether it is the first of its equals (a line printed twice counts once)."""
    seen: set[Hashable] = set()
    return [not (row in seen or seen.add(row)) for row in rows]


def _collect_loose(
    data: bytes, fmt: LogFormat, events: Events, line0: int
) -> tuple[list[list[bytes]], list[int]]:
    """The slow path: every marker, with the lines the grammar rejects reported."""
    matches = list(fmt.loose.finditer(data))
    lines = _lines_at(data, [m.start() for m in matches], line0)
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
    columns = [[part or b"" for part in column] for column in zip(*groups, strict=True)]
    columns = columns or [[] for _ in fmt.fields]
    _drop_long(columns, lines, events)
    return columns, lines


def _drop_long(columns: list[list[bytes]], lines: list[int], events: Events) -> None:
    """Skip, in place, events whose value (the only unbounded part) is over the limit."""
    tails = columns[-1]
    if max(map(len, tails), default=0) <= MAX_EVENT_BYTES:
        return
    long = [i for i, tail in enumerate(tails) if len(tail) > MAX_EVENT_BYTES]
    for i in long:
        events.warn("line-too-long", f"event of {len(tails[i])} bytes skipped", lines[i])
    for i in reversed(long):
        del lines[i]
        for column in columns:
            del column[i]


def _text_events(
    columns: dict[str, list[bytes]],
    lines: list[int],
    fmt: LogFormat,
    encoding: str,
    events: Events,
) -> None:
    ts, keys, values = columns["ts"], columns["key"], list(map(bytes.strip, columns["value"]))
    benches = columns.get("bench")
    # distinct timestamps (the usual case) leave nothing to compare
    if len(set(ts)) != len(ts) and len(set(zip(ts, keys, values, strict=True))) != len(ts):
        # an event printed twice (logger prefixes): the first counts
        keep = _first_seen(zip(ts, keys, values, strict=True))
        ts, keys, values, lines = (list(compress(c, keep)) for c in (ts, keys, values, lines))
        if benches is not None:
            benches = list(compress(benches, keep))
    if fmt.time_format is not None:  # dates, not numbers
        times = _parse_dates(ts, fmt.time_format, lines, events)
    else:  # Arrow parses as float() does (correctly rounded), in C
        times = pa.array(ts, pa.binary()).cast(pa.float64()).to_numpy()
    events.time_s = times * fmt.time_unit_s if fmt.time_unit_s != 1.0 else times
    events.keys, events.raw_values = _names(keys), list(_texts(values, encoding))
    events.raw_metadata = [None] * len(keys)
    events.lines = lines
    if benches is not None:
        events.benchmarks = {b.decode("utf-8", "replace") for b in set(benches)}


def _parse_dates(texts: list[bytes], layout: str, lines: list[int], events: Events) -> np.ndarray:
    """Unix seconds of timestamps written as dates (taken as UTC), each distinct one once; NaN,
    with a warning at its first line, for a date that no calendar has (13/45/19)."""
    seen = {}
    for text in set(texts):
        try:
            when = dt.datetime.strptime(text.decode(), layout).replace(tzinfo=dt.UTC)
            seen[text] = when.timestamp()
        except ValueError:
            seen[text] = math.nan
    times = np.array([seen[text] for text in texts], dtype=np.float64)
    bad = np.flatnonzero(np.isnan(times))
    if bad.size:
        first = int(bad[0])
        shown = texts[first].decode(errors="replace")
        events.warn(
            "bad-time", f"{bad.size} events at impossible dates, first {shown!r}", lines[first]
        )
    return times


# mllog writes its fields in this order; such lines are split without a JSON round trip,
# all lines of a log in one pass: one tuple per line, empty where a line is laid out otherwise.
_MLLOG_FIELDS = re.compile(
    rb'(?m)^(?:\{"namespace": "[^"\\]*", "time_ms": ([0-9]+(?:\.[0-9]*)?), "event_type": '
    rb'"[A-Z_]+", "key": "([^"\\]+)", "value": (.*), "metadata": (\{.*\})\}[^\S\n]*|.*)$'
)


def _json_events(
    raws: list[bytes], lines: list[int], fmt: LogFormat, encoding: str, events: Events
) -> None:
    rows = _MLLOG_FIELDS.findall(b"\n".join(raws))
    if all(row[0] for row in rows):  # the usual case: columns at once
        ts, keys, values, metadata = zip(*rows, strict=True)
        times = pa.array(ts, pa.binary()).cast(pa.float64()).to_numpy() * fmt.time_unit_s
        columns = [
            times,
            _names(keys),
            list(_texts(values, encoding)),
            list(_texts(metadata, encoding)),
            lines,
        ]
        if len(set(zip(*columns[:3], strict=True))) != len(lines):  # an event printed twice
            keep = _first_seen(zip(*columns[:3], strict=True))
            columns = [list(compress(c, keep)) for c in columns]
            columns[0] = np.asarray(columns[0], np.float64)
        events.time_s, events.keys, events.raw_values, events.raw_metadata, events.lines = columns
        return
    seen = set()
    unit = fmt.time_unit_s
    for raw, line, (ts, key_b, value_b, meta_b) in zip(raws, lines, rows, strict=True):
        if ts:
            time_s = float(ts) * unit
            key = key_b.decode("utf-8", "replace")
            value, meta_t = _texts([value_b, meta_b], encoding)
            meta: bytes | None = meta_t
        else:
            try:
                obj = json.loads(raw)
                # Alibaba's v0.7 logs give seconds (time_s) where mllog gives milliseconds
                time_s = float(obj["time_ms"]) * unit if "time_ms" in obj else float(obj["time_s"])
                key = str(obj["key"])
            except (ValueError, TypeError, KeyError, OverflowError, RecursionError):
                events.warn("bad-line", f"{fmt.marker.decode()} line is not an event object", line)
                continue
            value = json.dumps(obj.get("value")).encode()
            meta = json.dumps(obj["metadata"]).encode() if obj.get("metadata") is not None else None
        if (time_s, key, value) in seen:
            continue
        seen.add((time_s, key, value))
        events.time_s.append(time_s)
        events.keys.append(key)
        events.raw_values.append(value)
        events.raw_metadata.append(meta)
        events.lines.append(line)


def _check_clock(events: Events) -> None:
    """One warning at the first timestamp that steps back more than the tolerance."""
    if len(events.time_s) < 2:
        return
    times = np.asarray(events.time_s, dtype=np.float64)
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
