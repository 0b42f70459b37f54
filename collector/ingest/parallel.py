"""An ordered map over batches of work, in worker processes and in the calling one."""

# Kept, measured: one process parses ~120 MB per CPU second, ~44 s for the 5.3 GB of 13 rounds.

from __future__ import annotations

import gc
import os
import pickle
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_SHARED: dict[str, Any] = {}


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def split_by_size(items: Sequence[T], sizes: Sequence[int], processes: int) -> list[list[T]]:
    """Consecutive runs of `items` for `map_batches`, large at both ends, small in the middle.

    Workers take batches from the front and the caller from the back, each batch a share
    of the work left, so that both sides end on small batches and finish together.
    """
    remaining = float(sum(sizes))
    smallest = remaining / (32 * processes)
    front: list[list[T]] = []
    back: list[list[T]] = []
    lo, hi = 0, len(items)
    while lo < hi:
        from_front = len(front) <= len(back) * (processes - 1)
        target = max(remaining / (4 * processes), smallest)
        batch: list[T] = []
        filled = 0
        while lo < hi and (not batch or filled < target):
            i = lo if from_front else hi - 1
            batch.append(items[i])
            filled += sizes[i]
            lo, hi = (lo + 1, hi) if from_front else (lo, hi - 1)
        remaining -= filled
        if from_front:
            front.append(batch)
        else:
            back.append(batch[::-1])
    return front + back[::-1]


def map_batches(
    fn: Callable[..., R], batches: Sequence[T], shared: tuple[Any, ...], processes: int
) -> list[R]:
    """`fn(batch, *shared)` for every batch, in batch order, on `processes` processes.

    `processes - 1` workers take batches from the front while this process takes them
    from the back, until the two meet. A thread keeps the workers fed, so that no side
    idles until the end, and what this process computes is never copied between
    processes. Workers hand results back through files: read from a pipe by this busy
    process, a large result would hold its worker up for a while. The workers are left
    to exit on their own once all results are in.

    The first batches are handed out, and so the workers forked, before `fn` runs here: a
    worker forked while this process imports a module (`fn` may import lazily) would wait
    for ever on that module's import lock.
    """
    if processes < 2 or len(batches) < 2:
        return [fn(batch, *shared) for batch in batches]
    queue = _Queue(batches)
    with tempfile.TemporaryDirectory(prefix="collector-") as spool:
        pool = ProcessPoolExecutor(
            processes - 1, initializer=_init, initargs=(fn, shared, spool, os.getpid())
        )
        feeder: threading.Thread | None = None
        try:
            pending = queue.submit(pool, processes - 1, {})
            feeder = threading.Thread(target=queue.feed, args=(pool, processes - 1, pending))
            feeder.start()
            while (i := queue.claim(front=False)) is not None:
                queue.results[i] = fn(batches[i], *shared)
        except BaseException:
            queue.stop = True  # the feeder submits nothing more
            raise
        finally:
            if feeder is not None:
                feeder.join()
            pool.shutdown(wait=queue.error is not None or len(queue.results) < len(batches))
    if queue.error is not None:
        raise queue.error
    return [queue.results[i] for i in range(len(batches))]


class _Queue(Generic[T, R]):
    """Batches handed out from both ends, and the results gathered."""

    def __init__(self, batches: Sequence[T]) -> None:
        self.batches = batches
        self.front, self.back = 0, len(batches) - 1
        self.results: dict[int, R] = {}
        self.error: BaseException | None = None
        self.stop = False
        self.lock = threading.Lock()

    def claim(self, front: bool) -> int | None:
        """The index of the next batch from one end, or None when all are taken."""
        with self.lock:
            if self.stop or self.front > self.back:
                return None
            if front:
                self.front += 1
                return self.front - 1
            self.back -= 1
            return self.back + 1

    def submit(
        self, pool: ProcessPoolExecutor, workers: int, pending: dict[Future[Any], int]
    ) -> dict[Future[Any], int]:
        """Queue batches from the front: one for each worker, and one behind it while
        enough are left (a queued batch cannot be taken back)."""
        depth = workers * (2 if self.back - self.front >= 4 * workers else 1)
        while len(pending) < depth and (i := self.claim(front=True)) is not None:
            pending[pool.submit(_call, self.batches[i])] = i
        return pending

    def feed(
        self, pool: ProcessPoolExecutor, workers: int, pending: dict[Future[Any], int]
    ) -> None:
        """Keep each worker busy with batches from the front until none are left, and
        gather their results."""
        try:
            while True:
                self.submit(pool, workers, pending)
                if not pending:
                    return
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    path = future.result()
                    with open(path, "rb") as handle:
                        self.results[pending.pop(future)] = pickle.load(handle)
                    os.unlink(path)
        except BaseException as exc:  # handed to the caller
            self.error, self.stop = exc, True
            for future in pending:
                future.cancel()


def _init(fn: Callable[..., Any], shared: tuple[Any, ...], spool: str, parent: int) -> None:
    die_with_parent(parent)
    # what the worker inherited lives as long as the worker: no collection need walk it
    # (walking it would also copy every page that it touches)
    gc.freeze()
    _SHARED["fn"], _SHARED["shared"], _SHARED["spool"] = fn, shared, spool


def die_with_parent(parent: int) -> None:
    """Have the kernel end this process when `parent`, its parent, dies (Linux; elsewhere
    a no-op).

    A pool worker waits on a pipe that it also holds open itself, so it never sees the end of
    a parent killed with SIGKILL and would wait for ever.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig = 1
    libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _call(batch: Any) -> str:
    """Run the function on one batch in a worker; the path of the pickled result."""
    result = _SHARED["fn"](batch, *_SHARED["shared"])
    fd, path = tempfile.mkstemp(dir=_SHARED["spool"], suffix=".pickle")
    with os.fdopen(fd, "wb") as handle:
        pickle.dump(result, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return path
