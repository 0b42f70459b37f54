"""Compliance verdicts per run: mlperf-logging's checker where it applies, our rules elsewhere."""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from collector import store as stores
from collector.ingest import data
from collector.ingest.files import LargeFile, Refused
from collector.ingest.parallel import map_batches, usable_cpus
from collector.ingest.rows import PARSER_ERRORS, identify, read_entry, run_id
from collector.ingest.scan import scan
from collector.ingest.summary import summarize
from collector.ingest.trees import LogEntry, Skipped, find_logs
from collector.store.schemas import load
from collector.store.snapshot import merge


@dataclass(frozen=True)
class Verdict:
    """The compliance verdict on one log."""

    run_id: str
    log_path: str
    ruleset: str
    verdict: str  # pass | fail
    first_failure: str | None

    def __str__(self) -> str:
        tail = f": {self.first_failure}" if self.first_failure else ""
        return f"{self.verdict.upper()} {self.log_path} [{self.ruleset}]{tail}"


def rules() -> dict[str, Any]:
    """collector/ingest/check_rules.yml."""
    return data("check_rules.yml")


def check(
    paths: list[str | Path],
    store: str | Path | None = None,
    save: bool = True,
    wait_s: float = stores.WAIT_S,
    on_wait: Callable[[str], None] | None = None,
    skipped: list[Skipped] | None = None,
    round_: str | None = None,
) -> list[Verdict]:
    """Check every log under `paths`; store the verdicts in the compliance table, under the
    store's writer lock (waiting up to `wait_s` seconds for another writer, telling
    `on_wait`). The ruleset is the round's: `round_`, else the repository folder's, else the
    log's own. Paths that are not files or folders (FIFOs, devices, broken links) are added
    to `skipped`."""
    entries = find_logs([Path(p) for p in paths], skipped, round_)
    # the checker reads ~10 MB/s: a large tree's logs are checked on every CPU
    verdicts = map_batches(
        check_log, entries, (), min(usable_cpus(), 8) if len(entries) > 64 else 1
    )
    if save and verdicts:
        store_path = stores.resolve(store, writing=True)
        with stores.writing(store_path, wait_s, on_wait):
            snap = stores.read(store_path)
            new = load("compliance").table_from_rows([vars(v) for v in verdicts])
            snap.tables["compliance"] = merge("compliance", snap.tables["compliance"], new)
            stores.write(store_path, stores.Snapshot(snap.tables))
    return verdicts


def check_log(entry: LogEntry) -> Verdict:
    """The verdict on one log."""
    try:
        data, digest = read_entry(entry)
        return _verdict(entry, data, digest)
    except Refused as exc:
        return Verdict("", entry.rel_path, "collector", "fail", exc.message)
    except PARSER_ERRORS as exc:  # a case no rule foresaw: this log fails, the others go on
        why = f"cannot be parsed ({type(exc).__name__}: {str(exc)[:120]})"
        return Verdict(run_id(digest), entry.rel_path, "collector", "fail", why)


def _verdict(entry: LogEntry, data: bytes | LargeFile, digest: str) -> Verdict:
    events = scan(data)
    if events.fmt is None:
        first = events.issues[0].message  # the scan says why it found no format
        return Verdict(run_id(digest), entry.rel_path, "collector", "fail", first)
    summary = summarize(events)
    who, _ = identify(entry, events, summary, digest)  # the run as ingest stores it
    ruleset = _mlperf_ruleset(
        events.fmt.name, who["round"], summary.local is not None, who["benchmark"]
    )
    if (summary.local or {}).get("scale") == "throughput":
        # timed training steps, no evaluation: not a run to a target that MLPerf rules judge
        failure = _own_rules(events, rules()["throughput"])
        name = "collector throughput"
    elif ruleset is not None and (isinstance(data, LargeFile) or len(data) > CHECKER_MAX_BYTES):
        failure = _own_rules(events, rules())
        limit = CHECKER_MAX_BYTES >> 20
        name = f"collector {events.fmt.name} (over {limit} MiB: not mlperf-logging's)"
    elif ruleset is not None:
        report = mlperf_check(entry.path, ruleset, data)
        failure = report.failures[0].strip().splitlines()[0] if report.failures else None
        name = f"mlperf-logging training {ruleset}"
        if summary.local is not None:
            name += " + collector local rules"
    else:
        failure = _own_rules(events, rules())
        name = f"collector {events.fmt.name}"
    return Verdict(who["run_id"], entry.rel_path, name, "fail" if failure else "pass", failure)


