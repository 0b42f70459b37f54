"""The Parquet store: immutable snapshot folders and an atomically swapped CURRENT pointer.

    STORE/CURRENT            name of the live snapshot
    STORE/snap-000007/       one Parquet file per table + manifest.json (rows, sha256)
    STORE/LOCK               held (flock, exclusive) by the one writer at work

Writers take turns: each holds an exclusive `flock` on LOCK for its whole
read-modify-write, so none builds on a snapshot another is replacing; the kernel
releases it when the writer exits or is killed. A writer builds a complete new snapshot
in a staging folder, fsyncs it, then replaces CURRENT with os.replace (atomic). A crash
or kill at any point leaves the previous snapshot live and readable.

Readers resolve CURRENT once (only an exact snapshot name, a folder of the store) and hold
a shared `flock` on that snapshot's folder while they read it; they check its files against
its manifest first. A writer keeps the last KEEP snapshots and removes an older one only
when it can lock it exclusively, i.e. when no reader holds it, and only a folder it proves
is a snapshot (its name, a real folder, a manifest naming it). Under LOCK, staging folders
are leftovers of dead writers and are removed; a snapshot never made live stays until it
is old, as the next one takes a number after every snapshot present.
"""

from __future__ import annotations

import errno
import fcntl
import math
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING

from collector.errors import InputError, StoreError
from collector.store import manifest, migrations
from collector.store.manifest import MANIFEST, Entry
from collector.store.schemas import STORED_TABLES, all_schemas

if TYPE_CHECKING:  # pyarrow loads where a table is read or written, not for a query
    import pyarrow as pa

POINTER = "CURRENT"
PREFIX = "snap-"
LOCK = "LOCK"
KEEP = 3  # snapshots kept, the live one included: a reader may still be on the older ones
WAIT_S = 600.0  # how long a writer waits for another to finish, by default
DICTIONARY_MIN_ROWS = 50_000  # shorter tables are stored plain
# rows per Parquet row group: DuckDB scans a file's row groups in parallel, one per thread
ROW_GROUP_ROWS = 1 << 17
DICTIONARY_BYTES = 64 << 10  # a column whose distinct values outgrow this is stored plain
NAME = re.compile(r"snap-([0-9]{6,9})")  # a snapshot folder's name, matched whole
# a staging folder: tempfile.mkdtemp(prefix=".snap-NNNNNN.") adds 8 such characters
STAGING = re.compile(r"\.snap-[0-9]{6,9}\.[a-z0-9_]{8}")


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
    """The live snapshot's folder name, or None for a store never written.

    CURRENT must hold exactly a snapshot name (one newline after it at most) of a folder of
    the store; anything else is a StoreError naming it."""
    path = store / POINTER
    try:
        raw = manifest.read_small(path, 64)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"{path}: cannot read ({manifest.reason(exc)})") from exc
    text = raw.decode("ascii", "replace")
    name = text[:-1] if text.endswith("\n") else text
    if not NAME.fullmatch(name):
        raise StoreError(f"{path}: {name[:40]!r} is not a snapshot name (snap-NNNNNN)")
    if not _real_folder(store / name):
        raise StoreError(f"{path} names a missing snapshot {name!r}")
    return name


def read(store: Path, tables: tuple[str, ...] = STORED_TABLES) -> Snapshot:
    """Read the live snapshot (or an empty one for a new store), upgrading old versions."""
    with Pin(store) as name:
        return _read(store, name, tables)


def _read(store: Path, name: str | None, tables: tuple[str, ...]) -> Snapshot:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schemas = all_schemas()
    if name is None:
        return Snapshot({t: schemas[t].empty() for t in tables})
    listed = manifest.verify(store / name)  # a Pin checked it; cheap again: digests are kept
    out: dict[str, pa.Table] = {}
    for table in tables:
        path = store / name / f"{table}.parquet"
        if table not in listed:  # a table newer than the snapshot
            out[table] = schemas[table].empty()
            continue
        try:
            data = pq.read_table(path)
        except (OSError, pa.ArrowException) as exc:
            raise StoreError(f"{path}: unreadable Parquet ({exc})") from exc
        data = migrations.upgrade(table, data, schemas[table].schema_version)
        schemas[table].validate(data)
        if data.num_rows != listed[table].rows:
            expected = listed[table].rows
            raise StoreError(f"{path}: {data.num_rows} rows where {MANIFEST} says {expected}")
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
    # after every name taken, whatever holds it: a snapshot never made live, or a stranger
    number = max([0, *map(_number, os.listdir(store))]) + 1
    name = f"{PREFIX}{number:06d}"
    schemas = all_schemas()
    for table, data in snapshot.tables.items():
        schemas[table].validate(data)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=store))
    except OSError as exc:
        raise StoreError(f"{store}: cannot write a snapshot ({exc.strerror})") from exc
    try:
        _write_snapshot(store, staging, name, snapshot)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise StoreError(
            f"{store}: cannot write a snapshot ({exc.strerror or exc}); {previous or 'none'} "
            "stays live"
        ) from exc
    _remove_old(store, _number(name))
    return name


