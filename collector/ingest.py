"""Ingest MLPerf logs and system descriptions into the Parquet store."""

from __future__ import annotations

import gc
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from collector import store as stores
from collector.logs.scan import Events, Issue, scan
from collector.logs.summary import RunSummary, summarize
from collector.logs.telemetry import read_telemetry
from collector.parallel import map_batches, split_by_size, usable_cpus
from collector.published import is_published_folder, load_published
from collector.store.schemas import load
from collector.store.snapshot import merge
from collector.systems import classify_interconnect, read_description, system_row
from collector.trees import LogEntry, find_logs

SOURCES = ("official", "local", "published")
# tables of many rows per run, built per batch of logs
RUN_TABLES = ("evals", "telemetry")
PARALLEL_MIN_BYTES = 16 << 20  # below this, worker start-up costs more than it saves


@dataclass(frozen=True)
class IssueRow:
    """One problem, as stored in ingest_issues and printed as a warning."""

    path: str
    line: int | None
    severity: str
    code: str
    message: str
    log_sha256: str | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{self.severity}: {where}: {self.message}"


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
class _Parsed:
    run: dict[str, Any] | None = None
    events: Events | None = None  # until the batch table holds them
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # RUN_TABLES, as events
    issues: list[IssueRow] = field(default_factory=list)
    system: dict[str, Any] | None = None
    digest: str | None = None
    size: int = 0
    unchanged: bool = False
    counts: dict[str, int] = field(default_factory=dict)  # rows in the batch tables, once there


@dataclass
class _Batch:
    """The parsed logs of consecutive entries, their events, evals and telemetry in one table
    each."""

    items: list[_Parsed]
    tables: dict[str, pa.Table]


def ingest(
    paths: Iterable[str | Path],
    store: str | Path | None = None,
    source: str | None = None,
    workers: int | None = None,
    on_issue: Callable[[IssueRow], None] | None = None,
) -> IngestReport:
    """Read every log under `paths` into the store; files already stored are skipped.

    Problems never stop the ingest: each becomes an ingest_issues row (and a call to
    `on_issue`); the report's `failed` says whether any was an error. `workers` is the
    number of processes that parse, this one included (default: the usable CPUs, at most
    8); batches under PARALLEL_MIN_BYTES are parsed here alone.
    """
    store_path = stores.resolve(store)
    paths = [Path(p) for p in paths]
    folders = [p for p in paths if is_published_folder(p)]
    published = pa.concat_tables([load_published(f) for f in folders]) if folders else None
    entries = find_logs([p for p in paths if p not in folders])
    snap = stores.read(store_path)
    report = IngestReport(store=store_path, files=len(entries))
    if published is not None:
        report.published_rows = published.num_rows
    known = frozenset(snap["runs"].column("log_sha256").to_pylist())
    batches = _parse_all(entries, known, source, workers)
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
    entries: list[LogEntry], known: frozenset[str], source: str | None, workers: int | None
) -> list[_Batch]:
    """Read, hash and parse every log, in worker processes too when the batch is large."""
    sizes = [_size(e.path) for e in entries]
    count = workers if workers is not None else min(usable_cpus(), 8)
    if count <= 1 or sum(sizes) < PARALLEL_MIN_BYTES or len(entries) < 2:
        return [_parse_batch(entries, known, source)]
    batches = split_by_size(entries, sizes, count)
    return map_batches(_parse_batch, batches, (known, source), count)


def _parse_batch(entries: list[LogEntry], known: frozenset[str], source: str | None) -> _Batch:
    """Parse consecutive logs; their events and evals are concatenated, in entry order."""
    with _gc_paused():
        return _parse_entries(entries, known, source)


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


def _parse_entries(entries: list[LogEntry], known: frozenset[str], source: str | None) -> _Batch:
    items = [_parse_read(entry, _read(entry.path), known, source) for entry in entries]
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


def _read(path: Path) -> tuple[bytes, str] | OSError:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return exc
    return data, hashlib.sha256(data).hexdigest()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def read_and_parse(
    entry: LogEntry, known: frozenset[str] = frozenset(), source: str | None = None
) -> _Parsed:
    """Read one log; skip it if its sha256 is already stored, else parse it."""
    return _parse_read(entry, _read(entry.path), known, source)


def _parse_read(
    entry: LogEntry, read: tuple[bytes, str] | OSError, known: frozenset[str], source: str | None
) -> _Parsed:
    if isinstance(read, OSError):
        issue = IssueRow(
            entry.rel_path, None, "error", "unreadable", f"cannot read: {read.strerror}"
        )
        return _Parsed(issues=[issue])
    data, digest = read
    if digest in known:
        return _Parsed(digest=digest, size=len(data), unchanged=True)
    parsed = parse_log(entry, data, digest, source)
    parsed.digest, parsed.size = digest, len(data)
    return parsed


def parse_log(entry: LogEntry, data: bytes, digest: str, source: str | None = None) -> _Parsed:
    """Parse one log's bytes into its run row, events, evals, system row and issues."""
    events = scan(data)
    summary = summarize(events) if events.fmt is not None else None
    issues = [_issue_row(entry.rel_path, digest, i) for i in events.issues]
    if summary is None or not len(events):
        return _Parsed(issues=issues)
    run_id = digest[:16]
    run, system = _run_row(entry, events, summary, digest, run_id, len(data), source)
    evals = [
        {
            "run_id": run_id,
            "seq": n,
            "line": e.line,
            "time_unix_s": e.time_s,
            "elapsed_s": e.time_s - summary.run_start_s
            if summary.run_start_s is not None
            else None,
            "epoch": e.epoch,
            "quality": e.quality,
        }
        for n, e in enumerate(summary.evals)
    ]
    telemetry = _telemetry(entry, run_id, issues)
    return _Parsed(run, events, {"evals": evals, "telemetry": telemetry}, issues, system)


