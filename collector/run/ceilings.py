"""Hardware ceilings measured once per system: dense matmul TFLOP/s and all-reduce bus bandwidth.

Matmul: square ``n x n`` products timed after warm-up (2 n^3 flops each). All-reduce: NCCL
across all GPUs of the configuration, bus bandwidth = size / time * 2(n-1)/n (the nccl-tests
convention), with peer-to-peer on and then off (``NCCL_P2P_DISABLE=1``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.benchmark import Timer

from collector.run.procs import free_port, process_group, scoped_env, spawn
from collector.run.sysinfo import NCCL_ENV


def matmul_tflops(dtype: torch.dtype, device: torch.device, n: int, seconds: float = 1.0) -> float:
    """Sustained dense matmul TFLOP/s for ``n x n`` operands of ``dtype`` on ``device``: the
    median time of a product over blocks timed for at least ``seconds`` after warm-up."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    timer = Timer("a @ b", globals={"a": a, "b": b}, num_threads=torch.get_num_threads())
    return 2 * n**3 / timer.blocked_autorange(min_run_time=seconds).median / 1e12


def _allreduce_worker(rank: int, world: int, port: int, size: int, iters: int, out: Any) -> None:
    torch.cuda.set_device(rank)
    with process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world):
        x = torch.ones(size // 2, dtype=torch.bfloat16, device="cuda")
        for _ in range(5):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        dt = (time.perf_counter() - t0) / iters
    if rank == 0:
        out.put(size / dt * 2 * (world - 1) / world / 1e9)


def allreduce_busbw(world: int, p2p: bool, size: int = 256 * 2**20, iters: int = 20) -> float:
    """NCCL all-reduce bus bandwidth in GB/s over ``world`` GPUs, P2P on or off."""
    with scoped_env(NCCL_ENV["default" if p2p else "no-p2p"]):
        q = mp.get_context("spawn").SimpleQueue()
        spawn(_allreduce_worker, world, world, free_port(), size, iters, q)
        return float(q.get())


def measure_ceilings(gpus: int, quick: bool = False) -> dict[str, Any]:
    """All ceilings for a configuration with ``gpus`` GPUs (0: CPU fp32 matmul only)."""
    result: dict[str, Any] = {"measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    if gpus == 0 or not torch.cuda.is_available():
        n, seconds = (256, 0.3) if quick else (1024, 1.0)
        fp32 = matmul_tflops(torch.float32, torch.device("cpu"), n, seconds)
        result["matmul_tflops"] = {"fp32": round(fp32, 4)}
        result["allreduce_busbw_gbps"] = None
        result["allreduce_skipped"] = "no GPUs: NCCL all-reduce does not apply"
        return result
    dev = torch.device("cuda", 0)
    n = 2048 if quick else 8192
    prev = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        result["matmul_tflops"] = {
            "bf16": round(matmul_tflops(torch.bfloat16, dev, n), 2),
            "fp32": round(matmul_tflops(torch.float32, dev, n), 2),
        }
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev
    if gpus < 2:
        result["allreduce_busbw_gbps"] = None
        result["allreduce_skipped"] = "one GPU: nothing to all-reduce across"
    else:
        result["allreduce_busbw_gbps"] = {
            "p2p": round(allreduce_busbw(gpus, True), 2),
            "no_p2p": round(allreduce_busbw(gpus, False), 2),
        }
        result["allreduce_message_bytes"] = 256 * 2**20
    return result


def ensure_ceilings(path: Path, gpus: int, quick: bool = False) -> dict[str, Any]:
    """Read ``<config>.ceilings.json`` if present, else measure and write it."""
    if path.is_file():
        return json.loads(path.read_text())
    data = measure_ceilings(gpus, quick)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return data
