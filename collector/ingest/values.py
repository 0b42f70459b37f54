"""Lenient decoding of logged values: MLPerf logs are not always strict JSON."""

from __future__ import annotations

import ast
import json
import math
import re
import time
import warnings
from typing import Any

_NUMBER_START = frozenset("0123456789")
# json's own C scanner: json.loads without its wrapper (whitespace checks, type dispatch)
_SCAN_JSON = json.JSONDecoder().scan_once
EARLIEST_UNIX_S = 1_420_070_400.0  # 2015-01-01 UTC: no MLPerf run's wall clock is earlier
AHEAD_S = 86_400.0  # a log may be stamped up to a day after it is read (clocks, time zones)
LONGEST_RUN_S = 366 * 86_400.0  # no training run of any round took a year
MAX_JSON_DEPTH = 32  # system descriptions nest 3 deep, logged values 2


class BadValue(ValueError):
    """The logged value could not be decoded by any rule."""


def decode_value(text: str) -> Any:
    """Decode a logged value: JSON first, then Python literals, then a bare word.

    Returns None for an empty value. Raises BadValue when the text looks structured
    (starts with a bracket or quote) but cannot be decoded.
    """
    text = text.strip()
    if not text:
        return None
    if text[0] in _NUMBER_START and text.isascii() and text.isdigit():
        return int(text)  # the common case (train_epoch: 3), without the JSON machinery
    try:  # as json.loads(text): text has no surrounding whitespace left
        found, end = _SCAN_JSON(text, 0)
        if end == len(text):
            return _bounded(found, text)
    except (ValueError, StopIteration):
        pass
    except RecursionError:
        raise BadValue(f"value nested deeper than {MAX_JSON_DEPTH} levels") from None
    try:
        with warnings.catch_warnings():  # odd escapes in logged strings are not our problem
            warnings.simplefilter("ignore")
            return _bounded(ast.literal_eval(text), text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        pass
    if text[0] in "[{\"'(":
        found = _mixed(text)
        if found is not None:
            return _bounded(found, text)
        raise BadValue(f"cannot decode value {text[:60]!r}")
    return text  # a bare word such as `sgd` or `categorical_cross_entropy`


_JSON_WORDS = re.compile(r"\b(null|true|false)\b|(?<=[0-9])%")
_AS_PYTHON = {"null": "None", "true": "True", "false": "False"}


def _mixed(text: str) -> Any:
    """A value that mixes JSON and Python: v0.6 `{"value": null, "metadata": {'file': ..}}`
    (Intel), percentages `{"value": 75.98%}` (Alibaba); None if it is not one."""
    python = _JSON_WORDS.sub(lambda m: _AS_PYTHON.get(m.group(1), "e-2"), text)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = ast.literal_eval(python)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None
    return found if isinstance(found, dict | list) else None


def _bounded(found: Any, text: str) -> Any:
    """A decoded value, unless it nests deeper than MAX_JSON_DEPTH (BadValue)."""
    if isinstance(found, dict | list | tuple) and json_depth(found) > MAX_JSON_DEPTH:
        raise BadValue(f"value nested deeper than {MAX_JSON_DEPTH} levels: {text[:40]!r}")
    return found


def json_depth(value: Any) -> int:
    """How deep lists and objects nest in a decoded value (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list | tuple):
            deepest = max(deepest, depth + 1)
            if depth + 1 <= MAX_JSON_DEPTH:  # deeper is refused anyway: no need to walk on
                stack.extend((child, depth + 1) for child in item)
    return deepest


def load_json(text: str | bytes) -> Any:
    """JSON of a file (a system description, scaling.json) with bounded nesting; BadValue
    saying why where it is not such JSON."""
    try:
        found = json.loads(text)
    except RecursionError:
        raise BadValue(f"not JSON: nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:
        raise BadValue(f"not JSON: {exc}") from None
    if json_depth(found) > MAX_JSON_DEPTH:
        raise BadValue(f"not JSON of a description: nested deeper than {MAX_JSON_DEPTH} levels")
    return found


def finite(value: Any) -> float | None:
    """A number as a finite float; None for anything else: text, booleans, NaN, infinities,
    integers too large for a float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def as_float(value: Any) -> float | None:
    """The finite number inside a logged quality value: a bare number or {"value": n}; None
    where there is none (NaN and infinities are none)."""
    if isinstance(value, dict):
        if "value" in value:
            return as_float(value["value"])
        for item in value.values():  # multi-metric (e.g. {"BBOX": .., "SEGM": ..}): first one
            return as_float(item)
        return None
    if isinstance(value, str):
        try:
            return finite(float(value))
        except ValueError:
            return None
    return finite(value)


def wall_clock(seconds: float | None) -> bool:
    """Whether a logged time reads as a date: a Unix time from EARLIEST_UNIX_S to a day after
    now (a log whose clock counts from boot has times that do not)."""
    return seconds is not None and EARLIEST_UNIX_S <= seconds <= time.time() + AHEAD_S


def impossible_time(seconds: float, now_unix_s: float) -> str | None:
    """Why no run can have started or stopped `seconds` after the Unix epoch, if none can:
    not a number, infinite, negative, or more than a day after `now_unix_s` (when the log
    is read). A time before EARLIEST_UNIX_S is possible: a clock of another origin."""
    if math.isnan(seconds):
        return "is not a number"
    if math.isinf(seconds):
        return "is infinite"
    if seconds < 0:
        return "is negative"
    if seconds > now_unix_s + AHEAD_S:
        return "is more than a day after the ingest"
    return None
