"""The seven MLPerf Training v0.5 workloads, by benchmark name."""

from __future__ import annotations

import importlib

from collector.run.workloads.base import RunContext, Workload

_CLASSES = {
    "resnet": ("collector.run.workloads.resnet", "ResNetWorkload"),
    "ssd": ("collector.run.workloads.ssd", "SSDWorkload"),
    "maskrcnn": ("collector.run.workloads.maskrcnn", "MaskRCNNWorkload"),
    "gnmt": ("collector.run.workloads.gnmt", "GNMTWorkload"),
    "transformer": ("collector.run.workloads.transformer", "TransformerWorkload"),
    "ncf": ("collector.run.workloads.ncf", "NCFWorkload"),
    "minigo": ("collector.run.workloads.minigo", "MiniGoWorkload"),
}

BENCHMARKS = tuple(_CLASSES)


def workload_class(name: str) -> type[Workload]:
    """The workload class for benchmark ``name``."""
    module, cls = _CLASSES[name]
    return getattr(importlib.import_module(module), cls)


__all__ = ["BENCHMARKS", "RunContext", "Workload", "workload_class"]
