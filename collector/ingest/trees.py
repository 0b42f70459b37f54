"""Find result logs and their system descriptions in published MLPerf trees and folders.

Layouts understood:
  v0.5    <org>/<submission>/results/<system>/<benchmark>/result_N.txt, <system>/entry.json
  v0.6+   <org>/results/<system>/<benchmark>/result_N.txt, <org>/systems/<system>.json
  plain   any file, or any folder of *.txt / *.log files
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from collector.errors import InputError
from collector.ingest.telemetry import telemetry_path

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
    telemetry: Path | None = None  # the samples taken during the run, if they were kept


@dataclass(frozen=True)
class Skipped:
    """A path that is neither a file to read nor a folder to walk (a FIFO, device, socket,
    broken or looping link, or a folder that cannot be listed)."""

    rel_path: str
    code: str
    message: str
    given: bool  # named by the caller, not found in a folder


def find_logs(paths: list[Path], skipped: list[Skipped] | None = None) -> list[LogEntry]:
    """All logs under the given files and folders, sorted by relative path.

    Paths that cannot be read as a file or walked as a folder are never opened: each is
    added to `skipped` (when given) and left out."""
    entries: dict[str, LogEntry] = {}
    seen = _Folders()
    odd = skipped if skipped is not None else []
    for given in paths:
        if not os.path.lexists(given):
            raise InputError(f"{given}: no such file or folder")
        kind = _kind(str(given))
        if kind not in ("file", "folder"):
            odd.append(Skipped(str(given), kind, f"{_WHY[kind]}: skipped", given=True))
            continue
        given = Path(os.path.abspath(given))  # lexical: no file-system round trips per log
        base = given.parent
        files = [str(given)] if kind == "file" else _walk(given, str(base), odd)
        for path in files:
            if path not in entries:
                entries[path] = describe(path, base, seen)
    return sorted(entries.values(), key=lambda e: e.rel_path)


_WHY = {
    "special-file": "not a regular file (a FIFO, device or socket)",
    "dangling-link": "a symbolic link to nothing",
    "link-loop": "a symbolic link that loops",
    "unreadable": "cannot be read",
}


def _kind(path: str) -> str:
    """file | folder, or why the path is neither: a code of _WHY."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "link-loop"
        if exc.errno == errno.ENOENT and os.path.islink(path):
            return "dangling-link"
        return "unreadable"
    if stat.S_ISDIR(mode):
        return "folder"
    return "file" if stat.S_ISREG(mode) else "special-file"


def _walk(folder: Path, base: str, odd: list[Skipped]) -> list[str]:
    """Result logs, *.log files, and other *.txt files that carry an MLPerf marker."""
    found = []
    files = _files(str(folder), base, odd)
    for path in sorted(files, key=lambda p: p.split(os.sep)):  # as Path sorts
        name = os.path.basename(path)
        if name.startswith("result_") or _suffix(name) == ".log" or _has_marker(path):
            found.append(path)
    return found


def _files(folder: str, base: str, odd: list[Skipped]) -> Iterator[str]:
    """Files (or links to files) with a log suffix, in folders that are not links; entries
    that are neither files nor folders go to `odd`."""
    stack = [folder]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as listing:
                children = list(listing)
        except OSError as exc:
            rel = _relative(top, base) or top
            odd.append(Skipped(rel, "unreadable", f"cannot list folder: {exc.strerror}", False))
            continue
        for child in children:
            if _is(child.is_dir) and not child.is_symlink():
                stack.append(child.path)
            elif _is(child.is_file):
                if _suffix(child.name) in LOG_SUFFIXES:
                    yield child.path
            elif not _is(child.is_dir):  # not a link to a folder either
                kind = _kind(child.path)
                if kind not in ("file", "folder"):
                    rel = _relative(child.path, base) or child.path
                    odd.append(Skipped(rel, kind, f"{_WHY[kind]}: skipped", given=False))


def _is(test: Callable[[], bool]) -> bool:
    try:
        return test()
    except OSError:
        return False


def _suffix(name: str) -> str:
    """The suffix as pathlib defines it (none for a leading or trailing dot)."""
    i = name.rfind(".")
    return name[i:] if 0 < i < len(name) - 1 else ""


def _has_marker(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return b":::ML" in handle.read(1 << 16)
    except OSError:
        return True  # let ingest report the read error


class _Folders:
    """What one walk learns about folders (names, files present), asked once per folder."""

    def __init__(self) -> None:
        self.exists = lru_cache(maxsize=None)(lambda path: Path(path).exists())
        self.names = lru_cache(maxsize=None)(_names_in)
        self.round_of = lru_cache(maxsize=None)(_round_of)
        self.reused = lru_cache(maxsize=None)(lambda org: _reused_system_names(Path(org)))


def describe(path: str | Path, base: Path, seen: _Folders | None = None) -> LogEntry:
    """What the location of one log says: layout, round, submitter, system, benchmark, run."""
    seen = seen or _Folders()
    resolved = os.path.abspath(path)  # string operations: this runs once per log
    rel = _relative(resolved, str(base)) or os.path.basename(path)
    name = os.path.basename(resolved)
    match = _RUN_INDEX.search(name[: -len(_suffix(name))] if _suffix(name) else name)  # stem
    run = int(match.group(1)) if match else 0
    bench_dir = os.path.dirname(resolved)
    beside = telemetry_path(Path(resolved))
    telemetry = beside if beside.name in seen.names(bench_dir) else None
    system_dir = os.path.dirname(bench_dir)
    results_dir = os.path.dirname(system_dir)
    round_ = seen.round_of(bench_dir)
    bench, system = os.path.basename(bench_dir), os.path.basename(system_dir)
    if os.path.basename(results_dir) == "results":
        container = os.path.dirname(results_dir)
        entry_json = os.path.join(system_dir, "entry.json")
        if seen.exists(entry_json) or seen.exists(os.path.join(container, "submission.json")):
            org_dir = os.path.dirname(container)
            submission = os.path.basename(container)
            named = f"{submission}/{system}" if system in seen.reused(org_dir) else system
            return LogEntry(
                Path(resolved),
                rel,
                "v0.5",
                round_ or "v0.5",
                os.path.basename(org_dir),
                named,
                f"{submission}/{system}",
                bench,
                run,
                Path(entry_json) if seen.exists(entry_json) else None,
                telemetry,
            )
        description = os.path.join(container, "systems", f"{system}.json")
        return LogEntry(
            Path(resolved),
            rel,
            "v0.6+",
            round_,
            os.path.basename(container),
            system,
            system,
            bench,
            run,
            Path(description) if seen.exists(description) else None,
            telemetry,
        )
    return LogEntry(
        Path(resolved), rel, "plain", round_, None, None, None, None, run, None, telemetry
    )


def _names_in(folder: str) -> frozenset[str]:
    """The names in a folder (none if it cannot be listed)."""
    try:
        return frozenset(os.listdir(folder))
    except OSError:
        return frozenset()


def _relative(path: str, base: str) -> str | None:
    """`path` relative to the folder `base`, both absolute and normal; None if not under it."""
    prefix = base if base.endswith(os.sep) else base + os.sep
    return path[len(prefix) :] if path.startswith(prefix) else None


def _round_of(folder: str) -> str | None:
    """The round named by the nearest folder, from `folder` up, that names one."""
    for part in reversed(folder.split(os.sep)):
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
