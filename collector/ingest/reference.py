"""Reference data that enters the store with the runs, so that answers never depend on the
working directory: the official trees' origins (a `sources` CSV), the result logs their copies
lacked (a `missing_logs` CSV), accelerator-hour prices (a `prices` CSV; collector's example
rates until one is ingested), the published studies (their CSV folder and its studies.yml) and
the dense matmul ceilings the runner measured beside a local system description
(`systems/<configuration>.ceilings.json`).

A CSV file given to ingest is reference data when its header is one of HEADERS: it replaces
that stored table whole. Ceilings are found in the folders given, one level down too (a
folder of hosts), and replace the stored rows of their description.
"""

from __future__ import annotations

import csv
import json
import math
import os
import stat
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from collector.errors import InputError
from collector.ingest.published import is_published_folder, load_published, load_studies
from collector.ingest.rows import IssueRow
from collector.store.schemas import load

HEADERS = {
    "sources": ("tree", "repository", "commit", "description"),
    "missing_logs": ("tree", "path"),
    "prices": ("accelerator_key", "usd_per_accelerator_hour", "label", "note"),
}
CEILINGS = ("systems/*.ceilings.json", "*/systems/*.ceilings.json")
CEILINGS_MAX_BYTES = 1 << 20  # a ceilings file holds a few numbers


@dataclass
class Reference:
    """The reference data among the paths given to ingest, and the paths left to read as logs."""

    tables: dict[str, pa.Table] = field(default_factory=dict)  # each replaces its stored table
    ceilings: pa.Table | None = None  # replace the stored rows of their descriptions
    issues: list[IssueRow] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)


def read(paths: list[Path]) -> Reference:
    """Sort the paths given to ingest: reference CSV files are read here (an error in one is
    an InputError naming the file and line), and published-study folders (an error in one is
    an ingest issue naming it, the rest goes on); the rest are logs, whose folders are
    searched for ceilings files."""
    ref = Reference()
    found, studies = [], []
    for path in paths:
        table = _csv_kind(path)
        if table is not None:
            ref.tables[table] = _read_csv(table, path)
        elif not is_published_folder(path):
            ref.logs.append(path)
        else:
            try:
                found.append(load_published(path))
                studies += [{"study": s, **d} for s, d in load_studies(path).items()]
            except InputError as exc:  # one bad study file: an issue, the rest goes on
                why = str(exc).removeprefix(f"{path}: ")
                ref.issues.append(IssueRow(str(path), None, "error", "bad-published", why))
    if found:
        ref.tables["published"] = pa.concat_tables(found)
        ref.tables["studies"] = load("studies").table_from_rows(studies)
    rows = []
    for folder in (p for p in ref.logs if p.is_dir()):
        for path in sorted({f for pattern in CEILINGS for f in folder.glob(pattern)}):
            rel = path.relative_to(folder.parent).as_posix()
            found, problem = _ceilings(path, rel.removesuffix(".ceilings.json") + ".json")
            rows += found
            if problem:
                ref.issues.append(IssueRow(rel, None, "warning", "bad-ceilings", problem))
    if rows:
        ref.ceilings = load("measured_ceilings").table_from_rows(rows)
    return ref


def changes(ref: Reference, stored: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """The stored tables this reference data changes, as they become."""
    new = dict(ref.tables)
    if ref.ceilings is not None:
        old = stored["measured_ceilings"]
        kept = pc.invert(pc.is_in(old["description_path"], ref.ceilings["description_path"]))
        new["measured_ceilings"] = pa.concat_tables([old.filter(kept), ref.ceilings])
    return {name: table for name, table in new.items() if not table.equals(stored[name])}


def example_prices() -> pa.Table:
    """collector's example accelerator-hour rates (prices.csv of this package): examples,
    not quoted prices, labelled so."""
    return _read_csv("prices", resources.files(__package__).joinpath("prices.csv"))


def _csv_kind(path: Path) -> str | None:
    """The reference table a file holds, by its CSV header; None for any other file."""
    if path.suffix.lower() != ".csv" or not _regular(path):
        return None
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            header = tuple(next(csv.reader(handle), ()))
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    return next((table for table, names in HEADERS.items() if names == header), None)


def _read_csv(table: str, path: Path) -> pa.Table:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from exc
    return _table(table, rows, str(path))


def _table(table: str, rows: list[dict[str, Any]], where: str) -> pa.Table:
    """Rows of a reference CSV as the stored table: empty cells null, numbers checked."""
    schema = load(table)
    out = []
    for line, raw in enumerate(rows, start=2):
        row = {k: (v.strip() or None) if isinstance(v, str) else None for k, v in raw.items()}
        for column in schema.columns:
            value = row.get(column["name"])
            if value is None and not column["nullable"]:
                raise InputError(f"{where}:{line}: {column['name']} is empty")
            if value is not None and column["type"] == "float64":
                row[column["name"]] = _positive(value, f"{where}:{line}: {column['name']}")
        out.append(row)
    keys = [tuple(r[k] for k in schema.key) for r in out]
    if len(set(keys)) != len(keys):
        raise InputError(f"{where}: a {', '.join(schema.key)} is listed twice")
    return schema.table_from_rows(out)


def _positive(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{where} {text!r} is not a positive number")
    return value


def _ceilings(path: Path, described: str) -> tuple[list[dict[str, Any]], str | None]:
    """The rows of one ceilings file, or a problem that leaves it out."""
    if not _regular(path) or path.stat().st_size > CEILINGS_MAX_BYTES:
        return [], "not a regular file of at most 1 MiB: left out"
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        return [], f"not readable JSON ({exc}): left out"
    tflops = doc.get("matmul_tflops") if isinstance(doc, dict) else None
    if tflops is None:
        return [], None  # the runner skipped the measurement
    if not isinstance(tflops, dict):
        return [], "matmul_tflops is not an object of precisions: left out"
    rows, bad = [], []
    for precision, value in tflops.items():
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if number and math.isfinite(value) and value > 0:
            rows.append(
                {
                    "description_path": described,
                    "precision": str(precision),
                    "matmul_tflops": float(value),
                    "measured_at": str(doc["measured_at"]) if doc.get("measured_at") else None,
                }
            )
        else:
            bad.append(str(precision))
    problem = f"matmul_tflops of {', '.join(bad)} not a positive number: left out"
    return rows, problem if bad else None


def _regular(path: Path) -> bool:
    """A regular file, not a link (links may lead out of the tree)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
