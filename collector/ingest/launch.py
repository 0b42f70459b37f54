"""Accelerators and nodes a run used, from what its log launched (launch.yml): the system
description names the largest job of a submission, a log one job of it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from collector.ingest import data
from collector.ingest.scan import Events, Issue


@dataclass(frozen=True)
class Launched:
    """Nodes and accelerators per node a log shows it launched; None where it does not say."""

    nodes: int | None = None
    per_node: int | None = None


NOT_LAUNCHED = Launched()  # a log that says nothing of its launch


@cache
def _patterns(group: str, kind: str) -> list[re.Pattern[bytes]]:
    """The patterns launch.yml lists under group.kind, compiled."""
    return [re.compile(text.encode()) for text in data("launch.yml")[group][kind]]


def launched(text: bytes | None, events: Events) -> Launched:
    """What the log's launcher lines (and per-node events) say; `text` is the log's bytes
    (None for a log too large to hold, whose events alone are read)."""
    found: list[int] = []
    per_node: set[int] = set()
    if text is not None:
        for pattern in _patterns("nodes", "distinct"):
            hosts = set(pattern.findall(text))
            if hosts:
                found.append(len(hosts))
        for pattern in _patterns("nodes", "largest"):
            found.extend(int(n) for n in pattern.findall(text))
        for pattern in _patterns("per_node", "same"):
            per_node.update(int(n) for n in pattern.findall(text))
    per_node_events = data("launch.yml")["nodes"]["per_node_events"]
    key = per_node_events.get(events.fmt.name) if events.fmt is not None else None
    if key is not None:
        count = sum(1 for k in events.keys if k == key)
        if count > 1:  # one such event may be rank 0's alone
            found.append(count)
    return Launched(
        max(found) if found else None,
        per_node.pop() if len(per_node) == 1 else None,
    )


def counted(described: dict[str, Any], log: Launched) -> tuple[dict[str, int | None], Issue | None]:
    """The run's accelerators and nodes: the description's, unless the log launched fewer
    (never more than the description states: a count above it is another thing the
    launcher printed). The issue says where the log replaced the description."""
    nodes, per_node = described.get("nodes"), described.get("accelerators_per_node")
    total = described.get("accelerators")
    out = {"accelerators": total, "nodes": nodes}
    if not total or not nodes or not per_node or total != nodes * per_node:
        return out, None  # TPU slices, CPU-only systems and unstated counts keep theirs
    used_nodes = log.nodes if log.nodes is not None and 1 <= log.nodes <= nodes else nodes
    used_per = (
        log.per_node if log.per_node is not None and 1 <= log.per_node <= per_node else per_node
    )
    if (used_nodes, used_per) == (nodes, per_node):
        return out, None
    out = {"accelerators": used_nodes * used_per, "nodes": used_nodes}
    why = (
        f"the log launched {used_nodes} nodes x {used_per} accelerators; the description "
        f"states {nodes} x {per_node} (its submission's largest job): counted "
        f"{used_nodes * used_per}"
    )
    return out, Issue("warning", "launched-count", why)
