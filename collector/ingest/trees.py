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
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path

from collector.errors import InputError
from collector.ingest import data
from collector.ingest.files import Refused, open_inside
from collector.ingest.telemetry import telemetry_path

_RUN_INDEX = re.compile(r"(\d+)$")
# training_results_vX.Y, or v0.5's v0.5.0 inside it (its results sit there)
_ROUND_FOLDER = re.compile(r"^(?:training_results_v(\d+\.\d+)|v(\d+\.\d+)\.\d+)$")
LOG_SUFFIXES = (".txt", ".log")


@dataclass(frozen=True)
class LogEntry:
    """A log file and what its place in a tree says about it."""

    path: Path
    rel_path: str  # relative to the parent of the path given to ingest
    layout: str  # v0.5 | v0.6+ | plain
    round: str | None
    submitter: str | None = None
    system: str | None = None
    system_folder: str | None = None
    benchmark: str | None = None
    run: int = 0
    description: Path | None = None  # the system description file, if one exists
    telemetry: Path | None = None  # the samples taken during the run, if they were kept
    round_source: str | None = None  # option | repository: what gave `round`, if anything
    root: str | None = None  # the resolved folder every file read for this log must lie in
    named: bool = False  # the log itself was named by the caller (read wherever it leads)


@dataclass(frozen=True)
class Skipped:
    """A path that is neither a file to read nor a folder to walk (a FIFO, device, socket,
    broken or looping link, or a folder that cannot be listed)."""

    rel_path: str
    code: str
    message: str
    given: bool  # named by the caller, not found in a folder


def find_logs(
    paths: list[Path], skipped: list[Skipped] | None = None, round_: str | None = None
) -> list[LogEntry]:
    """All logs under the given files and folders, sorted by relative path; in an MLPerf
    result tree, only the runs of its results layout. `round_` states the round of all.

    Paths that cannot be read as a file or walked as a folder are never opened: each is
    added to `skipped` (when given) and left out."""
    entries: dict[str, LogEntry | None] = {}
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
        root = os.path.realpath(given) if kind == "folder" else None
        files = [str(given)] if kind == "file" else _walk(given, str(base), odd, root)
        for path in files:
            if path not in entries:
                entries[path] = describe(path, base, seen, round_, root)
    return sorted((e for e in entries.values() if e is not None), key=lambda e: e.rel_path)


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


def _walk(folder: Path, base: str, odd: list[Skipped], root: str) -> list[str]:
    """Result logs, *.log files, and other *.txt files that carry an MLPerf marker."""
    files = sorted(_files(str(folder), base, odd), key=lambda p: p.split(os.sep))  # as Path sorts
    return [path for path in files if _maybe_log(path, root)]


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
                if child.name.endswith(LOG_SUFFIXES):
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


def _maybe_log(path: str, root: str) -> bool:
    """Whether a file found may be a log: result_* and *.log files are; in a result repository
    no other *.txt file is (its other files need not be read), elsewhere any with a marker."""
    if os.path.basename(path).startswith("result_") or path.endswith(".log"):
        return True
    return _repository_root(path.split(os.sep)) is None and _has_marker(path, root)


def _has_marker(path: str, root: str) -> bool:
    try:
        with open_inside(path, root) as handle:
            if stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return b":::ML" in handle.read(1 << 16)
    except Refused:
        pass
    return True  # a link leading out, a read error, a file replaced since: ingest reports it


class _Folders:
    """What one walk learns about folders (names, files present), asked once per folder."""

    def __init__(self) -> None:
        self.exists = lru_cache(maxsize=None)(lambda path: Path(path).exists())
        self.names = lru_cache(maxsize=None)(_names_in)
        self.reused = lru_cache(maxsize=None)(_reused_system_names)


