"""One log as rows of the store: its run and system rows, evals, telemetry and problems."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa

from collector.ingest.files import LargeFile, Refused, read_file, read_log
from collector.ingest.init_time import init_seconds
from collector.ingest.launch import NOT_LAUNCHED, Launched, counted, launched
from collector.ingest.rcp import scaling_factor
from collector.ingest.rounds import agrees, signature, target
from collector.ingest.scan import Events, Issue, scan
from collector.ingest.summary import RunSummary, summarize, with_target
from collector.ingest.systems import (
    MAX_COUNT,
    canonical,
    classify_interconnect,
    read_description,
    reconcile,
    system_row,
)
from collector.ingest.telemetry import read_telemetry
from collector.ingest.throughput import samples_per_epoch, throughput_per
from collector.ingest.trees import LogEntry, benchmark_name, printable
from collector.ingest.values import wall_clock

# what parsing a file can raise where no rule foresaw its content; caught per file
PARSER_ERRORS = (
    ArithmeticError,  # OverflowError, ZeroDivisionError
    AttributeError,
    IndexError,
    KeyError,
    MemoryError,
    RecursionError,
    TypeError,
    ValueError,  # UnicodeError, json's errors
    pa.ArrowException,
)


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
class Parsed:
    """One log read and parsed: its rows, its problems, and whether it was stored already."""

    run: dict[str, Any] | None = None
    events: Events | None = None  # until the batch table holds them
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # evals, telemetry
    issues: list[IssueRow] = field(default_factory=list)
    system: dict[str, Any] | None = None
    digest: str | None = None
    size: int = 0
    unchanged: bool = False
    counts: dict[str, int] = field(default_factory=dict)  # rows in the batch tables, once there


def read_and_parse(
    entry: LogEntry, known: Collection[str] = (), source: str | None = None
) -> Parsed:
    """Read one log; skip it if its sha256 is stored at its path already (`known`), else
    parse it. Whatever the file holds, its problems are issues naming it: one bad file never
    stops the others."""
    try:
        data, digest = read_entry(entry)
    except Refused as exc:
        return Parsed(issues=[IssueRow(entry.rel_path, None, "error", exc.code, exc.message)])
    if digest in known:
        return Parsed(digest=digest, size=len(data), unchanged=True)
    try:
        parsed = parse_log(entry, data, digest, source)
    except Refused as exc:  # a large log that changed between its reads
        parsed = Parsed(issues=[IssueRow(entry.rel_path, None, "error", exc.code, exc.message)])
    except PARSER_ERRORS as exc:  # a case no rule foresaw: the file is one issue
        why = f"cannot be parsed ({type(exc).__name__}: {str(exc)[:120]})"
        parsed = Parsed(issues=[IssueRow(entry.rel_path, None, "error", "unparsable", why, digest)])
    parsed.digest, parsed.size = digest, len(data)
    return parsed


def read_entry(entry: LogEntry) -> tuple[bytes | LargeFile, str]:
    """A log's bytes (a log named alone is read wherever it leads) and their sha256; Refused
    as read_log refuses it."""
    data = read_log(entry.path, None if entry.named else entry.root)
    return data, data.sha256() if isinstance(data, LargeFile) else hashlib.sha256(data).hexdigest()


def identify(
    entry: LogEntry, events: Events, s: RunSummary, digest: str, source: str | None = None
) -> tuple[dict[str, Any], Issue | None]:
    """What a run is, as ingest stores it and `collector check` names it, from its place in
    the tree and what its log says: the run row's run_id, source (its kind of evidence, which
    `source` forces), round and round_source, submitter, system, benchmark and run index; and
    an issue where the log's own round disagrees with a stated one, or is none."""
    kind = source or source_of(entry, events, s)
    name = entry.benchmark or events.benchmark or s.submission.get("benchmark") or "unknown"
    benchmark = benchmark_name(name)
    round_, round_source, issue = _round(entry, events, s, benchmark)
    submitter = entry.submitter or s.submission.get("org") or "unknown"
    system = entry.system or s.submission.get("platform") or printable(entry.path.parent.name)
    place = (round_, submitter, system, benchmark, entry.run) if kind == "official" else None
    who = {
        "run_id": run_id(digest, place),
        "source": kind,
        "round": round_,
        "round_source": round_source,
        "submitter": submitter,
        "system": system,
        "benchmark": benchmark,
        "run": entry.run,
    }
    return who, issue


def run_id(digest: str, place: tuple[str | int, ...] | None = None, path: str = "") -> str:
    """A run's id: the first 16 hex digits of its log's sha256 (`digest`); for an official
    run, of the sha256 of its `place` (round, submitter, system, benchmark, run index) and that
    digest, as one log can be a result of two rounds (submitted again in the next) or of two
    systems of one submitter; for a log whose bytes are stored already at another path, of
    that digest and its own `path`."""
    if place is not None:
        where = "/".join(str(part) for part in place)
        return hashlib.sha256(f"{where}:{digest}".encode()).hexdigest()[:16]
    if path:
        return hashlib.sha256(f"{digest}\0{path}".encode()).hexdigest()[:16]
    return digest[:16]


