"""Numbers transcribed from published studies (runs/published/*.csv) as the `published` table."""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path

import pyarrow as pa
import yaml

from collector.errors import InputError
from collector.ingest.files import Refused, read_file
from collector.store.schemas import load

# the CSV columns: those of the `published` table that ingest does not derive
HEADER = tuple(n for n in load("published").names if n not in ("value_text", "qualifiers", "file"))
_TAG = re.compile(r"\s*\[([a-z ]+)\]")
STUDY_FIELDS = ("number", "kind", "title", "authors", "publisher", "date")


def is_published_folder(path: Path) -> bool:
    """True for a folder holding at least one CSV with the published-results header."""
    if not path.is_dir():
        return False
    return any(_has_header(csv_path) for csv_path in sorted(path.glob("*.csv")))


def _has_header(path: Path) -> bool:
    """Whether a CSV file starts with the published-results header; a file that cannot be
    read as text (binary, too large, a link out) cannot hold published results."""
    try:
        return _header(_text(path)) == HEADER
    except InputError:
        return False


def load_published(folder: str | Path) -> pa.Table:
    """Read every published-results CSV in `folder` into a validated `published` table."""
    rows = []
    for path in sorted(Path(folder).glob("*.csv")):
        text = _text(path)
        if _header(text) != HEADER:
            continue
        for line, raw in enumerate(csv.DictReader(io.StringIO(text, newline="")), start=2):
            rows.append(_row(raw, path.name, line))
    ids = [r["row_id"] for r in rows]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise InputError(f"{folder}: row_id repeated: {', '.join(duplicates)}")
    return load("published").table_from_rows(rows)


def load_studies(folder: str | Path) -> dict[str, dict[str, str]]:
    """What each transcribed study states about itself (studies.yml beside the CSVs), by the
    `study` value the CSVs use; empty where the folder has no such file."""
    path = Path(folder) / "studies.yml"
    if not path.exists():
        return {}
    try:
        doc = yaml.safe_load(_text(path))
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not readable YAML: {str(exc).splitlines()[0]}") from exc
    if not isinstance(doc, dict) or doc.get("schema_version") != 1:
        raise InputError(f"{path}: schema_version 1 expected")
    studies = doc.get("studies")
    if not isinstance(studies, dict):
        raise InputError(f"{path}: no `studies` mapping")
    out = {}
    for study, entry in studies.items():
        missing = [f for f in STUDY_FIELDS if not isinstance(entry, dict) or not entry.get(f)]
        if missing:
            raise InputError(f"{path}: study {study}: {', '.join(missing)} missing")
        out[str(study)] = {f: str(entry[f]) for f in STUDY_FIELDS}
    return out


def qualifiers(notes: str | None) -> str | None:
    """The bracketed tags at the start of a notes cell, comma-separated, or None."""
    tags, pos = [], 0
    while notes and (match := _TAG.match(notes, pos)):
        tags.append(match.group(1))
        pos = match.end()
    return ",".join(tags) or None


def _text(path: Path) -> str:
    """A file of a published folder as text: a regular UTF-8 file in that folder."""
    try:
        return read_file(path, "published", os.path.realpath(path.parent)).decode("utf-8")
    except Refused as exc:
        raise InputError(f"{path}: {exc.message}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: bytes that are not UTF-8 (at byte {exc.start})") from exc


def _header(text: str) -> tuple[str, ...]:
    return tuple(next(csv.reader(io.StringIO(text, newline="")), ()))


def _row(raw: dict[str, str], file: str, line: int) -> dict[str, object]:
    row: dict[str, object] = {k: (v.strip() or None) for k, v in raw.items()}
    where = f"{file}:{line}"
    for name in ("row_id", "study", "citation", "metric", "value", "unit"):
        if row[name] is None:
            raise InputError(f"{where}: {name} is empty")
    for name in ("accelerators", "nodes"):
        row[name] = _int(row[name], where, name)
    try:
        row["value_text"], row["value"] = row["value"], float(str(row["value"]))
    except ValueError as exc:
        raise InputError(f"{where}: value {row['value']!r} is not a number") from exc
    row["qualifiers"] = qualifiers(row["notes"])  # type: ignore[arg-type]
    row["file"] = file
    return row


def _int(text: object, where: str, name: str) -> int | None:
    if text is None:
        return None
    try:
        return int(str(text))
    except ValueError as exc:
        raise InputError(f"{where}: {name} {text!r} is not an integer") from exc