def _mlperf_ruleset(fmt: str, round_: str | None, local: bool, benchmark: str | None) -> str | None:
    if fmt != "mllog":
        return None
    r = rules()
    ruleset = r["local_ruleset"] if local else r["mlperf_logging_rulesets"].get(round_ or "")
    if ruleset is None or benchmark not in _ruleset_benchmarks(ruleset):
        return None
    return ruleset


@cache
def _ruleset_benchmarks(ruleset: str) -> frozenset[str]:
    from mlperf_logging import compliance_checker

    folder = Path(compliance_checker.__file__).parent / f"training_{ruleset}"
    names = [p.stem.removeprefix("closed_") for p in folder.glob("closed_*.yaml")]
    return frozenset(n for n in names if n != "common")


LOCAL_RULES = Path(__file__).resolve().parent / "local_common.yaml"
# mlperf-logging's checker holds every line of a log as objects, about ten times the log's
# size: a larger log gets collector's own rules, which read it in about twice its size
CHECKER_MAX_BYTES = 32 << 20


@dataclass
class ComplianceReport:
    """The mlperf-logging checker's verdict on one log."""

    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the checker reported no failure."""
        return not self.failures


def mlperf_check(path: Path, ruleset: str, data: bytes | None = None) -> ComplianceReport:
    """Run mlperf-logging's training rules of `ruleset` on one log (its bytes `data`, read
    already, else the file at `path`), quietly.

    The checker loads a follow-up rule file chosen by the log's division; for collector's
    `local` division that file is `collector/ingest/local_common.yaml` (see its header), which
    re-checks the values local runs log differently and adds the collector keys.
    """
    from mlperf_logging.compliance_checker import mlp_compliance, mlp_parser

    report = ComplianceReport()
    checker = mlp_compliance.make_checker("training", ruleset, True, False)
    rules_dir = Path(mlp_compliance.__file__).parent
    queue = mlp_compliance.enqueued_configs
    queue.clear()
    previous = logging.root.level
    logging.root.setLevel(logging.CRITICAL)  # the checker logs progress at INFO
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            if data is None:
                loglines, errors = mlp_parser.parse_file(os.fspath(path), ruleset=ruleset)
            else:  # as parse_file reads a file, from the bytes checked and read once
                parser = importlib.import_module(
                    f"{mlp_parser.__name__}.ruleset_{ruleset.replace('.', '')}"
                )
                lines = io.StringIO(data.decode("latin-1"), newline=None)
                loglines, errors = parser.parse_generator(lines)
            report.failures += [f"parse error: {err} in {line!r}" for line, err in errors]
            if not loglines:
                report.failures.append("no log lines")
                return report
            queue.append(f"training_{ruleset}/common.yaml")
            while queue:
                config = queue.pop(0)
                if config.startswith(f"training_{ruleset}/local_"):
                    config = str(LOCAL_RULES)
                checker.configured_checks(loglines, str(rules_dir / config))
    except Exception as exc:  # the checker raises its own errors and plain ones alike
        text = str(exc).strip()
        report.failures.append(f"checker stopped: {text.splitlines()[0] if text else repr(exc)}")
        return report
    finally:
        logging.root.setLevel(previous)
        queue.clear()
    report.failures += list(checker.overwritable.values())
    report.failures += checker.not_overwritable
    return report


def _own_rules(events: Any, r: dict[str, Any]) -> str | None:
    counts: dict[str, int] = {}
    for key in events.keys:
        counts[key] = counts.get(key, 0) + 1
    for key in r["exactly_one"]:
        if counts.get(key, 0) != 1:
            return f"{key} logged {counts.get(key, 0)} times, expected exactly once"
    for key in r["at_least_one"]:
        if not counts.get(key):
            return f"{key} never logged"
    for group in r["required_any"]:
        if not any(counts.get(k) for k in group):
            return f"none of {', '.join(group)} logged"
    start = events.keys.index("run_start")
    stop = events.keys.index("run_stop")
    if events.time_s[stop] < events.time_s[start]:
        return "run_stop precedes run_start"
    errors = [i for i in events.issues if i.severity == "error"]
    return errors[0].message if errors else None
