"""Turning SIGTERM into KeyboardInterrupt, so a terminated run is logged as aborted."""

from __future__ import annotations

import signal
import threading
from types import FrameType


def _raise(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def raise_on_sigterm() -> None:
    """Make SIGTERM raise KeyboardInterrupt in the main thread (as Ctrl-C does)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise)
