"""Read system descriptions (v0.5 entry.json, v0.6+ systems/<name>.json, collector's own)."""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from collector.ingest import data
from collector.ingest.files import Refused, read_file
from collector.ingest.scan import Issue
from collector.ingest.values import BadValue, finite, json_depth, load_json


def read_description(
    path: Path, root: str | None = None
) -> tuple[dict[str, Any] | None, str | None, list[Issue]]:
    """The parsed JSON of a description (a regular file inside the folder `root`), its
    sha256, and any problem reading it."""
    try:
        data = read_file(path, "description", root)
    except Refused as exc:
        return None, None, [Issue("error", exc.code, exc.message)]
    digest = hashlib.sha256(data).hexdigest()
    text = data.decode("utf-8", errors="replace")
    issues: list[Issue] = []
    try:
        doc = load_json(text)
    except BadValue as exc:
        doc = _logged_description(text)
        if doc is None and (doc := _without_trailing_commas(text)) is not None:
            note = f"{exc}; read with the commas before closing brackets dropped"
            issues.append(Issue("warning", "description-trailing-comma", note))
        if doc is None:
            return None, digest, [Issue("error", "bad-description", str(exc))]
    if not isinstance(doc, dict):
        return None, digest, [Issue("error", "bad-description", "not a JSON object")]
    return doc, digest, issues


# a JSON string (kept as it is) or a comma that closes an object or array (dropped)
_TRAILING_COMMA = re.compile(r'"(?:\\.|[^"\\])*"|,(?=\s*[}\]])')


def _without_trailing_commas(text: str) -> Any:
    """The JSON of ``text`` read with its commas before closing brackets dropped (as Alibaba's
    v0.7 descriptions are written); None if it has none or is not JSON even so."""
    lenient = _TRAILING_COMMA.sub(lambda m: "" if m.group(0) == "," else m.group(0), text)
    if lenient == text:
        return None
    try:
        return load_json(lenient)
    except BadValue:
        return None


def _logged_description(text: str) -> dict[str, Any] | None:
    """A v0.6 description written as mlperf_log_utils lines, `key: {"value": ...}` (NVIDIA):
    its `entry` value is a v0.5 entry.json as a Python literal; None if it is not one."""
    values: dict[str, Any] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        if not sep or not key.strip().isidentifier():
            continue
        try:
            values[key.strip()] = json.loads(rest)["value"]
        except (ValueError, TypeError, KeyError):
            return None
    try:
        entry = ast.literal_eval(values["entry"])
        nodes = entry.get("nodes")
        entry["nodes"] = [ast.literal_eval(nodes) if isinstance(nodes, str) else nodes]
        json_depth(entry)
    except (KeyError, ValueError, SyntaxError, AttributeError, RecursionError, MemoryError):
        return None
    return {**entry, "division": values.get("division"), "status": values.get("status")}


def system_row(doc: dict[str, Any] | None, issues: list[Issue] | None = None) -> dict[str, Any]:
    """The systems-table columns a description provides (v0.5 or v0.6+ field names, by
    descriptions.yml). A field whose value is not what its column holds (a count that is not
    a whole number, a memory size that is not positive) is left empty, with an issue added to
    `issues`."""
    if not doc:
        return {}
    flat = {_norm(k): v for k, v in doc.items()}
    nodes = flat.get("nodes")
    layout = "v0.5" if isinstance(nodes, list) else "v0.6+"
    node = nodes[0] if layout == "v0.5" and nodes and isinstance(nodes[0], dict) else {}
    fields = {**flat, **{f"node.{_norm(k)}": v for k, v in node.items()}}
    row = {}
    for column, (field, kind) in data("descriptions.yml")[layout].items():
        try:
            row[column] = _READ[kind](fields.get(field))
        except BadValue as exc:
            row[column] = None
            if issues is not None:
                issues.append(Issue("warning", "bad-value", f"{field}: {exc}; left empty"))
    per_node, stated = row["accelerators_per_node"], row.get("accelerator_interconnect")
    network = row["node_interconnect"] if layout == "v0.5" else None
    interconnect, inferred = classify_interconnect(
        stated, row["accelerator"], row["hardware"], network
    )
    # a count not stated (or not a count) is unknown, not zero: only 0 makes a CPU-only system
    row.update(
        accelerator=row["accelerator"] if per_node != 0 else None,
        accelerators=per_node * row["nodes"] if per_node is not None and row["nodes"] else per_node,
        interconnect=interconnect if per_node != 0 else "none",
        interconnect_inferred=inferred if per_node != 0 else False,
    )
    return row


def _norm(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.strip().lower()).strip("_")


def classify_interconnect(
    stated: str | None, accelerator: str | None, hardware: str | None, network: str | None
) -> tuple[str | None, bool]:
    """The interconnect class (nvswitch, nvlink, pcie) and whether it was inferred."""
    if stated and stated.upper() not in ("N/A", "NA", "NONE", ""):
        low = stated.lower()
        for name in ("nvswitch", "nvlink", "pcie"):
            if name in low:
                return name, False
    clues = " ".join(x for x in (hardware, network, accelerator) if x).lower()
    if "dgx-2" in clues or "dgx2" in clues or "nvswitch" in clues:
        return "nvswitch", True
    if "nvlink" in clues or "dgx-1" in clues or "dgx1" in clues or "sxm" in clues:
        return "nvlink", True
    if "pcie" in clues:
        return "pcie", True
    return None, False


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


_NOT_STATED = frozenset(["", "-", "n/a", "na", "none", "null", "tbd", "todo", "unknown"])
_COUNT = re.compile(r"\+?([0-9]+)(?:\.0*)?")
MAX_COUNT = 1_000_000  # more of anything in one system is a typo or a forgery
_MEMORY = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(tib|tb|t|gib|gb|g|mib|mb|m)?", re.IGNORECASE)
_TO_GIB = {"t": 1024.0, "g": 1.0, "m": 1 / 1024}  # by the unit's first letter; bare is GB