def parse_log(
    entry: LogEntry, data: bytes | LargeFile, digest: str, source: str | None = None
) -> Parsed:
    """Parse one log's bytes into its run row, events, evals, system row and issues."""
    events = scan(data)
    # a result file of a benchmark folder without MLPerf lines is a run that never finished
    summary = summarize(events) if events.fmt is not None else RunSummary()
    issues = [_issue_row(entry.rel_path, digest, i) for i in events.issues]
    if not len(events) and entry.benchmark is None:
        return Parsed(issues=issues)
    log = launched(data if isinstance(data, bytes) else None, events)
    run, system = _run_row(entry, events, summary, digest, len(data), source, issues, log)
    run_id = run["run_id"]
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
    run["init_s"] = init_seconds(events)
    run["rcp_scaling_factor"], problem = scaling_factor(entry.path.parent, entry.root)
    if problem:
        rel = _sibling(entry.rel_path, "scaling.json")
        issues.append(IssueRow(rel, None, "warning", "bad-scaling", problem, digest))
    return Parsed(run, events, {"evals": evals, "telemetry": telemetry}, issues, system)


def _telemetry(entry: LogEntry, run_id: str, issues: list[IssueRow]) -> list[dict[str, Any]]:
    """The rows of the telemetry file beside the log, if the tree walk found one; its problems
    are added to `issues` under the telemetry file's path."""
    path = entry.telemetry
    if path is None:
        return []
    rel = _sibling(entry.rel_path, path.name)
    try:
        data = read_file(path, "telemetry", entry.root)
    except Refused as exc:
        if exc.code != "missing":
            issues.append(IssueRow(rel, None, "warning", exc.code, exc.message))
        return []
    rows, problems = read_telemetry(data, run_id)
    sha = hashlib.sha256(data).hexdigest()
    issues.extend(_issue_row(rel, sha, i) for i in problems)
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
    size: int,
    source: str | None,
    issues: list[IssueRow],
    log: Launched,
) -> tuple[dict[str, Any], dict[str, Any]]:
    local = _checked_local(s.local, entry.rel_path, digest, issues)
    who, problem = identify(entry, events, s, digest, source)
    if problem is not None:
        issues.append(_issue_row(entry.rel_path, digest, problem))
    stated = target(who["round"], who["benchmark"])
    if s.quality_target is None and s.stop_status is None and stated is not None:
        s = with_target(s, stated)
    system_id = f"{who['round']}/{who['submitter']}/{who['system']}"
    desc_json, desc_sha, desc_issues, described = _describe(
        entry.description, entry.system_folder, entry.root
    )
    desc_path = _rel(entry, entry.description)
    system_row_ = {
        "system_id": system_id,
        "source": who["source"],
        "round": who["round"],
        "submitter": who["submitter"],
        "system": who["system"],
        "interconnect_inferred": False,
        **described,
        "division": _division(described.get("division") or s.submission.get("division")),
        "description_path": desc_path,
        "description_sha256": desc_sha,
        "description_json": desc_json,
        "_issues": [_issue_row(desc_path or entry.rel_path, desc_sha, i) for i in desc_issues],
    }
    # a local run states its own counts; an official one's come from what its log launched
    used, problem = counted(described, NOT_LAUNCHED if local else log)
    if problem is not None:
        issues.append(_issue_row(entry.rel_path, digest, problem))
    accelerators = _first_int(local.get("accelerators"), used["accelerators"])
    samples = samples_per_epoch(who["round"], who["benchmark"])
    per = throughput_per(s.throughput_samples_per_s, s.epoch_s, samples, accelerators)
    throughput = s.throughput_samples_per_s
    if per == "accelerator" and throughput is not None and accelerators:
        throughput *= accelerators  # stored as the whole run's
    interconnect = described.get("interconnect")
    if local.get("interconnect") == "no-p2p":
        interconnect = "no-p2p"
    elif local and interconnect is None:
        interconnect = classify_interconnect(None, local.get("accelerator"), None, None)[0]
    run = {
        **who,
        "division": system_row_["division"],
        "system_id": system_id,
        "status": s.status,
        "run_start_unix_s": s.run_start_s,
        "run_stop_unix_s": s.run_stop_s,
        "time_to_train_s": s.time_to_train_s,
        "quality_target": s.quality_target,
        "quality_best": s.quality_best,
        "epochs": s.epochs,
        "throughput_samples_per_s": throughput,
        "throughput_per": per,
        "accelerator": local.get("accelerator") or described.get("accelerator"),
        **_model(local.get("accelerator"), described),
        "accelerators": accelerators,
        "nodes": _first_int(local.get("nodes"), used["nodes"]),
        "framework": local.get("framework") or described.get("framework"),
        "precision": local.get("precision"),
        "interconnect": interconnect,
        "scale": local.get("scale"),
        "log_format": events.fmt.name if events.fmt else "none",
        "log_path": entry.rel_path,
        "log_sha256": digest,
        "log_bytes": size,
        "events": len(events),
    }
    return run, system_row_