def describe(
    path: str | Path, base: Path, seen: _Folders, round_: str | None, root: str | None
) -> LogEntry | None:
    """What the location of one log says: layout, round, submitter, system, benchmark, run.

    None when the file lies in an MLPerf tree but outside its results layout (code, raw
    logs, helpers): such a file is not an official run. `round_` is the round the caller
    states; without it, the repository's folder name (`training_results_vX.Y`) gives it.
    `root` is the resolved folder given to ingest, which every file read must lie in; a log
    named alone has none: its description, scaling.json and telemetry must lie in the folder
    of its results layout (or its own folder).
    """
    resolved = os.path.abspath(path)  # string operations: this runs once per log
    rel = printable(_relative(resolved, str(base)) or os.path.basename(path))
    name = os.path.basename(resolved)
    match = _RUN_INDEX.search(os.path.splitext(name)[0])  # the run index ends the stem
    run = int(match.group(1)) if match else 0
    beside = telemetry_path(Path(resolved))
    telemetry = beside if beside.name in seen.names(os.path.dirname(resolved)) else None
    parts = resolved.split(os.sep)
    repository = _repository_root(parts)
    named_round = round_ or (_round_named(parts[repository]) if repository is not None else None)
    how = "option" if round_ else "repository" if named_round else None
    start = repository if repository is not None else len(str(base).rstrip(os.sep).split(os.sep))
    place = _results_place(parts, start)
    confined = root or os.path.realpath(os.path.dirname(resolved))
    entry = LogEntry(
        Path(resolved),
        rel,
        "plain",
        named_round,
        run=run,
        telemetry=telemetry,
        round_source=how,
        root=confined,
        named=root is None,
    )
    if place is None:
        if repository is not None or _in_tree(parts[start:-1]):
            return None  # in a result tree, outside its results layout: not a run
        return entry
    r, system, bench = place
    # the submitters: the repository's children; without one, those of the folder given to
    # ingest, unless it holds `results` itself (then it is the submitter)
    top = start + 1 if repository is not None else min(start + 1, r - 1)
    org = parts[top] if top < r else parts[r - 1]
    submission = parts[top + 1 : r]
    org_dir = os.sep.join(parts[: top + 1]) if top < r else os.sep.join(parts[:r])
    system_dir = os.sep.join(parts[: r + 2])
    container = os.sep.join(parts[:r])
    folder = "/".join([*submission, system])
    named = system
    if submission and system in seen.reused(org_dir):
        named = f"{submission[-1]}/{system}"
    renames = data("rules.yml")["layout"]["descriptions"].get(f"{named_round}/{org}", {})
    renamed = renames.get(system, system)
    candidates = (
        os.path.join(system_dir, "entry.json"),
        os.path.join(container, "systems", f"{renamed}.json"),
    )
    description = next((Path(c) for c in candidates if seen.exists(c)), None)
    return replace(
        entry,
        layout="v0.5" if submission else "v0.6+",
        submitter=printable(org),
        system=printable(named),
        system_folder=printable(folder),
        benchmark=printable(benchmark_name(bench)) if bench else None,
        description=description,
        root=root or os.path.realpath(container),
    )


def _repository_root(parts: list[str]) -> int | None:
    """The index of the deepest folder that names a round (`training_results_vX.Y`, or
    v0.5's `v0.5.0` inside it), if any."""
    for i in range(len(parts) - 2, -1, -1):
        if _ROUND_FOLDER.match(parts[i]):
            return i
    return None


def _round_named(folder: str) -> str:
    """The round a repository folder names, e.g. v0.7 for training_results_v0.7."""
    match = _ROUND_FOLDER.match(folder)
    return f"v{match.group(1) or match.group(2)}"


def _results_place(parts: list[str], start: int) -> tuple[int, str, str | None] | None:
    """(index of `results`, system, benchmark) when the file is a run of the results layout
    `results/<system>/<benchmark>/result_N.txt` (or a deviation listed in rules.yml); None
    otherwise."""
    layout = data("rules.yml")["layout"]
    name = parts[-1]
    excluded = frozenset(layout["not_results"])
    for depth, patterns in ((3, layout["run_files"]), (2, layout["run_files_in_system"])):
        r = len(parts) - 1 - depth
        if r <= 0 or parts[r] != "results":
            continue
        if any(p in excluded for p in parts[start:r]):
            return None
        if any(fnmatchcase(name, p) for p in patterns):
            return r, parts[r + 1], parts[r + 2] if depth == 3 else None
    return None


def _in_tree(folders: list[str]) -> bool:
    """Whether folders below the one given are those of a result tree (results, code)."""
    return any(f == "results" or f in data("rules.yml")["layout"]["not_results"] for f in folders)


def benchmark_name(folder: str) -> str:
    """The benchmark a folder names, its aliases (Google's `mask`) resolved."""
    return data("rules.yml")["layout"]["benchmark_aliases"].get(folder, folder)


def _names_in(folder: str) -> frozenset[str]:
    """The names in a folder (none if it cannot be listed)."""
    try:
        return frozenset(os.listdir(folder))
    except OSError:
        return frozenset()


def printable(name: str) -> str:
    """A name from the file system as text to store and print: bytes that are not UTF-8 as
    \\xNN, control characters (a newline, an escape) escaped likewise."""
    if name.isprintable():
        return name
    text = os.fsencode(name).decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def _relative(path: str, base: str) -> str | None:
    """`path` relative to the folder `base`, both absolute and normal; None if not under it."""
    prefix = base if base.endswith(os.sep) else base + os.sep
    return path[len(prefix) :] if path.startswith(prefix) else None


def _reused_system_names(org_dir: str) -> frozenset[str]:
    """System folder names used by more than one submission of one v0.5 submitter."""
    seen: dict[str, int] = {}
    org = Path(org_dir)
    for system_dir in (*org.glob("*/results/*"), *org.glob("*/*/results/*")):
        if system_dir.is_dir():
            seen[system_dir.name] = seen.get(system_dir.name, 0) + 1
    return frozenset(name for name, count in seen.items() if count > 1)
