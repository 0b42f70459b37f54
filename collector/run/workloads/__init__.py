"""The workloads by benchmark name: the seven of MLPerf Training v0.5 and the six of v5.1 (two
language models, RetinaNet, R-GAT, DLRM-DCNv2 and Flux.1)."""

from __future__ import annotations

from collector.run.workloads.base import Workload
from collector.run.workloads.dlrm import DLRMWorkload
from collector.run.workloads.flux import FluxWorkload
from collector.run.workloads.gnmt import GNMTWorkload
from collector.run.workloads.llama import Llama2LoRAWorkload, Llama31Workload
from collector.run.workloads.maskrcnn import MaskRCNNWorkload
from collector.run.workloads.minigo import MiniGoWorkload
from collector.run.workloads.ncf import NCFWorkload
from collector.run.workloads.resnet import ResNetWorkload
from collector.run.workloads.retinanet import RetinaNetWorkload
from collector.run.workloads.rgat import RGATWorkload
from collector.run.workloads.ssd import SSDWorkload
from collector.run.workloads.transformer import TransformerWorkload

WORKLOADS: dict[str, type[Workload]] = {
    "resnet": ResNetWorkload,
    "ssd": SSDWorkload,
    "maskrcnn": MaskRCNNWorkload,
    "gnmt": GNMTWorkload,
    "transformer": TransformerWorkload,
    "ncf": NCFWorkload,
    "minigo": MiniGoWorkload,
    "llama31_8b": Llama31Workload,
    "llama2_70b_lora": Llama2LoRAWorkload,
    "retinanet": RetinaNetWorkload,
    "rgat": RGATWorkload,
    "dlrm_dcnv2": DLRMWorkload,
    "flux1": FluxWorkload,
}


def workload_class(name: str) -> type[Workload]:
    """The workload class for benchmark ``name``."""
    return WORKLOADS[name]


__all__ = ["WORKLOADS", "Workload", "workload_class"]
