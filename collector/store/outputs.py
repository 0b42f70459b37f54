"""Files collector writes where a user asks (`query -o`, `site --out`): exactly there, never
through a link planted at that place, never into a store, each file whole or not at all."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from collector.errors import InputError
from collector.store.snapshot import store_of


def refuse_store(path: str | Path, what: str) -> None:
    """InputError where `path` is or lies in a store: its files are the store's alone."""
    store = store_of(path)
    if store is not None:
        raise InputError(f"{path}: inside the store {store}; {what} never writes there")


def write_file(path: str | Path, data: bytes, check_store: bool = True) -> None:
    """Write `data` as the file `path`: a new file renamed into place, so that a reader sees
    the old or the new bytes, a link at `path` is replaced rather than written through, and
    a failed write (a full disk) leaves what was there. InputError in one line otherwise.
    `check_store=False` where the caller refused a store's folder already."""
    path = Path(path)
    if check_store:
        refuse_store(path, "collector")
    folder = path.parent
    if not folder.is_dir():
        raise InputError(f"{path}: no folder {folder} to write it in")
    if path.is_dir() and not path.is_symlink():
        raise InputError(f"{path}: a folder; name a file to write")
    try:
        mode = os.lstat(path).st_mode
        keep = stat.S_IMODE(mode) if stat.S_ISREG(mode) else None
    except FileNotFoundError:
        keep = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:40]}.", dir=folder)
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror})") from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, keep if keep is not None else 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write ({exc.strerror or exc})") from exc


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
