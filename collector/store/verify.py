"""A store's integrity: CURRENT, every snapshot against its manifest, and what else lies there."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from collector.errors import StoreError
from collector.store import manifest
from collector.store.snapshot import LOCK, NAME, POINTER, STAGING, current_name, writing


@dataclass(frozen=True)
class Finding:
    """What the check found of one path of the store."""

    path: str
    problem: bool
    message: str

    def __str__(self) -> str:
        return f"{'error' if self.problem else 'ok'}: {self.path}: {self.message}"


def verify_store(store: Path, upgrade: bool = False) -> list[Finding]:
    """Check a store: CURRENT names a snapshot of it, and each snapshot's files match its
    manifest (sizes and sha256, or row counts for manifests of format 1). With `upgrade`,
    format-1 manifests that match get their checksums (under the writer lock)."""
    if not store.is_dir():
        raise StoreError(f"{store}: no store here")
    if upgrade:
        with writing(store):
            return _findings(store, upgrade)
    return _findings(store, upgrade)


def _findings(store: Path, upgrade: bool) -> list[Finding]:
    found = []
    try:
        live = current_name(store)
        found.append(Finding(str(store / POINTER), False, f"names {live or 'no snapshot'}"))
    except StoreError as exc:
        live = None
        found.append(Finding(str(store / POINTER), True, _tail(exc, store / POINTER)))
    for entry in sorted(store.iterdir()):
        name = entry.name
        if name in (POINTER, LOCK) or name.startswith(f".{POINTER}."):
            continue
        if STAGING.fullmatch(name):
            found.append(Finding(str(entry), False, "left by an interrupted write; ignored"))
        elif not NAME.fullmatch(name):
            found.append(Finding(str(entry), False, "not a file of the store; ignored"))
        elif not stat.S_ISDIR(os.lstat(entry).st_mode):
            found.append(Finding(str(entry), True, "a snapshot's name on a link or a file"))
        else:
            found.append(_snapshot(entry, name == live, upgrade))
    return found


def _snapshot(folder: Path, live: bool, upgrade: bool) -> Finding:
    role = " (live)" if live else ""
    try:
        sealed = upgrade and manifest.seal(folder)
        version, entries = manifest.load(folder)
        manifest.verify(folder)
    except StoreError as exc:
        return Finding(str(folder), True, f"{role.strip(' ()') or 'kept'} snapshot: {exc}")
    rows = sum(e.rows for e in entries.values())
    what = f"{len(entries)} tables, {rows:,} rows"
    if version == 1:
        return Finding(
            str(folder),
            False,
            f"snapshot{role}: {what}, row counts match; its manifest has no checksums "
            "(collector verify --upgrade adds them)",
        )
    how = "checksums added, " if sealed else ""
    return Finding(str(folder), False, f"snapshot{role}: {what}, {how}sizes and sha256 match")


def _tail(exc: StoreError, path: Path) -> str:
    """The message of an error about `path` without the path it starts with."""
    text = str(exc)
    return text.removeprefix(f"{path}: ").removeprefix(str(path)).strip()