_LOCAL_TEXT = ("accelerator", "framework", "precision", "interconnect", "scale", "suite")
_LOCAL_COUNTS = {"accelerators": 0, "nodes": 1}  # the least each may be (CPU runs: 0)


def _checked_local(
    local: dict[str, Any] | None, rel: str, digest: str, issues: list[IssueRow]
) -> dict[str, Any]:
    """The `collector_run` fields a run row reads, each of its column's kind: text, or a whole
    number up to MAX_COUNT. Any other value is left out, with an issue (never read as 0 or 1)."""
    out = dict(local or {})
    for key in (*_LOCAL_TEXT, *_LOCAL_COUNTS):
        value = out.get(key)
        if key in _LOCAL_TEXT:
            kind, ok = "text", isinstance(value, str)
        else:
            whole = isinstance(value, int) and not isinstance(value, bool)
            kind, ok = "a count", whole and _LOCAL_COUNTS[key] <= value <= MAX_COUNT
        if value is not None and not ok:
            why = f"collector_run {key} {repr(value)[:40]} is not {kind}; left empty"
            issues.append(IssueRow(rel, None, "warning", "bad-value", why, digest))
            out[key] = None
    return out


def _round(
    entry: LogEntry, events: Events, s: RunSummary, benchmark: str
) -> tuple[str, str, Issue | None]:
    """The run's round, what gave it (option, repository, suite, signature), and an issue
    when the log's own signature disagrees with a stated round or names none."""
    fmt = events.fmt.name if events.fmt else None
    if entry.round:
        if agrees(entry.round, fmt, benchmark, s.run_start_s):
            return entry.round, entry.round_source, None
        found = signature(fmt, benchmark, s.run_start_s) or "no official round"
        why = (
            f"round {entry.round} (from the {entry.round_source}) does not fit "
            f"the log ({fmt}, {benchmark}, run_start {_date(s.run_start_s)}): it looks like "
            f"{found}"
        )
        return entry.round, entry.round_source, Issue("warning", "round", why)
    suite = (s.local or {}).get("suite")
    if suite:
        return str(suite), "suite", None
    found = signature(fmt, benchmark, s.run_start_s)
    if found is not None:
        return found, "signature", None
    if source_of(entry, events, s) == "local":
        return "unknown", "none", None
    why = f"no round: neither folder, --round nor the log ({fmt}, {benchmark}) tells"
    return "unknown", "none", Issue("warning", "round", why)


def _date(time_s: float | None) -> str:
    if not wall_clock(time_s):
        return "unknown"
    return dt.datetime.fromtimestamp(time_s, dt.UTC).date().isoformat()


def _division(text: str | None) -> str | None:
    """closed | open as MLPerf spells them (descriptions write `Closed` too)."""
    return text.strip().lower() if isinstance(text, str) and text.strip() else None


def _describe(
    path: Path | None, folder: str | None, root: str | None
) -> tuple[str | None, str | None, list[Issue], dict[str, Any]]:
    """A system description (as JSON text) read once, however many logs share it, its
    accelerators mapped onto the canonical table (the system's folder name helps)."""
    if path is None:
        return _described((None, 0, 0), folder, root)
    try:
        stamp = path.stat()
        key = (str(path), stamp.st_mtime_ns, stamp.st_size)
    except OSError:
        key = (str(path), 0, 0)
    return _described(key, folder, root)


@lru_cache(maxsize=4096)
def _described(
    key: tuple[str | None, int, int], folder: str | None, root: str | None
) -> tuple[str | None, str | None, list[Issue], dict]:
    if key[0] is None:
        doc, digest, issues = None, None, []
    else:
        doc, digest, issues = read_description(Path(key[0]), root)
    text = json.dumps(doc, sort_keys=True) if doc is not None else None
    row, problems = reconcile(system_row(doc, issues), folder)
    return text, digest, issues + problems, row


def _model(local_name: str | None, described: dict[str, Any]) -> dict[str, str | None]:
    """The canonical accelerator model and vendor of a run."""
    model = canonical(local_name) if local_name else None
    if model is not None:
        return {"accelerator_model": model.key, "accelerator_vendor": model.vendor}
    return {
        "accelerator_model": described.get("accelerator_model"),
        "accelerator_vendor": described.get("accelerator_vendor"),
    }


def source_of(entry: LogEntry, events: Events, s: RunSummary) -> str:
    """official | local: what kind of evidence a log is, when the caller does not say."""
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
    """`path` relative to the folder that the log's rel_path is relative to (else its name)."""
    if path is None:
        return None
    base, absolute = str(entry.path)[: -len(entry.rel_path)], os.path.abspath(path)
    return absolute[len(base) :] if absolute.startswith(base) else path.name
