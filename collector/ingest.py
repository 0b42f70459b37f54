"""Ingest MLPerf logs and system descriptions into the Parquet store."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa

from collector import store as stores
from collector.logs.scan import Events, Issue, scan
from collector.logs.summary import RunSummary, summarize
from collector.published import is_published_folder, load_published
from collector.store.schemas import load
from collector.store.snapshot import merge
from collector.systems import classify_interconnect, read_description, system_row
from collector.trees import LogEntry, find_logs

SOURCES = ("official", "local", "published")
PARALLEL_MIN_BYTES = 8 << 20  # below this, worker start-up costs more than it saves


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
    events: pa.Table | None = None
    evals: list[dict[str, Any]] = field(default_factory=list)
    issues: list[IssueRow] = field(default_factory=list)
    system: dict[str, Any] | None = None
    digest: str | None = None
    size: int = 0
    unchanged: bool = False


def ingest(
    paths: Iterable[str | Path],
    store: str | Path | None = None,
    source: str | None = None,
    workers: int | None = None,
    on_issue: Callable[[IssueRow], None] | None = None,
) -> IngestReport:
    """Read every log under `paths` into the store; files already stored are skipped.

    Problems never stop the ingest: each becomes an ingest_issues row (and a call to
    `on_issue`); the report's `failed` says whether any was an error.
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
    parsed = _parse_all(entries, known, source, workers)
    seen: set[str] = set()
    systems: dict[str, dict[str, Any]] = {}
    runs, evals, event_parts = [], [], []
    for item in parsed:
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
        evals.extend(item.evals)
        event_parts.append(item.events)
        if item.system and item.system["system_id"] not in systems:
            systems[item.system["system_id"]] = item.system
    for system in systems.values():
        for issue in system.pop("_issues", []):
            _emit(report, on_issue, issue)
    report.runs_added = len(runs)
    report.systems = len(systems)
    new = {
        "runs": load("runs").table_from_rows(runs),
        "evals": load("evals").table_from_rows(evals),
        "events": _events_table(event_parts),
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
) -> list[_Parsed]:
    """Read, hash and parse every log, in worker processes when the batch is large."""
    total = sum(_size(e.path) for e in entries)
    count = workers if workers is not None else min(os.cpu_count() or 1, 8)
    if count <= 1 or total < PARALLEL_MIN_BYTES or len(entries) < 2:
        return [read_and_parse(e, known, source) for e in entries]
    with ProcessPoolExecutor(
        max_workers=count, initializer=_init_worker, initargs=(known, source)
    ) as pool:
        chunk = max(1, len(entries) // (count * 8))
        return list(pool.map(_worker, entries, chunksize=chunk))


_WORKER: dict[str, Any] = {}


def _init_worker(known: frozenset[str], source: str | None) -> None:
    _WORKER["known"], _WORKER["source"] = known, source


def _worker(entry: LogEntry) -> _Parsed:
    return read_and_parse(entry, _WORKER["known"], _WORKER["source"])


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def read_and_parse(
    entry: LogEntry, known: frozenset[str] = frozenset(), source: str | None = None
) -> _Parsed:
    """Read one log; skip it if its sha256 is already stored, else parse it."""
    try:
        data = entry.path.read_bytes()
    except OSError as exc:
        issue = IssueRow(
            entry.rel_path, None, "error", "unreadable", f"cannot read: {exc.strerror}"
        )
        return _Parsed(issues=[issue])
    digest = hashlib.sha256(data).hexdigest()
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
    columns = {
        "run_id": [run_id] * len(events),
        "seq": list(range(len(events))),
        "line": events.lines,
        "time_unix_s": events.time_s,
        "key": events.keys,
        "value_text": events.values,
        "metadata_json": events.metadata,
    }
    table = load("events").table_from_columns(columns)
    return _Parsed(run, table, evals, issues, system)


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
    desc_doc, desc_sha, desc_issues, described = _describe(entry.description)
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
        "description_json": _json(desc_doc),
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


def _describe(path: Path | None) -> tuple[Any, str | None, list[Issue], dict[str, Any]]:
    """A system description read once per ingest, however many logs share it."""
    if path is None:
        return None, None, [], {}
    try:
        stamp = path.stat()
        key = (str(path), stamp.st_mtime_ns, stamp.st_size)
    except OSError:
        key = (str(path), 0, 0)
    return _describe_cached(key)


@lru_cache(maxsize=4096)
def _describe_cached(key: tuple[str, int, int]) -> tuple[Any, str | None, list[Issue], dict]:
    doc, digest, issues = read_description(Path(key[0]))
    return doc, digest, issues, system_row(doc)


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
    base = entry.path
    for _ in entry.rel_path.split("/"):
        base = base.parent
    try:
        return Path(os.path.abspath(path)).relative_to(base).as_posix()
    except ValueError:
        return path.name


def _json(doc: dict[str, Any] | None) -> str | None:
    import json

    return json.dumps(doc, sort_keys=True) if doc is not None else None


def _events_table(parts: list[pa.Table | None]) -> pa.Table:
    tables = [p for p in parts if p is not None]
    if not tables:
        return load("events").empty()
    return pa.concat_tables(tables)
