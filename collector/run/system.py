"""The system description of a run (MLPerf ``systems/*.json`` fields plus what collector adds).

Everything torch reports (versions, peer access, visible GPUs) is read here; the torch-free
probes (host, CPU, NVML, topology, fabric) live in :mod:`collector.run.sysinfo`.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
from pathlib import Path
from typing import Any

import psutil
import torch
from rich.console import Console

from collector.run.ceilings import ensure_ceilings
from collector.run.spec import RunSpec
from collector.run.sysinfo import (
    NCCL_ENV,
    cpu_model,
    fabric,
    gpus,
    hostname,
    link_class,
    nvml,
    parse_topology,
    run_command,
)


def p2p_matrix(n: int) -> list[list[bool]]:
    """``torch.cuda.can_device_access_peer`` for each GPU pair."""
    return [[i == j or torch.cuda.can_device_access_peer(i, j) for j in range(n)] for i in range(n)]


def versions() -> dict[str, Any]:
    """torch, CUDA, cuDNN, NCCL and driver versions (None where absent)."""
    v: dict[str, Any] = {"torch": torch.__version__, "cuda": torch.version.cuda}
    v["cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    nccl = None
    with contextlib.suppress(Exception):
        nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else None
    v["nccl"] = nccl
    nv = nvml()
    drv = nv.nvmlSystemGetDriverVersion() if nv else None
    v["driver"] = drv.decode() if isinstance(drv, bytes) else drv
    return v


def node_facts(workers: int) -> dict[str, Any]:
    """What one node of a multi-node job contributes to the description: host, GPUs, fabric."""
    gs = gpus()[:workers] if torch.cuda.is_available() else []
    return {
        "host": hostname(),
        "cpu": cpu_model(),
        "vcpus": psutil.cpu_count(logical=True),
        "memory_gb": round(psutil.virtual_memory().total / 2**30),
        "gpus": gs,
        "fabric": fabric(),
    }


def describe_system(
    config: str,
    org: str,
    workers: int,
    precision: str,
    interconnect: str,
    nodes: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The system description for one configuration (MLPerf v0.7 field names).

    ``nodes`` (from :func:`node_facts`, one per node) describes a multi-node job: the count
    goes to ``number_of_nodes``, the first node's fabric to ``host_networking``, and the list
    to ``collector.nodes``. Without it the description is of this host alone.
    """
    here = node_facts(workers)
    gs = here["gpus"]
    topo = parse_topology(run_command(["nvidia-smi", "topo", "-m"]) if gs else "")
    return {
        "submitter": org,
        "division": "local",
        "status": "local",
        "system_name": config,
        "number_of_nodes": len(nodes) if nodes else 1,
        "host_processors_per_node": 1,
        "host_processor_model_name": here["cpu"],
        "host_processor_core_count": psutil.cpu_count(logical=False) or os.cpu_count(),
        "host_processor_vcpu_count": here["vcpus"],
        "host_memory_capacity": f"{here['memory_gb']} GB",
        "host_storage_type": "",
        "host_networking": nodes[0]["fabric"]["summary"] if nodes else "",
        "accelerators_per_node": len(gs),
        "accelerator_model_name": gs[0]["name"] if gs else "",
        "accelerator_memory_capacity": f"{gs[0]['memory_mib'] / 1024:.0f} GB" if gs else "",
        "accelerator_interconnect": link_class(topo) if gs else "none",
        "framework": f"PyTorch {torch.__version__}",
        "operating_system": f"{platform.system()} {platform.release()}",
        "sw_notes": "",
        "collector": {
            "precision": precision,
            "workers": workers,
            "topology": topo,
            "p2p": p2p_matrix(len(gs)) if len(gs) > 1 else [],
            "power_limit_w": [g.get("power_limit_w") for g in gs],
            "gpus": gs,
            "versions": versions(),
            "interconnect_env": NCCL_ENV[interconnect] if gs else {},
            **({"nodes": nodes} if nodes else {}),
        },
    }


def capture_systems(
    specs: list[RunSpec],
    out: Path,
    ceilings: bool,
    nodes: list[dict[str, Any]] | None = None,
    console: Console | None = None,
) -> None:
    """Write each configuration's system description under ``out/systems`` (of ``nodes``
    where given, else this host) and, with ``ceilings``, its ceilings (measured once per GPU
    count)."""
    measured: dict[int, dict] = {}
    for config in dict.fromkeys(s.config for s in specs):
        s = next(x for x in specs if x.config == config)
        desc = describe_system(config, s.org, s.workers, s.precision, s.interconnect, nodes)
        write_json(out / "systems" / f"{config}.json", desc)
        path = out / "systems" / f"{config}.ceilings.json"
        if not ceilings:
            continue
        if s.accelerators in measured and not path.exists():
            write_json(path, measured[s.accelerators])
            continue
        if console and not path.exists():
            console.print(f"measuring ceilings for {config} (once per system)")
        measured[s.accelerators] = ensure_ceilings(path, s.accelerators)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` whole: runs of other GPUs may write the same description at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)
