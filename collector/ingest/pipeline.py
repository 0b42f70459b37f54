"""Ingest MLPerf logs and system descriptions into the Parquet store."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from collector import store as stores
from collector.ingest import reference
from collector.ingest.parallel import map_batches, split_by_size, usable_cpus
from collector.ingest.rows import IssueRow, Parsed, read_and_parse, run_id
from collector.ingest.scan import Events
from collector.ingest.trees import LogEntry, Skipped, find_logs
from collector.store.schemas import load
from collector.store.snapshot import merge

SOURCES = ("official", "local", "published")
# tables of many rows per run, built per batch of logs
RUN_TABLES = ("evals", "telemetry")
PARALLEL_MIN_BYTES = 16 << 20  # below this, worker start-up costs more than it saves
Known = dict[str, set[str]]  # log path -> sha256 of the logs stored at that path


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
    issues: list[IssueRow] = field(default_factory=list)  # problems new to the store
    recorded: list[IssueRow] = field(default_factory=list)  # found again, stored before
    snapshot: str | None = None

    @property
    def failed(self) -> bool:
        """True when a file or run could not be read fully and the store did not know it."""
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
    wait_s: float = stores.WAIT_S,
    on_wait: Callable[[str], None] | None = None,
    round_: str | None = None,
    events: bool = True,
) -> IngestReport:
    """Read every log under `paths` into the store; files already stored are skipped.

    Problems never stop the ingest: each becomes an ingest_issues row (and a call to
    `on_issue`); the report's `failed` says whether any was an error. Problems the store
    holds already are not stored again: they go to the report's `recorded`. `workers` is
    the number of processes that parse, this one included (default: the usable CPUs, at
    most 8); batches under PARALLEL_MIN_BYTES are parsed here alone. `round_` states the
    round of every official log (else the repository folder or the logs themselves tell).
    `events=False` keeps the per-event rows out of the store (runs and evals stay).

    The logs are parsed first; then the store's writer lock is taken (waiting up to
    `wait_s` seconds, telling `on_wait`) and the new snapshot built from the store as it
    is then. Nothing new (runs, problems, reference data) writes no snapshot.
    Reference data is read here too (collector.ingest.reference).
    """
    ref = reference.read([Path(p) for p in paths])
    skipped: list[Skipped] = []
    entries = find_logs(ref.logs, skipped, round_)  # a path that is not there stops here
    store_path = stores.resolve(store, writing=True)
    # logs stored already are not parsed; what another writer adds meanwhile is caught below
    known = _stored(stores.read(store_path, ("runs",)))
    batches = _parse_all(entries, known, source, workers, events)
    with stores.writing(store_path, wait_s, on_wait):
        snap = stores.read(store_path)
        report = IngestReport(store=store_path, files=len(entries))
        new, found = _new_rows(report, snap, entries, batches, skipped)
        _sort_issues(report, snap, [*found, *ref.issues], on_issue)
        new["ingest_issues"] = load("ingest_issues").table_from_rows(
            [vars(i) for i in report.issues]
        )
        if "published" in ref.tables:
            report.published_rows = ref.tables["published"].num_rows
        # reference data given (studies, sources, prices...) replaces the stored tables whole
        changed = reference.changes(ref, snap.tables)
        if not report.runs_added and not report.issues and not changed:
            return report
        merged = {**snap.tables, **changed}
        merged.update((name, merge(name, snap.tables[name], table)) for name, table in new.items())
        if merged["prices"].num_rows == 0:  # a store without prices: collector's example rates
            merged["prices"] = reference.example_prices()
        report.snapshot = stores.write(store_path, stores.Snapshot(merged))
    return report


def _stored(snap: stores.Snapshot) -> Known:
    """The sha256 of the logs stored at each path."""
    runs = snap["runs"]
    at: Known = {}
    paths, digests = runs.column("log_path").to_pylist(), runs.column("log_sha256").to_pylist()
    for path, digest in zip(paths, digests, strict=True):
        at.setdefault(path, set()).add(digest)
    return at


def _new_rows(
    report: IngestReport,
    snap: stores.Snapshot,
    entries: list[LogEntry],
    batches: list[_Batch],
    skipped: list[Skipped],
) -> tuple[dict[str, pa.Table], list[IssueRow]]:
    """The rows of the logs not stored yet at their path, and every problem found.

    A log with the bytes of one stored (or met earlier) at another path is a run of its
    own path too, with a run_id of its own and a duplicate-content warning."""
    stored = _stored(snap)
    content = _first_paths(snap["runs"])
    found = [
        IssueRow(s.rel_path, None, "error" if s.given else "warning", s.code, s.message)
        for s in skipped
    ]
    systems: dict[str, dict[str, Any]] = {}
    runs: list[dict[str, Any]] = []
    kept: list[str | None] = []  # per parsed log: the run_id its rows are stored under, if new
    items = [item for batch in batches for item in batch.items]
    for entry, item in zip(entries, items, strict=True):
        kept.append(None)
        report.bytes += item.size
        found.extend(item.issues)
        if item.unchanged or item.digest in stored.get(entry.rel_path, ()):
            report.runs_unchanged += 1
            continue
        if item.digest:
            stored.setdefault(entry.rel_path, set()).add(item.digest)
        if item.run is None:
            continue
        first = content.setdefault(item.digest, entry.rel_path)
        if first != entry.rel_path:
            if item.run["source"] != "official":  # an official run's id names its place
                item.run["run_id"] = run_id(item.digest, path=entry.rel_path)
            found.append(
                IssueRow(
                    entry.rel_path,
                    None,
                    "warning",
                    "duplicate-content",
                    f"same bytes as {first}; stored as a run of both paths",
                    item.digest,
                )
            )
        runs.append(item.run)
        kept[-1] = item.run["run_id"]
        if item.system and item.system["system_id"] not in systems:
            systems[item.system["system_id"]] = item.system
    for system in systems.values():
        found.extend(system.pop("_issues", []))
    report.runs_added = len(runs)
    report.systems = len(systems)
    new = {
        "runs": load("runs").table_from_rows(runs),
        **{name: _gather(name, batches, items, kept) for name in ("events", *RUN_TABLES)},
        "systems": load("systems").table_from_rows(list(systems.values())),
    }
    return new, found


def _first_paths(runs: pa.Table) -> dict[str, str]:
    """The path of each stored log's bytes: where they were stored first, under the run_id
    of the bytes alone."""
    first: dict[str, str] = {}
    columns = (runs.column(c).to_pylist() for c in ("log_sha256", "log_path", "run_id"))
    for digest, path, stored_id in zip(*columns, strict=True):
        if digest not in first or stored_id == run_id(digest):
            first[digest] = path
    return first


def _sort_issues(
    report: IngestReport,
    snap: stores.Snapshot,
    found: list[IssueRow],
    on_issue: Callable[[IssueRow], None] | None,
) -> None:
    """New problems to the report's issues (and `on_issue`), stored ones to `recorded`."""
    table = snap["ingest_issues"]
    key = ("path", "line", "code", "message")
    stored = set(zip(*(table.column(k).to_pylist() for k in key), strict=True))
    for issue in found:
        if (issue.path, issue.line, issue.code, issue.message) in stored:
            report.recorded.append(issue)
            continue
        report.issues.append(issue)
        if on_issue is not None:
            on_issue(issue)


