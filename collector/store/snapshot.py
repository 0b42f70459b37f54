"""The Parquet store: immutable snapshot folders and an atomically swapped CURRENT pointer.

    STORE/CURRENT            name of the live snapshot
    STORE/snap-000007/       one Parquet file per table + manifest.json

A writer builds a complete new snapshot beside the live one, fsyncs it, then replaces
CURRENT with os.replace (atomic). A crash or kill at any point leaves the previous
snapshot live and readable; leftovers are removed by the next write.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
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
    name = current_name(store)
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
    """Write every table as a new snapshot and make it live; returns its name."""
    store.mkdir(parents=True, exist_ok=True)
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
    if previous:
        shutil.rmtree(store / previous, ignore_errors=True)
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
    """Delete staging folders and stale snapshots left by an interrupted writer."""
    live = current_name(store)
    for entry in store.iterdir():
        stale_snapshot = entry.name.startswith(PREFIX) and entry.name != live
        if entry.name.startswith(f".{PREFIX}") or stale_snapshot:
            shutil.rmtree(entry, ignore_errors=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
