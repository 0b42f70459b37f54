"""Torch-free probes of this host: names, CPU, GPUs through NVML, topology, fabric.

GPU facts come from NVML (``pynvml``, from nvidia-ml-py) and ``nvidia-smi topo -m``; host facts
from /proc and /sys. Everything degrades gracefully: on a machine without GPUs the probes return
empty lists. :mod:`collector.run.system` assembles them into a run's system description.
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

import pynvml

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


def nvml() -> Any:
    """The initialised NVML module, or None without an NVIDIA driver."""
    try:
        pynvml.nvmlInit()
        return pynvml
    except Exception:  # no driver, no library, no GPU
        return None


def gpus() -> list[dict[str, Any]]:
    """Per GPU: name, memory (MiB), power limit (W), via NVML; empty without NVIDIA GPUs."""
    nv = nvml()
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


def visible_gpus() -> list[dict[str, Any]]:
    """:func:`gpus` restricted to ``CUDA_VISIBLE_DEVICES`` (by index) where it is set."""
    found = gpus()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return found
    ids = [v.strip() for v in visible.split(",") if v.strip()]
    if not all(v.isdigit() for v in ids):  # UUIDs, or "-1": keep what CUDA would show by count
        return found if not ids or ids[0] != "-1" else []
    by_index = {g["index"]: g for g in found}
    return [by_index[int(v)] for v in ids if int(v) in by_index]


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


def run_command(cmd: list[str]) -> str:
    """A command's stdout; empty when it is missing, fails to start or times out."""
    if not shutil.which(cmd[0]):
        return ""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


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
