"""Samples taken beside a local run (``result_<i>.telemetry.csv``), read into telemetry rows.

The file is what ``collector run`` writes while a run is in progress: a header, then one row
per device per sample. Older files lack some columns (``unix_s``, the SM clock and the
temperature); those read as null. A row that cannot be read is reported with its line and
left out; the rest of the file is kept. Problems are warnings: the run itself is read from
its log whatever its telemetry holds.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

from collector.ingest.scan import Issue

COLUMNS = (
    "time_s",
    "unix_s",
    "device",
    "gpu_util_pct",
    "gpu_mem_used_mib",
    "gpu_power_w",
    "gpu_sm_clock_mhz",
    "gpu_temp_c",
    "cpu_util_pct",
)
REQUIRED = ("time_s", "device")
SUFFIX = ".telemetry.csv"


def telemetry_path(log: Path) -> Path:
    """Where the telemetry of the run logged in `log` is kept."""
    return log.with_name(log.stem + SUFFIX)


def read_telemetry(data: bytes, run_id: str) -> tuple[list[dict[str, Any]], list[Issue]]:
    """Telemetry rows of one run from the bytes of its CSV file, and the problems found."""
    issues: list[Issue] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        issues.append(Issue("warning", "not-utf8", f"bytes that are not UTF-8 ({exc.reason})"))
        text = data.decode("utf-8", errors="replace")
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if not header:
        return [], [Issue("warning", "empty", "no telemetry header", 1)]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        return [], [Issue("warning", "missing-field", f"header lacks {', '.join(missing)}", 1)]
    unknown = [c for c in header if c not in COLUMNS]
    if unknown:
        issues.append(Issue("warning", "unknown-key", f"columns ignored: {', '.join(unknown)}", 1))
    rows: list[dict[str, Any]] = []
    seq: dict[str, int] = {}
    for cells in reader:
        line = reader.line_num
        if not cells:
            continue
        if len(cells) != len(header):
            message = f"{len(cells)} fields where the header has {len(header)}"
            issues.append(Issue("warning", "bad-row", message, line))
            continue
        row: dict[str, Any] = {"run_id": run_id}
        try:
            for name, cell in zip(header, cells, strict=True):
                if name == "device":
                    row[name] = cell.strip()
                elif name in COLUMNS:
                    row[name] = _number(cell)
        except ValueError as exc:
            issues.append(Issue("warning", "bad-value", str(exc), line))
            continue
        if not row["device"] or row["time_s"] is None:
            issues.append(Issue("warning", "bad-row", "no device or no time", line))
            continue
        row["seq"] = seq.get(row["device"], 0)
        seq[row["device"]] = row["seq"] + 1
        rows.append(row)
    return rows, issues


def _number(cell: str) -> float | None:
    """A cell as a finite float; empty cells are null."""
    cell = cell.strip()
    if not cell:
        return None
    try:
        value = float(cell)
    except ValueError:
        raise ValueError(f"not a number: {cell[:40]!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {cell[:40]!r}")
    return value
