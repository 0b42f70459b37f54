"""The Parquet store of collector: schemas, snapshots and migrations.

Paths are relative to the working directory: the shipped data is `runs/` (or `$COLLECTOR_DATA`),
its store `runs/warehouse`. Commands that name no store read the shipped store and write to
`.collector/store` (ignored by git), which starts as a copy of it, so that a checkout stays as
it was cloned. Remove `.collector/` to start again from the shipped data.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from collector.errors import StoreError
from collector.store import manifest
from collector.store.schemas import load
from collector.store.snapshot import (
    KEEP,
    POINTER,
    WAIT_S,
    Pin,
    Snapshot,
    _read,
    read,
    wait_seconds,
    write,
    writing,
)

if TYPE_CHECKING:
    import pyarrow as pa

WORKING_STORE = Path(".collector") / "store"


def resolve(store: str | Path | None, *, writing: bool = False) -> Path:
    """The store to use: the argument, else $COLLECTOR_STORE, else the working store.

    Until something is written, the working store is the shipped one; the first write makes
    it from the shipped store's live snapshot (its immutable Parquet files are linked, not
    copied, where the filesystem allows).
    """
    given = store or os.environ.get("COLLECTOR_STORE")
    if given:
        return Path(given)
    shipped = Path(os.environ.get("COLLECTOR_DATA", "runs"), "warehouse")
    if WORKING_STORE.exists() or not (shipped / POINTER).exists():
        return WORKING_STORE
    if not writing:
        return shipped
    _seed(shipped, WORKING_STORE)
    return WORKING_STORE


def snapshot_tables(store: Path, name: str) -> dict[str, Path | pa.Table]:
    """The stored tables of snapshot `name` of `store` (pin it first): the Parquet file of
    each table at this collector's schema version, or the table itself, upgraded in memory by
    the migrations, where its manifest records an older one; each checked against the
    snapshot's manifest. Tables the manifest does not list (written before they existed) are
    left out."""
    listed = manifest.verify(store / name)  # the Pin checked it; cheap again: digests are kept
    found: dict[str, Path | pa.Table] = {}
    for table, entry in listed.items():
        if entry.schema_version == load(table).schema_version:
            found[table] = (store / name / f"{table}.parquet").resolve()
        else:
            found[table] = _read(store, name, (table,))[table]
    return found


def _seed(source: Path, target: Path) -> None:
    """Copy the live snapshot of `source` (its manifest's files, checked) to a new store at
    `target`, atomically."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".seed-", dir=target.parent))
    except OSError as exc:
        raise StoreError(f"{target}: cannot make the working store ({exc.strerror})") from exc
    try:
        with Pin(source) as name:
            if name is None:
                raise StoreError(f"{source}: no snapshot to start the working store from")
            listed = manifest.load(source / name)[1]
            (staging / name).mkdir()
            for file in [*(f"{table}.parquet" for table in listed), manifest.MANIFEST]:
                _link_or_copy(source / name / file, staging / name / file)
            manifest.verify(staging / name)
        (staging / POINTER).write_text(name + "\n")
        staging.rename(target)
    except OSError as exc:  # another process made it first, or no room
        shutil.rmtree(staging, ignore_errors=True)
        if not target.is_dir():
            raise StoreError(f"{target}: cannot make the working store ({exc.strerror})") from exc
    except StoreError:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)


__all__ = [
    "KEEP",
    "WAIT_S",
    "WORKING_STORE",
    "Pin",
    "Snapshot",
    "read",
    "resolve",
    "snapshot_tables",
    "wait_seconds",
    "write",
    "writing",
]
