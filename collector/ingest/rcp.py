"""The RCP normalisation factor a review committee set for a submission (`scaling.json`)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from collector.ingest.files import Refused, read_file
from collector.ingest.values import BadValue, finite, load_json

SCALING_FILE = "scaling.json"


@lru_cache(maxsize=4096)
def scaling_factor(folder: Path, root: str | None = None) -> tuple[float | None, str | None]:
    """(factor, problem) of the `scaling.json` in a benchmark folder of results (a regular
    file inside the folder `root`): (None, None) where there is none, (None, one-line reason)
    where it cannot be read or holds no finite positive factor. MLCommons' result summarizer
    multiplies the olympic average of the folder's runs by this factor."""
    try:
        text = read_file(folder / SCALING_FILE, "scaling", root).decode("utf-8")
    except Refused as exc:
        return None, None if exc.code == "missing" else f"{SCALING_FILE}: {exc.message}"
    except UnicodeDecodeError:
        return None, f"{SCALING_FILE}: bytes that are not UTF-8"
    try:
        doc = load_json(text)
        factor = doc["scaling_factor"]
    except BadValue as exc:
        return None, f"{SCALING_FILE}: {exc}"
    except (KeyError, TypeError):
        return None, f"{SCALING_FILE} holds no scaling_factor"
    number = finite(factor)
    if number is None or not number > 0:
        shown = repr(factor) if len(repr(factor)) < 40 else f"{repr(factor)[:40]}..."
        return None, f"{SCALING_FILE}: scaling_factor {shown} is not a finite positive number"
    return number, None
