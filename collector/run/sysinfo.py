"""System capture: the MLPerf v0.7-style system description JSON, plus a ``collector`` block.

GPU facts come from NVML (``pynvml``, from nvidia-ml-py) and ``nvidia-smi topo -m``; host facts
from psutil and /proc. Everything degrades gracefully: on a machine without GPUs the description
says 0 accelerators and the GPU fields are empty.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

import psutil

NCCL_ENV = {
    # NVLink SHARP / multicast stays off on every NCCL job.
    "default": {"NCCL_NVLS_ENABLE": "0"},
    # No peer-to-peer (NVLink or PCIe P2P): NCCL moves data through host shared memory, as on
    # GPUs without a P2P path. SHM stays on so intra-node traffic does not fall back to sockets.
    "no-p2p": {"NCCL_NVLS_ENABLE": "0", "NCCL_P2P_DISABLE": "1"},
    "none": {},
}

TOPO_TOKENS = re.compile(r"^(X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC)$")


def hostname() -> str:
    """This host's short name, lowercased and safe for file names."""
    return safe_name(socket.gethostname().split(".")[0]) or "host"


def safe_name(text: str) -> str:
    """Lowercase ``text`` and keep only ``[a-z0-9._-]``."""
    return re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-")


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (or platform)."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _nvml() -> Any:
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml
    except Exception:  # no driver, no library, no GPU
        return None


def gpus() -> list[dict[str, Any]]:
    """Per GPU: name, memory (MiB), power limit (W), via NVML; empty without NVIDIA GPUs."""
    nv = _nvml()
    if nv is None:
        return []
    out = []
    for i in range(nv.nvmlDeviceGetCount()):
        h = nv.nvmlDeviceGetHandleByIndex(i)
        name = nv.nvmlDeviceGetName(h)
        info: dict[str, Any] = {
            "index": i,
            "name": name.decode() if isinstance(name, bytes) else name,
            "memory_mib": nv.nvmlDeviceGetMemoryInfo(h).total // 2**20,
        }
        with contextlib.suppress(Exception):
            info["power_limit_w"] = nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000
        out.append(info)
    return out


def accel_short(name: str) -> str:
    """A short accelerator tag for config names: 'NVIDIA H200' -> 'h200'."""
    name = re.sub(r"^(nvidia|amd|intel)\s+", "", name.strip(), flags=re.I)
    return safe_name(name.split()[0]) if name else "gpu"


def config_name(
    host: str, workers: int, accel: str, precision: str, interconnect: str, nodes: int = 1
) -> str:
    """``<host>_<n>x<accel>_<precision>_<interconnect>``, lowercase, [a-z0-9._-] only.

    Multi-node jobs are ``<host>_<nodes>n<n>x<accel>_...`` with ``<host>`` the first node and
    ``<n>`` the workers per node.
    """
    width = f"{nodes}n{workers}x" if nodes > 1 else f"{workers}x"
    return safe_name(f"{host}_{width}{accel}_{precision}_{interconnect}")


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def link_class(topology: dict[str, Any]) -> str:
    """The GPU interconnect a topology matrix shows: NVLink where every pair is NV#, else PCIe."""
    cells = [
        c for i, row in enumerate(topology.get("matrix", [])) for j, c in enumerate(row) if i != j
    ]
    if not cells:
        return "none"
    if all(c.startswith("NV") for c in cells):
        links = sorted({c for c in cells})
        return f"NVLink ({', '.join(links)} between every pair)"
    if any(c.startswith("NV") for c in cells):
        return "NVLink between some pairs, PCIe between others"
    return "PCIe (" + ", ".join(sorted(set(cells))) + ")"


def parse_topology(text: str) -> dict[str, Any]:
    """Parse ``nvidia-smi topo -m``: GPU names and the link matrix (NV#, PIX, PXB, PHB, ...)."""
    text = _ANSI.sub("", text)  # nvidia-smi underlines the header on a terminal
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return {"gpus": [], "matrix": []}
    header = lines[0].split()
    cols = [h for h in header if re.fullmatch(r"GPU\d+", h)]
    rows: dict[str, list[str]] = {}
    for ln in lines[1:]:
        parts = ln.split()
        if not parts or not re.fullmatch(r"GPU\d+", parts[0]):
            continue
        cells = parts[1 : 1 + len(cols)]
        if all(TOPO_TOKENS.match(c) for c in cells):
            rows[parts[0]] = cells
    return {"gpus": cols, "matrix": [rows[c] for c in cols if c in rows]}