def _int(value: Any) -> int | None:
    """A count: a whole number from 0 to MAX_COUNT, as a number or as text holding only it;
    None where the description does not state it; BadValue for anything else."""
    if value is None or (isinstance(value, str) and value.strip().lower() in _NOT_STATED):
        return None
    number: float | None = None
    if isinstance(value, str):
        match = _COUNT.fullmatch(value.strip())
        number = int(match.group(1)) if match and len(match.group(1)) < 10 else None
    elif not isinstance(value, bool):
        number = finite(value)
    if number is None or number != int(number) or not 0 <= number <= MAX_COUNT:
        raise BadValue(f"{_shown(value)} is not a count")
    return int(number)


def _gib(value: Any) -> float | None:
    """A memory size in GiB, more than zero: bare numbers are GB as published; TB and MB
    convert; None where not stated; BadValue for anything else (`2x 24 GB`, `-32 GB`)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in _NOT_STATED):
        return None
    number: float | None = None
    if isinstance(value, str):
        match = _MEMORY.fullmatch(value.strip())
        if match:
            unit = (match.group(2) or "g")[0].lower()
            number = finite(float(match.group(1)) * _TO_GIB[unit])
    elif not isinstance(value, bool):
        number = finite(value)
    if number is None or not 0 < number < 1e9:
        raise BadValue(f"{_shown(value)} is not a memory size")
    return number


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


_READ: dict[str, Callable[[Any], Any]] = {
    "text": _text,
    "int": _int,
    "gib": _gib,
    "json": lambda value: json.dumps(value, sort_keys=True) if value else None,
}


@dataclass(frozen=True)
class Model:
    """One row of the canonical accelerator table (accelerators.yml), the columns that matching
    and counting read (the queries read the rest)."""

    key: str
    vendor: str
    kind: str  # gpu | tpu | npu | ipu | cpu
    cores_per_chip: int
    match: re.Pattern[str]
    chips_per_host: int | None = None  # TPU: chips one host drives, per Google's descriptions


@cache
def models() -> tuple[Model, ...]:
    """The canonical accelerator table, in matching order."""
    doc = data("accelerators.yml")
    return tuple(
        Model(
            m["key"],
            m["vendor"],
            m["kind"],
            m.get("cores_per_chip", 1),
            re.compile(m["match"], re.IGNORECASE),
            m.get("chips_per_host"),
        )
        for m in doc["models"]
    )


def canonical(*names: str | None) -> Model | None:
    """The model of the first name that maps onto the table."""
    for name in names:
        if name:
            for model in models():
                if model.match.search(name):
                    return model
    return None


# a TPU slice size: tpu-v3-512, TPU v3-8192, tpuv2-512, cloud_v2.512, tpu-trillium-1024
_SLICE = re.compile(
    r"(?:tpu[-_ ]?v?\d[a-z]*|trillium|ironwood|\bv[2-7][a-z]?)[.-](\d+)\b", re.IGNORECASE
)
_NOT_ACCELERATORS = frozenset(["", "n/a", "na", "none", "-", "cpu"])


def reconcile(row: dict[str, Any], *clues: str | None) -> tuple[dict[str, Any], list[Issue]]:
    """The systems row with its canonical accelerator model and vendor, and its counts made
    to agree with the hardware: a CPU-only system has 0 accelerators (its model is its host
    processor's); a TPU slice `v3-512` names TensorCores, so it has 256 chips, whatever its
    description counts. `clues` are other names of the system (its folder, its name)."""
    out, issues = dict(row), []
    name = (row.get("accelerator") or "").strip()
    per_node, nodes = row.get("accelerators_per_node"), row.get("nodes")
    if row and (name.lower() in _NOT_ACCELERATORS or per_node == 0):
        model = canonical(row.get("cpu"))
        out.update(accelerator=None, accelerators=0, accelerators_per_node=0)
        out.update(accelerator_model=model.key if model else None)
        out.update(accelerator_vendor=model.vendor if model else None)
        return out, issues
    hardware = [row.get("hardware"), *clues]
    model = canonical(name, *hardware)
    if model is None:
        return out, issues
    out.update(accelerator_model=model.key, accelerator_vendor=model.vendor)
    out["accelerator"] = row.get("accelerator") or model.key
    if model.kind != "tpu":
        return out, issues
    sizes = [int(m.group(1)) for text in hardware if text for m in [_SLICE.search(text)] if m]
    if not sizes:
        return _hosts(out, model), issues
    chips = sizes[0] // model.cores_per_chip
    counted = row.get("accelerators")
    if counted != chips:
        if counted is not None:
            issues.append(
                Issue(
                    "warning",
                    "accelerator-count",
                    f"{counted} accelerators described, but a {model.key} slice of "
                    f"{sizes[0]} has {chips} chips: counted {chips}",
                )
            )
        out["accelerators"] = chips
        out["accelerators_per_node"] = chips // nodes if nodes and chips % nodes == 0 else None
    return _hosts(out, model), issues


def _hosts(row: dict[str, Any], model: Model) -> dict[str, Any]:
    """A TPU slice described as one node counted in hosts: a slice of more chips than one host
    drives spans chips / chips_per_host hosts."""
    chips, per_host = row.get("accelerators"), model.chips_per_host
    if not chips or not per_host or row.get("nodes") not in (None, 1) or chips <= per_host:
        return row
    if chips % per_host:
        return row
    return {**row, "nodes": chips // per_host, "accelerators_per_node": per_host}
