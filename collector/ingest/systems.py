"""Read system descriptions (v0.5 entry.json, v0.6+ systems/<name>.json, collector's own)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from collector.ingest.scan import Issue

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def read_description(path: Path) -> tuple[dict[str, Any] | None, str | None, list[Issue]]:
    """The parsed JSON of a description, its sha256, and any problem reading it."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, None, [Issue("error", "unreadable", f"cannot read: {exc.strerror}")]
    digest = hashlib.sha256(data).hexdigest()
    try:
        doc = json.loads(data.decode("utf-8", errors="replace"))
    except ValueError as exc:
        return None, digest, [Issue("error", "bad-description", f"not JSON: {exc}")]
    if not isinstance(doc, dict):
        return None, digest, [Issue("error", "bad-description", "not a JSON object")]
    return doc, digest, []


def system_row(doc: dict[str, Any] | None) -> dict[str, Any]:
    """The systems-table columns a description provides (v0.5 or v0.6+ field names)."""
    if not doc:
        return {}
    flat = {_norm(k): v for k, v in doc.items()}
    if isinstance(flat.get("nodes"), list):
        return _v05(flat)
    return _v06(flat)


def _norm(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.strip().lower()).strip("_")


def _v05(d: dict[str, Any]) -> dict[str, Any]:
    node = d["nodes"][0] if d["nodes"] and isinstance(d["nodes"][0], dict) else {}
    node = {_norm(k): v for k, v in node.items()}
    accelerator = _text(node.get("accelerator"))
    per_node = _int(node.get("num_accelerators"))
    nodes = _int(node.get("num_nodes"))
    hardware = _text(d.get("hardware"))
    node_interconnect = _text(d.get("interconnect"))
    interconnect, inferred = classify_interconnect(None, accelerator, hardware, node_interconnect)
    return {
        "division": _text(d.get("division")),
        "availability": _text(d.get("status")),
        "hardware": hardware,
        "accelerator": accelerator if per_node else None,
        "accelerators_per_node": per_node,
        "nodes": nodes,
        "accelerators": per_node * nodes if per_node is not None and nodes else per_node,
        "interconnect": interconnect if per_node else "none",
        "interconnect_inferred": inferred if per_node else False,
        "node_interconnect": node_interconnect,
        "cpu": _text(node.get("cpu")),
        "cpu_cores": _int(node.get("num_cores")),
        "host_memory_gib": _gib(node.get("sys_mem_size")),
        "framework": _text(d.get("framework")),
        "os": _text(d.get("os")),
        "software": _text(d.get("libraries")),
    }


def _v06(d: dict[str, Any]) -> dict[str, Any]:
    accelerator = _text(d.get("accelerator_model_name"))
    per_node = _int(d.get("accelerators_per_node"))
    nodes = _int(d.get("number_of_nodes"))
    stated = _text(d.get("accelerator_interconnect"))
    interconnect, inferred = classify_interconnect(
        stated, accelerator, _text(d.get("system_name")), None
    )
    software = d.get("other_software_stack")
    return {
        "division": _text(d.get("division")),
        "availability": _text(d.get("status")),
        "hardware": _text(d.get("system_name")),
        "accelerator": accelerator if per_node else None,
        "accelerators_per_node": per_node,
        "nodes": nodes,
        "accelerators": per_node * nodes if per_node is not None and nodes else per_node,
        "accelerator_memory_gib": _gib(d.get("accelerator_memory_capacity")),
        "interconnect": interconnect if per_node else "none",
        "interconnect_inferred": inferred if per_node else False,
        "accelerator_interconnect": stated,
        "node_interconnect": _text(d.get("host_networking")),
        "cpu": _text(d.get("host_processor_model_name")),
        "cpu_sockets": _int(d.get("host_processors_per_node")),
        "cpu_cores": _int(d.get("host_processor_core_count")),
        "host_memory_gib": _gib(d.get("host_memory_capacity")),
        "framework": _text(d.get("framework")),
        "os": _text(d.get("operating_system")),
        "software": json.dumps(software, sort_keys=True) if software else None,
    }


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


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    match = _NUMBER.search(str(value)) if value is not None else None
    return int(float(match.group(0))) if match and float(match.group(0)) >= 0 else None


def _gib(value: Any) -> float | None:
    """A memory size in GiB: bare numbers are GB as published; TB/MB suffixes convert."""
    if value is None or isinstance(value, bool):
        return None
    text = str(value).upper()
    match = _NUMBER.search(text)
    if not match:
        return None
    number = float(match.group(0))
    if "TB" in text or "TIB" in text:
        number *= 1024
    elif "MB" in text or "MIB" in text:
        number /= 1024
    return number
