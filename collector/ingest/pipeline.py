"""Ingest MLPerf logs and system descriptions into the Parquet store."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from collector import store as stores
from collector.ingest.parallel import map_batches, split_by_size, usable_cpus
from collector.ingest.published import is_published_folder, load_published
from collector.ingest.rows import IssueRow, Parsed, read_and_parse
from collector.ingest.scan import Events
from collector.ingest.trees import LogEntry, find_logs
from collector.store.schemas import load
from collector.store.snapshot import merge

SOURCES = ("official", "local", "published")
# tables of many rows per run, built per batch of logs
RUN_TABLES = ("evals", "telemetry")
PARALLEL_MIN_BYTES = 16 << 20  # below this, worker start-up costs more than it saves


@dataclass
class IngestReport:
    """What one ingest did."""

    store: Path
    files: int = 0
    bytes: int = 0
    runs_added: int = 0
    runs_unchanged: int = 0
    systems: int = 0
    published_rows: int = 0  # rows of transcribed studies loaded (they replace earlier ones)
    issues: list[IssueRow] = field(default_factory=list)
    snapshot: str | None = None

    @property
    def failed(self) -> bool:
        """True when any file or run could not be read fully."""
        return any(i.severity == "error" for i in self.issues)


@dataclass
class _Batch:
    """The parsed logs of consecutive entries, their events, evals and telemetry in one table
    each."""

    items: list[Parsed]
    tables: dict[str, pa.Table]


def ingest(
    paths: Iterable[str | Path],
    store: str | Path | None = None,
    source: str | None = None,
    workers: int | None = None,
    on_issue: Callable[[IssueRow], None] | None = None,
    round_: str | None = None,
    events: bool = True,
) -> IngestReport:
    """Read every log under `paths` into the store; files already stored are skipped.

    Problems never stop the ingest: each becomes an ingest_issues row (and a call to
    `on_issue`); the report's `failed` says whether any was an error. `workers` is the
    number of processes that parse, this one included (default: the usable CPUs, at most
    8); batches under PARALLEL_MIN_BYTES are parsed here alone. `round_` states the round
    of every official log (else the repository folder or the logs themselves tell).
    `events=False` keeps the per-event rows out of the store (runs and evals stay).
    """
    store_path = stores.resolve(store)
    paths = [Path(p) for p in paths]
    folders = [p for p in paths if is_published_folder(p)]
    published = pa.concat_tables([load_published(f) for f in folders]) if folders else None
    entries = find_logs([p for p in paths if p not in folders], round_)
    snap = stores.read(store_path)
    report = IngestReport(store=store_path, files=len(entries))
    if published is not None:
        report.published_rows = published.num_rows
    known = frozenset(snap["runs"].column("run_id").to_pylist())
    batches = _parse_all(entries, known, source, workers, events)
    seen: set[str] = set()
    systems: dict[str, dict[str, Any]] = {}
    runs: list[dict[str, Any]] = []
    slices: dict[str, list[tuple[pa.Table, int, int]]] = {n: [] for n in ("events", *RUN_TABLES)}
    for batch in batches:
        at = dict.fromkeys(slices, 0)
        for item in batch.items:
            for name in slices:
                at[name] += item.counts.get(name, 0)
            report.bytes += item.size
            for issue in item.issues:
                _emit(report, on_issue, issue)
            if item.unchanged or (item.digest in seen):
                report.runs_unchanged += 1
                continue
            if item.digest:
                seen.add(item.digest)
            if item.run is None:
                continue
            runs.append(item.run)
            for name, kept in slices.items():
                count = item.counts.get(name, 0)
                kept.append((batch.tables[name], at[name] - count, count))
            if item.system and item.system["system_id"] not in systems:
                systems[item.system["system_id"]] = item.system
    for system in systems.values():
        for issue in system.pop("_issues", []):
            _emit(report, on_issue, issue)
    report.runs_added = len(runs)
    report.systems = len(systems)
    new = {
        "runs": load("runs").table_from_rows(runs),
        **{name: _gather(name, kept) for name, kept in slices.items()},
        "systems": load("systems").table_from_rows(list(systems.values())),
        "ingest_issues": load("ingest_issues").table_from_rows([vars(i) for i in report.issues]),
    }
    if not runs and not report.issues and published is None:
        return report
    merged = {name: merge(name, snap.tables[name], table) for name, table in new.items()}
    merged["compliance"] = snap.tables["compliance"]
    # the transcribed studies given replace the stored ones whole
    merged["published"] = published if published is not None else snap.tables["published"]
    report.snapshot = stores.write(store_path, stores.Snapshot(merged))
    return report


def _emit(
    report: IngestReport, on_issue: Callable[[IssueRow], None] | None, issue: IssueRow
) -> None:
    report.issues.append(issue)
    if on_issue is not None:
        on_issue(issue)


def _parse_all(
    entries: list[LogEntry],
    known: frozenset[str],
    source: str | None,
    workers: int | None,
    events: bool = True,
) -> list[_Batch]:
    """Read, hash and parse every log, in worker processes too when the batch is large."""
    sizes = [_size(e.path) for e in entries]
    count = workers if workers is not None else min(usable_cpus(), 8)
    if count <= 1 or sum(sizes) < PARALLEL_MIN_BYTES or len(entries) < 2:
        return [_parse_batch(entries, known, source, events)]
    batches = split_by_size(entries, sizes, count)
    return map_batches(_parse_batch, batches, (known, source, events), count)


def _parse_batch(
    entries: list[LogEntry], known: frozenset[str], source: str | None, events: bool = True
) -> _Batch:
    """Parse consecutive logs; their events and evals are concatenated, in entry order."""
    with _gc_paused():
        return _parse_entries(entries, known, source, events)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cycle collection meanwhile: parsing makes no cycles, only long lists that each
    young-generation pass would walk again."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _parse_entries(
    entries: list[LogEntry], known: frozenset[str], source: str | None, events: bool = True
) -> _Batch:
    items = [read_and_parse(entry, known, source) for entry in entries]
    if not events:
        for item in items:
            item.events = None
    tables = {
        "events": _events_table(
            [(item.run["run_id"], item.events) for item in items if item.run and item.events]
        )
    }
    for name in RUN_TABLES:
        tables[name] = load(name).table_from_rows(
            [row for item in items for row in item.rows.get(name, ())]
        )
    for item in items:  # the batch tables hold the rows now, in item order
        item.counts = {name: len(rows) for name, rows in item.rows.items()}
        item.counts["events"] = len(item.events) if item.run and item.events else 0
        item.events, item.rows = None, {}
    return _Batch(items, tables)


def _events_table(runs: list[tuple[str, Events]]) -> pa.Table:
    """The events of the runs given, in order, in one table built column by column."""
    if not runs:
        return load("events").empty()
    counts = np.array([len(events) for _, events in runs], dtype=np.int64)
    owner = np.repeat(np.arange(len(runs)), counts)
    starts = np.cumsum(counts) - counts
    meta = list(chain.from_iterable(events.raw_metadata for _, events in runs))
    return load("events").table_from_arrays(
        [
            pa.array([run_id for run_id, _ in runs], pa.string()).take(owner),
            pa.array(np.arange(int(counts.sum()), dtype=np.int64) - starts[owner]),
            pa.array(list(chain.from_iterable(events.lines for _, events in runs)), pa.int64()),
            pa.array(np.concatenate([np.asarray(events.time_s, np.float64) for _, events in runs])),
            pa.array(list(chain.from_iterable(events.keys for _, events in runs)), pa.string()),
            _utf8(list(chain.from_iterable(events.raw_values for _, events in runs))),
            pa.nulls(len(meta), pa.string()) if meta.count(None) == len(meta) else _utf8(meta),
        ]
    )


def _utf8(texts: list[bytes | None]) -> pa.Array:
    """A string array of UTF-8 texts (the cast checks them), without decoding each."""
    return pa.array(texts, pa.binary()).cast(pa.string())


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _gather(name: str, slices: list[tuple[pa.Table, int, int]]) -> pa.Table:
    """One table of the given row ranges, adjacent ranges of one table taken as one."""
    merged: list[tuple[pa.Table, int, int]] = []
    for table, start, length in slices:
        if length == 0:
            continue
        if merged and merged[-1][0] is table and sum(merged[-1][1:]) == start:
            merged[-1] = (table, merged[-1][1], merged[-1][2] + length)
        else:
            merged.append((table, start, length))
    if not merged:
        return load(name).empty()
    return pa.concat_tables([table.slice(start, length) for table, start, length in merged])
