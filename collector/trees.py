"""Find result logs and their system descriptions in published MLPerf trees and folders.

Layouts understood:
  v0.5    <org>/<submission>/results/<system>/<benchmark>/result_N.txt, <system>/entry.json
  v0.6+   <org>/results/<system>/<benchmark>/result_N.txt, <org>/systems/<system>.json
  plain   any file, or any folder of *.txt / *.log files
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from collector.errors import InputError

_RUN_INDEX = re.compile(r"(\d+)$")
_ROUND = re.compile(r"(?:^|[_-])v(\d+\.\d+)(?:\.\d+)?$")
LOG_SUFFIXES = (".txt", ".log")


@dataclass(frozen=True)
class LogEntry:
    """A log file and what its place in a tree says about it."""

    path: Path
    rel_path: str  # relative to the parent of the path given to ingest
    layout: str  # v0.5 | v0.6+ | plain
    round: str | None
    submitter: str | None
    system: str | None
    system_folder: str | None
    benchmark: str | None
    run: int
    description: Path | None  # the system description file, if one exists


def find_logs(paths: list[Path]) -> list[LogEntry]:
    """All logs under the given files and folders, sorted by relative path."""
    entries: dict[Path, LogEntry] = {}
    for given in paths:
        if not given.exists():
            raise InputError(f"{given}: no such file or folder")
        given = Path(os.path.abspath(given))  # lexical: no file-system round trips per log
        base = given.parent
        files = [given] if given.is_file() else _walk(given)
        for path in files:
            entries.setdefault(path, describe(path, base))
    return sorted(entries.values(), key=lambda e: e.rel_path)


def _walk(folder: Path) -> list[Path]:
    """Result logs, *.log files, and other *.txt files that carry an MLPerf marker."""
    found = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix not in LOG_SUFFIXES:
            continue
        if path.name.startswith("result_") or path.suffix == ".log" or _has_marker(path):
            found.append(path)
    return found


def _has_marker(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return b":::ML" in handle.read(1 << 16)
    except OSError:
        return True  # let ingest report the read error


def describe(path: Path, base: Path) -> LogEntry:
    """What the location of one log says: layout, round, submitter, system, benchmark, run."""
    resolved = Path(os.path.abspath(path))
    try:
        rel = resolved.relative_to(base).as_posix()
    except ValueError:
        rel = path.name
    match = _RUN_INDEX.search(path.stem)
    run = int(match.group(1)) if match else 0
    bench_dir = resolved.parent
    system_dir = bench_dir.parent
    results_dir = system_dir.parent
    round_ = _round_of(resolved)
    if results_dir.name == "results":
        container = results_dir.parent
        entry_json = system_dir / "entry.json"
        if entry_json.exists() or (container / "submission.json").exists():
            org_dir = container.parent
            system = system_dir.name
            if system in _reused_system_names(org_dir):
                system = f"{container.name}/{system}"
            return LogEntry(
                resolved,
                rel,
                "v0.5",
                round_ or "v0.5",
                org_dir.name,
                system,
                f"{container.name}/{system_dir.name}",
                bench_dir.name,
                run,
                entry_json if entry_json.exists() else None,
            )
        description = container / "systems" / f"{system_dir.name}.json"
        return LogEntry(
            resolved,
            rel,
            "v0.6+",
            round_,
            container.name,
            system_dir.name,
            system_dir.name,
            bench_dir.name,
            run,
            description if description.exists() else None,
        )
    return LogEntry(resolved, rel, "plain", round_, None, None, None, None, run, None)


def _round_of(path: Path) -> str | None:
    for part in reversed(path.parts[:-1]):
        match = _ROUND.search(part)
        if match:
            return f"v{match.group(1)}"
    return None


@cache
def _reused_system_names(org_dir: Path) -> frozenset[str]:
    """System folder names used by more than one submission of one v0.5 submitter."""
    seen: dict[str, int] = {}
    for system_dir in org_dir.glob("*/results/*"):
        if system_dir.is_dir():
            seen[system_dir.name] = seen.get(system_dir.name, 0) + 1
    return frozenset(name for name, count in seen.items() if count > 1)
