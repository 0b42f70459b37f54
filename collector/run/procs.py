"""Helpers for the processes a run spawns: a free rendezvous port, starting and stopping
workers (every one ends within seconds of an interrupt), a scoped environment, a process group
that is gone before its process exits, and SIGTERM turned into KeyboardInterrupt (so a
terminated run is logged as aborted)."""

from __future__ import annotations

import contextlib
import gc
import os
import random
import signal
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import torch.distributed as dist
import torch.multiprocessing as mp

LOWEST_PORT = 10000
#: seconds the processes of a job get to end on their own before they are killed
GRACE_S = 10.0
PORT_RANGE_FILE = "/proc/sys/net/ipv4/ip_local_port_range"


def free_port(avoid: tuple[int, ...] = ()) -> int:
    """A TCP port that nothing is bound to now, other than `avoid`, chosen below the kernel's
    range of ephemeral ports where it can: a port from that range (what binding port 0 gives)
    can be taken by any outgoing connection before the process it was chosen for binds it."""
    below = range(LOWEST_PORT, ephemeral_ports_start())
    for port in random.Random().sample(below, min(256, len(below))):
        if port not in avoid and _bindable(port):
            return port
    while True:  # nothing free below the range: a port from it
        with socket.socket() as s:
            s.bind(("", 0))
            port = s.getsockname()[1]
        if port not in avoid:
            return port


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("", port))
        except OSError:
            return False
    return True


def ephemeral_ports_start() -> int:
    """The first port of the kernel's ephemeral range (32768 where it cannot be read)."""
    try:
        return int(Path(PORT_RANGE_FILE).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def spawn(fn: Callable[..., None], nprocs: int, *args: Any) -> None:
    """Run ``fn(rank, *args)`` in ``nprocs`` spawned processes until they end (see
    :func:`start` and :func:`wait`)."""
    wait(start(fn, nprocs, *args))


def start(fn: Callable[..., None], nprocs: int, *args: Any) -> mp.ProcessContext:
    """Start ``fn(rank, *args)`` in ``nprocs`` spawned processes; they inherit the environment
    as it is now."""
    return mp.start_processes(fn, args=args, nprocs=nprocs, join=False, start_method="spawn")


def wait(
    ctx: mp.ProcessContext, poll: Callable[[], None] = lambda: None, grace: float = GRACE_S
) -> None:
    """Wait for every process of ``ctx``, calling ``poll`` between checks. When one fails, the
    others get ``grace`` seconds to end before they are killed, and its error is raised; on an
    interrupt (Ctrl-C, SIGTERM) all of them are stopped (:func:`stop`) and the interrupt
    re-raised."""
    try:
        while not ctx.join(timeout=0.2, grace_period=grace):
            poll()
        poll()
    except BaseException:
        stop(ctx.processes, grace)
        raise


def stop(processes: list, grace: float = GRACE_S) -> None:
    """SIGTERM every process still alive (a training worker logs its run as aborted and
    exits), give them ``grace`` seconds together, then SIGKILL the ones left: a rank blocked
    in a collective whose peers have gone never returns to Python to handle the signal."""
    with _signals_held():  # a second Ctrl-C must not leave the workers running
        for p in processes:
            if p.is_alive():
                p.terminate()
        deadline = time.monotonic() + grace
        for p in processes:
            p.join(timeout=max(0.0, deadline - time.monotonic()))
        for p in processes:
            if p.is_alive():
                p.kill()
            p.join(timeout=5)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ignore SIGINT and SIGTERM in the block (main thread only: elsewhere Python cannot set
    handlers, and signals reach the main thread anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in held.items():
            signal.signal(sig, handler)


def scoped_env(env: dict[str, str]) -> contextlib.AbstractContextManager:
    """Set ``env`` in ``os.environ`` for the block (spawned workers inherit it), then restore
    the environment as it was."""
    return mock.patch.dict(os.environ, env)


@contextlib.contextmanager
def process_group(backend: str, **init: Any) -> Iterator[None]:
    """``init_process_group`` for the block; afterwards the group is destroyed, its threads
    joined. Models and optimisers made in the block must not outlive it (make them in a
    function called inside it).

    gloo's worker threads live as long as the group object. Left to interpreter shutdown, a
    worker that still drops a tensor then needs the interpreter lock and aborts the process
    ("terminate called without an active exception"), turning a finished run into a crash.
    """
    # Imported after the group exists, this module binds the default group into its functions'
    # argument defaults (DistributedDataParallel imports it), which keeps the group alive.
    import torch.distributed.nn.functional  # noqa: F401

    dist.init_process_group(backend, **init)
    try:
        yield
    except BaseException as exc:
        # The frames of a failed block hold its models: cleared now, they let go of them while
        # the group still holds its own reference (see below).
        traceback.clear_frames(exc.__traceback__)
        raise
    finally:
        # Models in reference cycles hold the group too: collected first, they leave the last
        # reference to destroy_process_group, which lets the threads finish their queued work
        # without the interpreter lock. (The last reference dropped by a model under the lock
        # would wait for threads that wait for the lock.)
        gc.collect()
        with contextlib.suppress(Exception):
            dist.destroy_process_group()


def _raise(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def raise_on_sigterm() -> None:
    """Make SIGTERM raise KeyboardInterrupt in the main thread (as Ctrl-C does)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise)
