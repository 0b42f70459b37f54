"""The RCP normalisation factor a review committee set for a submission (`scaling.json`)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

SCALING_FILE = "scaling.json"


@lru_cache(maxsize=4096)
def scaling_factor(folder: Path) -> tuple[float | None, str | None]:
    """(factor, problem) of the `scaling.json` in a benchmark folder of results: (None, None)
    where there is none, (None, one-line reason) where it cannot be read. MLCommons' result
    summarizer multiplies the olympic average of the folder's runs by this factor."""
    path = folder / SCALING_FILE
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot read {SCALING_FILE}: {exc.strerror}"
    try:
        factor = json.loads(text)["scaling_factor"]
    except (ValueError, KeyError, TypeError):
        return None, f"{SCALING_FILE} holds no scaling_factor"
    if isinstance(factor, bool) or not isinstance(factor, int | float) or not factor > 0:
        return None, f"{SCALING_FILE}: scaling_factor {factor!r} is not a positive number"
    return float(factor), None