def _parse_all(
    entries: list[LogEntry], known: Known, source: str | None, workers: int | None, events: bool
) -> list[_Batch]:
    """Read, hash and parse every log, in worker processes too when the batch is large."""
    sizes = [_size(e.path) for e in entries]
    count = workers if workers is not None else min(usable_cpus(), 8)
    if count <= 1 or sum(sizes) < PARALLEL_MIN_BYTES or len(entries) < 2:
        return [_parse_batch(entries, known, source, events)]
    batches = split_by_size(entries, sizes, count)
    return map_batches(_parse_batch, batches, (known, source, events), count)


def _parse_batch(entries: list[LogEntry], known: Known, source: str | None, events: bool) -> _Batch:
    """Parse consecutive logs; their events and evals are concatenated, in entry order."""
    items = [read_and_parse(entry, known.get(entry.rel_path, set()), source) for entry in entries]
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
    """The events of the runs given, in order, in one table built column by column (the
    values and metadata as the scan left them: Arrow arrays of each log's bytes)."""
    if not runs:
        return load("events").empty()
    counts = np.array([len(events) for _, events in runs], dtype=np.int64)
    owner = np.repeat(np.arange(len(runs)), counts)
    starts = np.cumsum(counts) - counts
    meta = [chunk for _, events in runs for chunk in events.raw_metadata.chunks]
    return load("events").table_from_arrays(
        [
            pa.array([run_id for run_id, _ in runs], pa.string()).take(owner),
            pa.array(np.arange(int(counts.sum()), dtype=np.int64) - starts[owner]),
            pa.array(np.concatenate([np.asarray(events.lines, np.int64) for _, events in runs])),
            pa.array(np.concatenate([np.asarray(events.time_s, np.float64) for _, events in runs])),
            pa.array(list(chain.from_iterable(events.keys for _, events in runs)), pa.string()),
            _utf8([chunk for _, events in runs for chunk in events.raw_values.chunks]),
            _utf8(meta),
        ]
    )


def _utf8(chunks: list[pa.Array]) -> pa.ChunkedArray:
    """A string column of UTF-8 texts (the cast checks them), without decoding each."""
    return pa.chunked_array(chunks, pa.binary()).cast(pa.string())


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _gather(
    name: str, batches: list[_Batch], items: list[Parsed], kept: list[str | None]
) -> pa.Table:
    """The rows of table `name` of the logs kept, each log's under the run_id `kept` gives."""
    table = pa.concat_tables([load(name).empty(), *(batch.tables[name] for batch in batches)])
    owner = np.repeat(np.arange(len(items)), [item.counts.get(name, 0) for item in items])
    ids = pa.array(kept, pa.string())
    keep = pc.is_valid(ids).to_numpy(zero_copy_only=False)[owner]
    if not keep.all():
        table, owner = table.filter(keep), owner[keep]
    run_ids = pa.DictionaryArray.from_arrays(pa.array(owner, pa.int32()), ids).cast(pa.string())
    return table.set_column(0, table.schema.field(0), run_ids)
