"""The Parquet store of collector: schemas, snapshots and migrations."""

from __future__ import annotations

import os
from pathlib import Path

from collector.store.snapshot import KEEP, WAIT_S, Snapshot, pinned, read, write, writing

DEFAULT_STORE = Path(__file__).resolve().parents[2] / "runs" / "warehouse"


def resolve(store: str | Path | None) -> Path:
    """The store to use: the argument, else $COLLECTOR_STORE, else runs/warehouse."""
    if store:
        return Path(store)
    env = os.environ.get("COLLECTOR_STORE")
    return Path(env) if env else DEFAULT_STORE


__all__ = [
    "DEFAULT_STORE",
    "KEEP",
    "WAIT_S",
    "Snapshot",
    "pinned",
    "read",
    "resolve",
    "write",
    "writing",
]
