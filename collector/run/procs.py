"""Helpers for the processes a run spawns: a free rendezvous port and a scoped environment."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def scoped_env(env: dict[str, str]) -> Iterator[None]:
    """Set ``env`` in ``os.environ`` for the block (spawned workers inherit it), then restore."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
