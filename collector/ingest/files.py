"""Reading the files of a result tree: regular files inside the tree, each within its limit.

Every file ingest and check read (logs, system descriptions, `entry.json`, `scaling.json`,
telemetry, published studies) comes through `read_file`: a link that leads out of the tree, a
FIFO, device or socket (which would block or never end), and a file over its kind's size
limit are refused with a reason, never opened for reading.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# Bytes a file of each kind may hold. The largest official log of thirteen rounds is a few MB;
# a log is read whole, so its limit also bounds ingest's memory (about twice the file).
LIMITS = {
    "log": 4 << 30,
    "description": 4 << 20,  # systems/<name>.json, entry.json: a few kB in every round
    "scaling": 64 << 10,  # scaling.json: one number
    "telemetry": 256 << 20,  # one row per device per second: a day on 8 GPUs is ~70 MB
    "published": 64 << 20,  # transcribed studies: a few hundred rows
}


class Refused(Exception):
    """A file that is not read: its issue code and the reason, in words."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def inside(path: str | Path, root: str | None) -> bool:
    """Whether `path`, its links resolved, lies in the folder `root` (resolved already); any
    path does where no root is given."""
    if root is None:
        return True
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def read_file(path: str | Path, kind: str, root: str | None = None) -> bytes:
    """The bytes of a regular file of `kind` (a key of LIMITS) inside `root`.

    Raises Refused (code missing, outside-tree, special-file, too-large or unreadable)."""
    limit = LIMITS[kind]
    if not inside(path, root):
        raise Refused("outside-tree", "a link to a file outside the tree read: not read")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError as exc:
        missing = os.path.lexists(path)
        raise Refused(
            "dangling-link" if missing else "missing",
            "a symbolic link to nothing" if missing else "no such file",
        ) from exc
    except OSError as exc:
        raise Refused("unreadable", f"cannot read: {exc.strerror}") from exc
    with open(fd, "rb", buffering=0) as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("special-file", "not a regular file (a FIFO, device or socket): not read")
        if st.st_size > limit:
            raise Refused("too-large", f"{_size(st.st_size)}, over the {_size(limit)} limit")
        try:
            data = handle.read(st.st_size + 1)  # one buffer of the file's size
            if len(data) > st.st_size:  # a log still being written
                data += handle.read(limit + 1 - len(data))
        except OSError as exc:
            raise Refused("unreadable", f"cannot read: {exc.strerror}") from exc
    if len(data) > limit:
        raise Refused("too-large", f"grew past the {_size(limit)} limit while read")
    return data


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.3g} {unit}"
    return f"{n} bytes"
