"""An ordered map over batches of work, in worker processes."""

# Kept, measured: one process parses ~120 MB per CPU second, ~44 s for the 5.3 GB of 13 rounds;
# ingest in 45 s needs two.

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")
BATCHES_PER_PROCESS = 16  # small last batches, so that no worker idles long at the end

_SHARED: dict[str, Any] = {}


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def split_by_size(items: Sequence[T], sizes: Sequence[int], processes: int) -> list[list[T]]:
    """Consecutive runs of `items` for `map_batches`, of about equal total size."""
    share = sum(sizes) / (BATCHES_PER_PROCESS * max(processes, 1))
    batches: list[list[T]] = []
    batch: list[T] = []
    filled = 0
    for item, size in zip(items, sizes, strict=True):
        batch.append(item)
        filled += size
        if filled >= share:
            batches.append(batch)
            batch, filled = [], 0
    return [*batches, batch] if batch else batches


def map_batches(
    fn: Callable[..., R], batches: Sequence[T], shared: tuple[Any, ...], processes: int
) -> list[R]:
    """`fn(batch, *shared)` for every batch, in batch order, on `processes` worker processes
    (in this one where one is asked for, or one batch given). The workers are forked: they
    inherit `fn` and `shared` rather than receive them with each batch."""
    if processes < 2 or len(batches) < 2:
        return [fn(batch, *shared) for batch in batches]
    workers = min(processes, len(batches))
    parent = os.getpid()
    pool = ProcessPoolExecutor(workers, initializer=_init, initargs=(fn, shared, parent))
    # submitted one by one, not with pool.map, which cancels what is pending when interrupted:
    # the pool, broken once its workers are killed, fails those itself, and a cancelled one
    # makes its thread print a traceback (Python 3.11)
    futures = [pool.submit(_call, batch) for batch in batches]
    try:
        results = [future.result() for future in futures]
    except BaseException:  # Ctrl-C, SIGTERM, a worker's error: the workers end now, not later
        for worker in list(pool._processes.values()):  # no public way to end them at once
            worker.kill()
        pool.shutdown()  # quick, the workers dead; its thread gone before the interpreter exits
        raise
    pool.shutdown()
    return results


def _init(fn: Callable[..., Any], shared: tuple[Any, ...], parent: int) -> None:
    die_with_parent(parent)
    # Ctrl-C reaches the whole process group: the parent alone answers it, ending the workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _SHARED["fn"], _SHARED["shared"] = fn, shared


def _call(batch: Any) -> Any:
    return _SHARED["fn"](batch, *_SHARED["shared"])


def die_with_parent(parent: int) -> None:
    """Have the kernel end this process when `parent`, its parent, dies (Linux; elsewhere
    a no-op).

    A pool worker waits on a pipe that it also holds open itself, so it never sees the end of
    a parent killed with SIGKILL and would wait for ever.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig = 1
    libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
