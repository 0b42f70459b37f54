"""Reading the files of a result tree: regular files inside the tree, each within its limit.

Every file ingest and check read (logs, system descriptions, `entry.json`, `scaling.json`,
telemetry, published studies) comes through `read_file`: a link that leads out of the tree, a
FIFO, device or socket (which would block or never end), and a file over its kind's size
limit are refused with a reason, never opened for reading.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
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


PIECE_BYTES = 64 << 20  # a log larger than this is read in pieces of about this size


class Refused(Exception):
    """A file that is not read: its issue code and the reason, in words."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def read_file(path: str | Path, kind: str, root: str | None = None) -> bytes:
    """The bytes of a regular file of `kind` (a key of LIMITS) inside `root`.

    Raises Refused (code missing, outside-tree, special-file, too-large or unreadable)."""
    limit = LIMITS[kind]
    with open_inside(path, root) as handle:
        st = _checked(handle, limit)
        try:
            data = handle.read(st.st_size + 1)  # one buffer of the file's size
            if len(data) > st.st_size:  # a log still being written
                data += handle.read(limit + 1 - len(data))
        except OSError as exc:
            raise Refused("unreadable", f"cannot read: {exc.strerror}") from exc
    if len(data) > limit:
        raise Refused("too-large", f"grew past the {_size(limit)} limit while read")
    return data


def read_log(path: str | Path, root: str | None = None) -> bytes | LargeFile:
    """A log as read_file reads it; one larger than PIECE_BYTES as a LargeFile, read in
    pieces when asked, never whole."""
    with open_inside(path, root) as handle:
        st = _checked(handle, LIMITS["log"])
    if st.st_size <= PIECE_BYTES:
        return read_file(path, "log", root)
    return LargeFile(str(path), root, st.st_size, (st.st_dev, st.st_ino, st.st_mtime_ns))


@dataclass(frozen=True)
class LargeFile:
    """A log too large to hold whole: read in pieces that end at a newline, each time
    checked to be the same file, unchanged."""

    path: str
    root: str | None
    size: int
    stamp: tuple[int, int, int]  # device, inode, modification time

    def __len__(self) -> int:
        return self.size

    def pieces(self) -> Iterator[bytes]:
        """The file's bytes in pieces of about PIECE_BYTES, each ending at a newline (a line
        longer than a piece is cut). Refused where the file changed since it was measured."""
        with open_inside(self.path, self.root) as handle:
            st = _checked(handle, LIMITS["log"])
            if (st.st_dev, st.st_ino, st.st_mtime_ns) != self.stamp or st.st_size != self.size:
                raise Refused("changed", "changed while it was read: read it again")
            carry = b""
            while block := handle.read(PIECE_BYTES):
                data = carry + block
                end = data.rfind(b"\n") + 1
                if end == 0:  # no newline yet
                    if len(data) < 2 * PIECE_BYTES:
                        carry = data
                        continue
                    end = len(data)  # a line longer than two pieces is cut
                yield data[:end]
                carry = data[end:]
            if carry:
                yield carry
            st = os.fstat(handle.fileno())
            if (st.st_dev, st.st_ino, st.st_mtime_ns) != self.stamp or st.st_size != self.size:
                raise Refused("changed", "changed while it was read: read it again")

    def sha256(self) -> str:
        """The sha256 of the file's bytes, read in pieces."""
        digest = hashlib.sha256()
        for piece in self.pieces():
            digest.update(piece)
        return digest.hexdigest()


def open_inside(path: str | Path, root: str | None):  # noqa: ANN202 (a file object)
    """The file at `path` opened for reading without blocking (a FIFO), where `path`, its links
    resolved, lies in the folder `root` (resolved already; anywhere where root is None)."""
    if root is not None:
        real = os.path.realpath(path)
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
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
    return open(fd, "rb", buffering=0)


def _checked(handle, limit: int) -> os.stat_result:  # noqa: ANN001 (a file object)
    """The status of an open file: a regular file within `limit` bytes, else Refused."""
    st = os.fstat(handle.fileno())
    if not stat.S_ISREG(st.st_mode):
        raise Refused("special-file", "not a regular file (a FIFO, device or socket): not read")
    if st.st_size > limit:
        raise Refused("too-large", f"{_size(st.st_size)}, over the {_size(limit)} limit")
    return st


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.3g} {unit}"
    return f"{n} bytes"
