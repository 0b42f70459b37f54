"""A snapshot's manifest: every table file with its row count, size and sha256.

    {"format": 2, "snapshot": "snap-000007",
     "tables": {"runs": {"rows": 55, "bytes": 20480, "sha256": "...", "schema_version": 3}}}

Readers and writers check a snapshot against its manifest before they use it, and refuse, in
one line naming the file, one that does not match: a table file missing, truncated, replaced
or a link, or a manifest that is not one. Format 1 manifests (before checksums) list the row
counts only: those are checked against the files' own footers until `seal` adds checksums.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from collector.errors import StoreError
from collector.store.schemas import STORED_TABLES

MANIFEST = "manifest.json"
FORMAT = 2
MAX_MANIFEST_BYTES = 1 << 20  # eight tables take a few hundred bytes


@dataclass(frozen=True)
class Entry:
    """What the manifest says of one table file."""

    rows: int
    schema_version: int
    bytes: int | None = None  # None in format 1
    sha256: str | None = None  # None in format 1


def read_small(path: Path, limit: int) -> bytes:
    """The bytes of a small regular file, not through a link; OSError as open() raises it,
    StoreError where the path is not a regular file or holds more than `limit` bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StoreError(f"{path}: not a regular file")
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise StoreError(f"{path}: larger than {limit} bytes, so not one of the store's files")
    return data


def encode(name: str, entries: dict[str, Entry]) -> bytes:
    """The manifest of snapshot `name` as the bytes written to its folder."""
    doc = {"format": FORMAT, "snapshot": name, "tables": {t: vars(e) for t, e in entries.items()}}
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()


def load(folder: Path) -> tuple[int, dict[str, Entry]]:
    """(format, entries) of the manifest in snapshot folder `folder`; StoreError naming the
    manifest where it is missing or not a manifest of that snapshot."""
    path = folder / MANIFEST
    try:
        doc = json.loads(read_small(path, MAX_MANIFEST_BYTES))
    except FileNotFoundError as exc:
        raise StoreError(f"{path}: missing, so the snapshot cannot be checked") from exc
    except OSError as exc:
        raise StoreError(f"{path}: {reason(exc)}") from exc
    except (ValueError, RecursionError) as exc:
        raise StoreError(f"{path}: not JSON ({str(exc).splitlines()[0][:80]})") from exc
    if not isinstance(doc, dict) or doc.get("snapshot") != folder.name:
        raise StoreError(f"{path}: not the manifest of snapshot {folder.name}")
    version = doc.get("format", 1)
    tables = doc.get("tables")
    if version not in (1, FORMAT) or not isinstance(tables, dict):
        raise StoreError(f"{path}: unknown manifest format {version!r}")
    entries = {}
    for table, raw in tables.items():
        if table not in STORED_TABLES:
            raise StoreError(f"{path}: unknown table {table!r}")
        entries[table] = _entry(path, table, raw, version)
    return version, entries


def _entry(path: Path, table: str, raw: Any, version: int) -> Entry:
    try:
        entry = Entry(
            rows=raw["rows"],
            schema_version=raw["schema_version"],
            bytes=raw["bytes"] if version > 1 else None,
            sha256=raw["sha256"] if version > 1 else None,
        )
    except (KeyError, TypeError) as exc:
        raise StoreError(f"{path}: table {table} lacks {exc}") from exc
    counts = (entry.rows, entry.schema_version, *((entry.bytes,) if version > 1 else ()))
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts):
        raise StoreError(f"{path}: table {table}: counts are not non-negative integers")
    if version > 1 and not (isinstance(entry.sha256, str) and len(entry.sha256) == 64):
        raise StoreError(f"{path}: table {table}: no sha256")
    return entry


def verify(folder: Path) -> dict[str, Entry]:
    """Check every table file of a snapshot against its manifest; returns the entries.

    Raises StoreError naming the first file that does not match."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            raise StoreError(f"{folder}: not a folder (a link or a file), so not a snapshot")
    except FileNotFoundError as exc:
        raise StoreError(f"{folder}: missing snapshot") from exc
    version, entries = load(folder)
    for table, entry in entries.items():
        path = folder / f"{table}.parquet"
        size, digest = file_digest(path)
        if version == 1:
            rows = _footer_rows(path)
            if rows != entry.rows:
                raise StoreError(
                    f"{path}: {rows} rows where {MANIFEST} says {entry.rows}: damaged or replaced"
                )
        elif size != entry.bytes or digest != entry.sha256:
            raise StoreError(
                f"{path}: does not match {MANIFEST} ({size} bytes, sha256 {digest[:12]}; "
                f"expected {entry.bytes} bytes, {entry.sha256[:12]}): damaged or replaced"
            )
    return entries


def digest(folder: Path) -> str:
    """One sha256 over a snapshot's table files as `verify` checked them (each table's name,
    size and sha256): equal for the same tables, whatever the store or snapshot is called."""
    lines = [f"{t} {file_digest(folder / f'{t}.parquet')}" for t in sorted(verify(folder))]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _footer_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).metadata.num_rows
    except (OSError, ValueError) as exc:
        raise StoreError(f"{path}: unreadable Parquet ({str(exc).splitlines()[0]})") from exc


# (path, device, inode, size, mtime, ctime) -> sha256 of files hashed already by this process:
# snapshots are immutable, and any rewrite of a file changes its ctime
_DIGESTS: dict[tuple[str, int, int, int, int, int], str] = {}


def file_digest(path: Path) -> tuple[int, str]:
    """(size, sha256) of a table file; StoreError naming it where it is missing, a link or
    not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError as exc:
        raise StoreError(f"{path}: missing from its snapshot, which {MANIFEST} lists") from exc
    except OSError as exc:
        raise StoreError(f"{path}: {reason(exc)}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise StoreError(f"{path}: not a regular file")
        key = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if key not in _DIGESTS:
            with os.fdopen(os.dup(fd), "rb") as handle:
                _DIGESTS[key] = hashlib.file_digest(handle, "sha256").hexdigest()
        return st.st_size, _DIGESTS[key]
    finally:
        os.close(fd)


def reason(exc: OSError) -> str:
    """Why a store file could not be opened, in words."""
    if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link
        return "a symbolic link, which a store never holds"
    return exc.strerror or str(exc)


def seal(folder: Path) -> bool:
    """Give a format-1 manifest its files' sizes and checksums, after checking its row counts;
    False where the manifest has them already. The new manifest replaces the old atomically."""
    version, entries = load(folder)
    if version == FORMAT:
        return False
    verify(folder)
    sealed = {}
    for table, entry in entries.items():
        size, digest = file_digest(folder / f"{table}.parquet")
        sealed[table] = Entry(entry.rows, entry.schema_version, size, digest)
    write(folder, encode(folder.name, sealed))
    return True


def write(folder: Path, data: bytes) -> None:
    """Write a manifest into a snapshot folder, synced, replacing any atomically."""
    tmp = folder / f".{MANIFEST}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, folder / MANIFEST)