def _telemetry(entry: LogEntry, run_id: str, issues: list[IssueRow]) -> list[dict[str, Any]]:
    """The rows of the telemetry file beside the log, if the tree walk found one; its problems
    are added to `issues` under the telemetry file's path."""
    path = entry.telemetry
    if path is None:
        return []
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        rel = _sibling(entry.rel_path, path.name)
        issues.append(IssueRow(rel, None, "warning", "unreadable", f"cannot read: {exc.strerror}"))
        return []
    rows, problems = read_telemetry(data, run_id)
    rel, sha = _sibling(entry.rel_path, path.name), hashlib.sha256(data).hexdigest()
    issues.extend(IssueRow(rel, i.line, i.severity, i.code, i.message, sha) for i in problems)
    return rows


def _sibling(rel_path: str, name: str) -> str:
    """The relative path of file `name` in the folder of `rel_path`."""
    folder = rel_path.rpartition("/")[0]
    return f"{folder}/{name}" if folder else name


def _issue_row(path: str, digest: str | None, issue: Issue) -> IssueRow:
    return IssueRow(path, issue.line, issue.severity, issue.code, issue.message, digest)


def _run_row(
    entry: LogEntry,
    events: Events,
    s: RunSummary,
    digest: str,
    run_id: str,
    size: int,
    source: str | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    local = s.local or {}
    sub = s.submission
    kind = source or _source_of(entry, events, s)
    round_ = (
        entry.round
        or local.get("suite")
        or (events.fmt.default_round if events.fmt else None)
        or "unknown"
    )
    submitter = entry.submitter or sub.get("org") or "unknown"
    system = entry.system or sub.get("platform") or entry.path.parent.name
    system_id = f"{round_}/{submitter}/{system}"
    benchmark = entry.benchmark or events.benchmark or sub.get("benchmark") or "unknown"
    desc_json, desc_sha, desc_issues, described = _describe(entry.description)
    system_row_ = {
        "system_id": system_id,
        "source": kind,
        "round": round_,
        "submitter": submitter,
        "system": system,
        "interconnect_inferred": False,
        **described,
        "division": described.get("division") or sub.get("division"),
        "description_path": _rel(entry, entry.description),
        "description_sha256": desc_sha,
        "description_json": desc_json,
        "_issues": [
            _issue_row(_rel(entry, entry.description) or entry.rel_path, desc_sha, i)
            for i in desc_issues
        ],
    }
    interconnect = described.get("interconnect")
    if local.get("interconnect") == "no-p2p":
        interconnect = "no-p2p"
    elif local and interconnect is None:
        interconnect = classify_interconnect(None, local.get("accelerator"), None, None)[0]
    run = {
        "run_id": run_id,
        "source": kind,
        "round": round_,
        "submitter": submitter,
        "division": system_row_["division"],
        "system_id": system_id,
        "system": system,
        "benchmark": benchmark,
        "run": entry.run,
        "status": s.status,
        "run_start_unix_s": s.run_start_s,
        "run_stop_unix_s": s.run_stop_s,
        "time_to_train_s": s.time_to_train_s,
        "quality_target": s.quality_target,
        "quality_best": s.quality_best,
        "epochs": s.epochs,
        "throughput_samples_per_s": s.throughput_samples_per_s,
        "accelerator": local.get("accelerator") or described.get("accelerator"),
        "accelerators": _first_int(local.get("accelerators"), described.get("accelerators")),
        "nodes": _first_int(local.get("nodes"), described.get("nodes")),
        "framework": local.get("framework") or described.get("framework"),
        "precision": local.get("precision"),
        "interconnect": interconnect,
        "scale": local.get("scale"),
        "log_format": events.fmt.name if events.fmt else "unknown",
        "log_path": entry.rel_path,
        "log_sha256": digest,
        "log_bytes": size,
        "events": len(events),
    }
    return run, system_row_


def _describe(path: Path | None) -> tuple[str | None, str | None, list[Issue], dict[str, Any]]:
    """A system description (as JSON text) read once, however many logs share it."""
    if path is None:
        return None, None, [], {}
    try:
        stamp = path.stat()
        key = (str(path), stamp.st_mtime_ns, stamp.st_size)
    except OSError:
        key = (str(path), 0, 0)
    return _describe_cached(key)


@lru_cache(maxsize=4096)
def _describe_cached(key: tuple[str, int, int]) -> tuple[str | None, str | None, list[Issue], dict]:
    doc, digest, issues = read_description(Path(key[0]))
    text = json.dumps(doc, sort_keys=True) if doc is not None else None
    return text, digest, issues, system_row(doc)


def _source_of(entry: LogEntry, events: Events, s: RunSummary) -> str:
    if s.local is not None:
        return "local"
    if entry.layout != "plain":
        return "official"
    if events.fmt is not None and events.fmt.name != "mllog":
        return "official"  # only MLPerf reference code wrote the v0.5/v0.6 dialects
    return "official" if s.submission.get("division") in ("closed", "open") else "local"


def _first_int(*values: Any) -> int | None:
    for value in values:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _rel(entry: LogEntry, path: Path | None) -> str | None:
    if path is None:
        return None
    parents = entry.path.parents  # the base is as many levels up as rel_path has parts
    depth = entry.rel_path.count("/") + 1
    base = parents[min(depth, len(parents)) - 1] if parents else entry.path
    return _relative(base, os.path.abspath(path), path.name)


@lru_cache(maxsize=4096)
def _relative(base: Path, absolute: str, name: str) -> str:
    try:
        return Path(absolute).relative_to(base).as_posix()
    except ValueError:
        return name


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
