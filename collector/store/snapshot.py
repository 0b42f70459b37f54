"""The Parquet store: immutable snapshot folders and an atomically swapped CURRENT pointer.

    STORE/CURRENT            name of the live snapshot
    STORE/snap-000007/       one Parquet file per table + manifest.json
    STORE/LOCK               held (flock, exclusive) by the one writer at work

Writers take turns: each holds an exclusive `flock` on LOCK for its whole
read-modify-write, so none builds on a snapshot another is replacing; the kernel
releases it when the writer exits or is killed. A writer builds a complete new snapshot
in a staging folder, fsyncs it, then replaces CURRENT with os.replace (atomic). A crash
or kill at any point leaves the previous snapshot live and readable.

Readers resolve CURRENT once and hold a shared `flock` on that snapshot's folder while
they read it. A writer keeps the last KEEP snapshots and removes an older one only when
it can lock it exclusively, i.e. when no reader holds it; under LOCK, staging folders
and snapshots newer than the live one are leftovers of dead writers and are removed.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from collector.errors import StoreError
from collector.store import migrations
from collector.store.schemas import STORED_TABLES, all_schemas

POINTER = "CURRENT"
PREFIX = "snap-"
LOCK = "LOCK"
KEEP = 3  # snapshots kept, the live one included: a reader may still be on the older ones
WAIT_S = 600.0  # how long a writer waits for another to finish, by default
DICTIONARY_MIN_ROWS = 50_000  # shorter tables are stored plain
# rows per Parquet row group: DuckDB scans a file's row groups in parallel, one per thread
ROW_GROUP_ROWS = 1 << 17
DICTIONARY_BYTES = 64 << 10  # a column whose distinct values outgrow this is stored plain


@dataclass
class Snapshot:
    """The tables of one snapshot, in memory."""

    tables: dict[str, pa.Table]
    name: str | None = None

    def __getitem__(self, table: str) -> pa.Table:
        return self.tables[table]


def empty() -> Snapshot:
    """A snapshot with every table present and empty."""
    return Snapshot({name: schema.empty() for name, schema in all_schemas().items()})


def current_name(store: Path) -> str | None:
    """The live snapshot's folder name, or None for a store never written."""
    try:
        name = (store / POINTER).read_text().strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"{store / POINTER}: {exc.strerror}") from exc
    if not name.startswith(PREFIX) or not (store / name).is_dir():
        raise StoreError(f"{store / POINTER} names a missing snapshot {name!r}")
    return name


def read(store: Path, tables: tuple[str, ...] = STORED_TABLES) -> Snapshot:
    """Read the live snapshot (or an empty one for a new store), upgrading old versions."""
    with Pin(store) as name:
        return _read(store, name, tables)


def _read(store: Path, name: str | None, tables: tuple[str, ...]) -> Snapshot:
    if name is None:
        snap = empty()
        return Snapshot({t: snap.tables[t] for t in tables})
    schemas = all_schemas()
    out: dict[str, pa.Table] = {}
    for table in tables:
        path = store / name / f"{table}.parquet"
        if not path.exists():
            out[table] = schemas[table].empty()
            continue
        try:
            data = pq.read_table(path)
        except (OSError, pa.ArrowException) as exc:
            raise StoreError(f"{path}: unreadable Parquet ({exc})") from exc
        data = migrations.upgrade(table, data, schemas[table].schema_version)
        schemas[table].validate(data)
        out[table] = data
    return Snapshot(out, name)


def write(store: Path, snapshot: Snapshot) -> str:
    """Write every table as a new snapshot and make it live; returns its name.

    Runs under the store's writer lock: the caller's (see `writing`, which a
    read-modify-write needs), else its own for the write alone."""
    with writing(store):
        return _write(store, snapshot)


def _write(store: Path, snapshot: Snapshot) -> str:
    _remove_leftovers(store)
    previous = current_name(store)
    number = int(previous.removeprefix(PREFIX)) + 1 if previous else 1
    name = f"{PREFIX}{number:06d}"
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=store))
    schemas = all_schemas()
    for table, data in snapshot.tables.items():
        schemas[table].validate(data)
    largest_first = sorted(snapshot.tables.items(), key=lambda item: -item[1].nbytes)
    with ThreadPoolExecutor(
        len(os.sched_getaffinity(0))
    ) as pool:  # Parquet and fsync release the GIL
        list(pool.map(_write_table, largest_first, repeat(staging)))
    manifest = {
        "snapshot": name,
        "tables": {
            table: {"rows": data.num_rows, "schema_version": schemas[table].schema_version}
            for table, data in snapshot.tables.items()
        },
    }
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    _fsync(staging / "manifest.json")
    os.replace(staging, store / name)
    _fsync(store)
    pointer_tmp = store / f".{POINTER}.tmp"
    pointer_tmp.write_text(name + "\n")
    _fsync(pointer_tmp)
    os.replace(pointer_tmp, store / POINTER)  # the commit point
    _fsync(store)
    _remove_old(store, number)
    return name