def _run(cmd: list[str]) -> str:
    if not shutil.which(cmd[0]):
        return ""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def p2p_matrix(n: int) -> list[list[bool]]:
    """``torch.cuda.can_device_access_peer`` for each GPU pair."""
    import torch

    return [[i == j or torch.cuda.can_device_access_peer(i, j) for j in range(n)] for i in range(n)]


def versions() -> dict[str, Any]:
    """torch, CUDA, cuDNN, NCCL and driver versions (None where absent)."""
    import torch

    v: dict[str, Any] = {"torch": torch.__version__, "cuda": torch.version.cuda}
    v["cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    nccl = None
    with contextlib.suppress(Exception):
        nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else None
    v["nccl"] = nccl
    nv = _nvml()
    drv = nv.nvmlSystemGetDriverVersion() if nv else None
    v["driver"] = drv.decode() if isinstance(drv, bytes) else drv
    return v


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def fabric(sys_root: Path = Path("/sys")) -> dict[str, Any]:
    """The inter-node fabric this host shows: InfiniBand ports, else network interface speeds.

    InfiniBand (and RoCE) devices come from ``class/infiniband/<dev>/ports/<n>`` (rate, state,
    link layer); without any, the non-loopback interfaces under ``class/net`` with their speed
    in Mb/s (absent where the driver does not report one, as on many virtual NICs).
    """
    ports = []
    ib = sys_root / "class" / "infiniband"
    for dev in sorted(ib.iterdir()) if ib.is_dir() else []:
        for port in sorted((dev / "ports").iterdir()) if (dev / "ports").is_dir() else []:
            ports.append(
                {
                    "device": dev.name,
                    "port": port.name,
                    "rate": _read(port / "rate"),
                    "state": _read(port / "state"),
                    "link_layer": _read(port / "link_layer"),
                }
            )
    if ports:
        active = [p for p in ports if "ACTIVE" in p["state"]] or ports
        rates = sorted({p["rate"] for p in active if p["rate"]})
        summary = f"InfiniBand: {len(active)} port(s)" + (f", {', '.join(rates)}" if rates else "")
        return {"kind": "infiniband", "summary": summary, "ports": ports}
    nics = []
    net = sys_root / "class" / "net"
    for nic in sorted(net.iterdir()) if net.is_dir() else []:
        if nic.name == "lo":
            continue
        speed = _read(nic / "speed")
        mbps = int(speed) if speed.lstrip("-").isdigit() and int(speed) > 0 else None
        nics.append({"interface": nic.name, "speed_mbps": mbps, "state": _read(nic / "operstate")})
    up = [n for n in nics if n["state"] == "up"] or nics
    summary = ", ".join(
        f"{n['interface']} {n['speed_mbps']} Mb/s" if n["speed_mbps"] else n["interface"]
        for n in up
    )
    return {"kind": "ethernet" if nics else "none", "summary": summary, "interfaces": nics}


def node_facts(workers: int) -> dict[str, Any]:
    """What one node of a multi-node job contributes to the description: host, GPUs, fabric."""
    import torch

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
    import torch

    gs = gpus()[:workers] if torch.cuda.is_available() else []
    ver = versions()
    mem = psutil.virtual_memory().total
    accel = gs[0]["name"] if gs else ""
    topo = parse_topology(_run(["nvidia-smi", "topo", "-m"])) if gs else {"gpus": [], "matrix": []}
    return {
        "submitter": org,
        "division": "local",
        "status": "local",
        "system_name": config,
        "number_of_nodes": len(nodes) if nodes else 1,
        "host_processors_per_node": 1,
        "host_processor_model_name": cpu_model(),
        "host_processor_core_count": psutil.cpu_count(logical=False) or os.cpu_count(),
        "host_processor_vcpu_count": psutil.cpu_count(logical=True),
        "host_memory_capacity": f"{mem / 2**30:.0f} GB",
        "host_storage_type": "",
        "host_networking": nodes[0]["fabric"]["summary"] if nodes else "",
        "accelerators_per_node": len(gs),
        "accelerator_model_name": accel,
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
            "versions": ver,
            "interconnect_env": NCCL_ENV[interconnect] if gs else {},
            **({"nodes": nodes} if nodes else {}),
        },
    }
