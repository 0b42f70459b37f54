"""collector: benchmark deep-learning training hardware and publish the answers.

`collector.open()` opens a store as a `collector.warehouse.Warehouse`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collector.warehouse import Warehouse

__version__ = "0.1.0"


def open(path: str | Path | None = None, *, threads: int | None = None) -> Warehouse:
    """Open the store at `path` (default: $COLLECTOR_STORE, else the working store, else the
    shipped one) and pin its live snapshot."""
    from collector.warehouse import Warehouse  # loaded when used: `collector --help` stays fast

    return Warehouse(path, threads=threads)