def _write_table(item: tuple[str, pa.Table], staging: Path) -> None:
    """One table as Parquet, synced. Dictionary encoding pays off on long tables only, and
    only for columns whose distinct values stay few."""
    table, data = item
    data = data.replace_schema_metadata(all_schemas()[table].arrow().metadata)
    path = staging / f"{table}.parquet"
    pq.write_table(
        data,
        path,
        compression="zstd",
        use_dictionary=data.num_rows >= DICTIONARY_MIN_ROWS,
        dictionary_pagesize_limit=DICTIONARY_BYTES,
        row_group_size=ROW_GROUP_ROWS,
    )
    _fsync(path)


def merge(name: str, old: pa.Table, new: pa.Table) -> pa.Table:
    """Old rows plus new ones; a new row replaces an old one with the same key."""
    if new.num_rows == 0:
        return old
    if old.num_rows == 0:
        return new
    key = all_schemas()[name].key
    new_keys = set(zip(*(new.column(k).to_pylist() for k in key), strict=True))
    old_keys = zip(*(old.column(k).to_pylist() for k in key), strict=True)
    keep = pa.array([k not in new_keys for k in old_keys], type=pa.bool_())
    return pa.concat_tables([old.filter(keep), new])


def _remove_leftovers(store: Path) -> None:
    """Delete what dead writers left: staging folders, and snapshots newer than the live one
    (made, never made live). Only the lock holder writes, so no live writer owns these."""
    live = current_name(store)
    live_number = _number(live) if live else 0
    for entry in store.iterdir():
        unborn = entry.name.startswith(PREFIX) and _number(entry.name) > live_number
        if entry.name.startswith(f".{PREFIX}") or unborn:
            shutil.rmtree(entry, ignore_errors=True)


def _remove_old(store: Path, live_number: int) -> None:
    """Delete snapshots older than the last KEEP, except those a reader holds."""
    for entry in store.iterdir():
        if entry.name.startswith(PREFIX) and _number(entry.name) <= live_number - KEEP:
            try:
                fd = os.open(entry, os.O_RDONLY)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)  # a reader holds it: a later writer removes it
                continue
            try:
                shutil.rmtree(entry, ignore_errors=True)
            finally:
                os.close(fd)


def _number(name: str) -> int:
    """The number of a snapshot folder's name (-1 for a name that is not one)."""
    digits = name.removeprefix(PREFIX)
    return int(digits) if digits.isdigit() else -1


class Pin:
    """A snapshot held for reading (its name, None for a new store): no writer removes it
    until `close`, or the end of a `with Pin(store) as name:` block."""

    def __init__(self, store: Path) -> None:
        self.fd: int | None = None
        self.name: str | None = None
        for _ in range(100):  # a writer removes a snapshot only KEEP writes after it
            name = current_name(store)
            if name is None:
                return
            try:
                fd = os.open(store / name, os.O_RDONLY)
            except FileNotFoundError:
                continue  # removed since CURRENT named it: CURRENT names a newer one now
            fcntl.flock(fd, fcntl.LOCK_SH)  # waits out a writer removing it
            if (store / name).is_dir():
                self.fd, self.name = fd, name
                return
            os.close(fd)
        raise StoreError(f"{store}: snapshots are replaced faster than they can be opened")

    def close(self, *_: object) -> None:
        """Let writers remove the snapshot."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> str | None:
        return self.name

    __exit__ = close


# (store, thread) -> depth of the writer locks this process holds; a thread of its own
# takes the lock anew, and so waits for the others like another process would
_HELD: dict[tuple[str, int], int] = {}


@contextmanager
def writing(
    store: Path, wait_s: float = WAIT_S, on_wait: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Hold the store's writer lock while the block runs (re-entrant within a thread).

    Waits up to `wait_s` seconds for another writer, telling `on_wait` once that it does;
    raises StoreError when the time runs out."""
    try:
        store.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"{store}: cannot create the store ({exc.strerror})") from exc
    key = (os.path.realpath(store), threading.get_ident())
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield
        finally:
            _HELD[key] -= 1
        return
    fd = _lock(store, wait_s, on_wait)
    _HELD[key] = 1
    try:
        yield
    finally:
        del _HELD[key]
        os.close(fd)  # releases the lock


def _lock(store: Path, wait_s: float, on_wait: Callable[[str], None] | None) -> int:
    path = store / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        try:  # a read-only store: a writer that finds nothing to write still takes turns
            fd = os.open(path, os.O_RDONLY)
        except OSError as exc:
            raise StoreError(f"{path}: cannot open the writer lock ({exc.strerror})") from exc
    deadline = time.monotonic() + wait_s
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            pass
        except OSError as exc:
            os.close(fd)
            if exc.errno == errno.ENOLCK:
                raise StoreError(f"{path}: this file system does not support locks") from exc
            raise StoreError(f"{path}: cannot lock ({exc.strerror})") from exc
        if time.monotonic() >= deadline:
            os.close(fd)
            raise StoreError(
                f"{store}: another writer still holds {LOCK} after {wait_s:g} s; "
                "try again when it has finished, or wait longer (--wait)"
            )
        if not told and on_wait is not None:
            on_wait(f"waiting up to {wait_s:g} s for another writer of {store} to finish")
            told = True
        time.sleep(0.05)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