def _write_snapshot(store: Path, staging: Path, name: str, snapshot: Snapshot) -> None:
    """Tables and manifest into `staging`, synced; then the folder renamed to `name` and
    CURRENT pointed at it."""
    from concurrent.futures import ThreadPoolExecutor

    largest_first = sorted(snapshot.tables.items(), key=lambda item: -item[1].nbytes)
    # Parquet and fsync release the GIL
    with ThreadPoolExecutor(len(os.sched_getaffinity(0))) as pool:
        written = dict(pool.map(_write_table, largest_first, repeat(staging)))
    manifest.write(staging, manifest.encode(name, dict(sorted(written.items()))))
    os.replace(staging, store / name)
    _fsync(store)
    fd, pointer_tmp = tempfile.mkstemp(prefix=f".{POINTER}.", dir=store)
    try:
        os.write(fd, f"{name}\n".encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(pointer_tmp, store / POINTER)  # the commit point
    _fsync(store)


def _write_table(item: tuple[str, pa.Table], staging: Path) -> tuple[str, Entry]:
    """One table as Parquet, synced, with its manifest entry. Dictionary encoding pays off on
    long tables only, and only for columns whose distinct values stay few."""
    import pyarrow.parquet as pq

    table, data = item
    schema = all_schemas()[table]
    data = data.replace_schema_metadata(schema.arrow.metadata)
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
    size, digest = manifest.file_digest(path)
    return table, Entry(data.num_rows, schema.schema_version, size, digest)


def merge(name: str, old: pa.Table, new: pa.Table) -> pa.Table:
    """Old rows plus new ones; a new row replaces an old one with the same key."""
    import pyarrow as pa

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
    """Delete what dead writers left: staging folders (named as this module names them,
    holding only table files and a manifest) and CURRENT's temporary files. Only the lock
    holder writes, so no live writer owns these."""
    for entry in store.iterdir():
        if entry.name.startswith(f".{POINTER}.") and not _real_folder(entry):
            entry.unlink(missing_ok=True)  # a link itself, never what it points to
        elif STAGING.fullmatch(entry.name) and _real_folder(entry):
            ours = (n.endswith(".parquet") or MANIFEST in n for n in os.listdir(entry))
            if all(ours):
                shutil.rmtree(entry, ignore_errors=True)


def _real_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _remove_old(store: Path, live_number: int) -> None:
    """Delete snapshots older than the last KEEP, except those a reader holds; only folders
    proved snapshots: a snapshot's name, a real folder (not a link), a manifest naming it."""
    for entry in store.iterdir():
        if not 0 <= _number(entry.name) <= live_number - KEEP or not _real_folder(entry):
            continue
        try:
            manifest.load(entry)
            fd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY)
        except (StoreError, OSError):
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            shutil.rmtree(entry, ignore_errors=True)
        except BlockingIOError:
            pass  # a reader holds it: a later writer removes it
        finally:
            os.close(fd)


def _number(name: str) -> int:
    """The number of a snapshot folder's name (-1 for a name that is not one)."""
    match = NAME.fullmatch(name)
    return int(match.group(1)) if match else -1


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
                fd = os.open(store / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY)
            except FileNotFoundError:
                continue  # removed since CURRENT named it: CURRENT names a newer one now
            except OSError as exc:
                raise StoreError(f"{store / name}: {manifest.reason(exc)}") from exc
            fcntl.flock(fd, fcntl.LOCK_SH)  # waits out a writer removing it
            if (store / name).is_dir():
                try:
                    manifest.verify(store / name)
                except StoreError:
                    os.close(fd)
                    raise
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


# (store, thread) of the writer locks this process holds; a thread of its own takes the
# lock anew, and so waits for the others like another process would
_HELD: set[tuple[str, int]] = set()


@contextmanager
def writing(
    store: Path, wait_s: float = WAIT_S, on_wait: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Hold the store's writer lock while the block runs (re-entrant within a thread).

    Waits up to `wait_s` seconds for another writer, telling `on_wait` once that it does;
    raises StoreError when the time runs out."""
    wait_seconds(wait_s)
    outer = store_of(Path(os.path.realpath(store)).parent)
    if outer is not None:  # its snapshots' removal would take this store with them
        raise StoreError(f"{store}: inside the store {outer}; a store cannot hold another")
    try:
        store.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"{store}: cannot create the store ({exc.strerror})") from exc
    key = (os.path.realpath(store), threading.get_ident())
    fd = None if key in _HELD else _lock(store, wait_s, on_wait)
    _HELD.add(key)
    try:
        yield
    finally:
        if fd is not None:  # the outermost block
            _HELD.remove(key)
            os.close(fd)  # releases the lock


def _lock(store: Path, wait_s: float, on_wait: Callable[[str], None] | None) -> int:
    path = store / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError:
        try:  # a read-only store: a writer that finds nothing to write still takes turns
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
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


def wait_seconds(value: float | None) -> float:
    """A writer's wait (--wait) checked: a finite number of seconds, not negative (WAIT_S
    for None)."""
    if value is None:
        return WAIT_S
    if not math.isfinite(value) or value < 0:
        raise InputError(f"--wait must be a finite number of seconds, 0 or more, not {value}")
    return value


def store_of(path: str | Path) -> Path | None:
    """The store that `path` is, or lies in (links resolved), if any: a folder with CURRENT
    or LOCK beside snapshot folders."""
    folder = Path(os.path.realpath(path))
    for candidate in (folder, *folder.parents):
        if _is_store(candidate):
            return candidate
    return None


def _is_store(folder: Path) -> bool:
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    if POINTER in names and LOCK in names:
        return True
    return (POINTER in names or LOCK in names) and any(NAME.fullmatch(n) for n in names)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
