"""Data-parallel efficiency of the throughput-scale workloads, per DDP variant, at 1..N GPUs.

Each rank builds a benchmark exactly as `collector run --scale throughput` does
(``collector.run.engine.setup`` with the suite's parameters, overridden by the variant), trains
the suite's warm-up steps on its device-resident synthetic batch, then times ``--steps`` steps
synchronised at both ends. One GPU runs without DistributedDataParallel, as `collector run`
does. Efficiency is the N-GPU samples/s (summed over the ranks) over N times the 1-GPU
samples/s of the same variant; ``--baseline suite`` divides by the shipped settings' 1-GPU rate
instead (for variants that change the work, such as compile).

    python benchmarks/ddp_scaling.py --benchmarks transformer --gpus 1,4
    python benchmarks/ddp_scaling.py --benchmarks transformer,maskrcnn --variants suite,nosync \\
        --profile suite --out prof/

Variants (overrides of the suite's parameters):
    suite    the suite's settings as shipped
    plain    DDP defaults, eager (no ``ddp`` options, no compile)
    views    gradients in DDP's buckets, static graph, no buffer broadcast
    bucket   ``views`` with 100 MB buckets (four times fewer all-reduces)
    bf16     ``views`` with gradients reduced in bf16 (half the bytes)
    compile  ``views`` with torch.compile (inside DDP, as the engine compiles)
    cbf16    ``compile`` with gradients reduced in bf16
    nosync   the suite's settings with no gradient all-reduce at all (DDP's ``no_sync``): what
             N ranks cost side by side without communication
``--profile VARIANT`` records 5 steps of that variant with torch.profiler on rank 0 at every
width and writes the operator tables and a per-step summary (kernel time, NCCL time, host
synchronisations, launches) under ``--out``. Rank 0 prints one JSON line per measurement as it
ends (samples/s, graphs compiled, seconds taken); the table of efficiencies comes at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.run import engine  # noqa: E402
from collector.run.plan import Machine, Options, plan_runs  # noqa: E402
from collector.run.procs import free_port, process_group, spawn  # noqa: E402
from collector.run.spec import RunSpec  # noqa: E402
from collector.run.sysinfo import NCCL_ENV  # noqa: E402

VIEWS = {"gradient_as_bucket_view": True, "static_graph": True, "broadcast_buffers": False}
VARIANTS: dict[str, dict[str, Any]] = {
    "suite": {},
    "plain": {"ddp": {}, "compile": False},
    "views": {"ddp": VIEWS, "compile": False},
    "bucket": {"ddp": {**VIEWS, "bucket_cap_mb": 100}, "compile": False},
    "bf16": {"ddp": {**VIEWS, "comm_hook": "bf16"}, "compile": False},
    "compile": {"ddp": VIEWS, "compile": True},
    "cbf16": {"ddp": {**VIEWS, "comm_hook": "bf16"}, "compile": True},
    "nosync": {},
}
PROFILED_STEPS = 5


def variant_spec(spec: RunSpec, variant: str) -> RunSpec:
    """``spec`` with the variant's parameter overrides."""
    return dataclasses.replace(spec, params={**spec.params, **VARIANTS[variant]})


def profile_steps(sess: engine.Session, batch: tuple, path: Path) -> dict[str, float]:
    """Profile a few steps; write the operator tables to ``path``; return a per-step summary."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        _, seconds = sess.timed(None, 0, [batch] * PROFILED_STEPS)
    events = prof.key_averages()
    # kernels and copies on the GPU's timeline; annotations there (DDP's forward, the
    # optimizer step) span kernels already counted
    kernels = [
        e for e in prof.events() if e.device_type == DeviceType.CUDA and not e.is_user_annotation
    ]
    nccl = sum(e.device_time_total for e in kernels if "nccl" in e.name.lower())
    compute = sum(e.device_time_total for e in kernels) - nccl
    calls = {e.key: e.count for e in events}
    per_step = lambda keys: sum(n for k, n in calls.items() if k in keys) / PROFILED_STEPS  # noqa: E731
    summary = {
        "step_ms": 1000 * seconds / PROFILED_STEPS,
        "compute_kernel_ms": compute / 1000 / PROFILED_STEPS,
        "nccl_kernel_ms": nccl / 1000 / PROFILED_STEPS,
        "launches": per_step({"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernelEx"}),
        "host_syncs": per_step({"cudaStreamSynchronize", "cudaDeviceSynchronize"}),
        "memcpy": per_step({"cudaMemcpyAsync"}),
    }
    tables = [
        json.dumps(summary),
        events.table(sort_by="self_device_time_total", row_limit=35),
        events.table(sort_by="self_cpu_time_total", row_limit=35),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(tables))
    return summary


def measure(
    spec: RunSpec, variant: str, rank: int, world: int, args: argparse.Namespace
) -> tuple[float, dict[str, float] | None]:
    """This rank's samples/s over ``--steps`` timed steps, and rank 0's profile summary when
    the variant is the one profiled (the other ranks step along with it)."""
    device = torch.device("cuda", rank) if torch.cuda.is_available() else torch.device("cpu")
    torch.manual_seed(spec.seed)
    sess = engine.setup(variant_spec(spec, variant), rank, world, device)
    batch = next(iter(sess.workload.train_batches(1)))
    nosync = variant == "nosync" and world > 1
    prof = None
    with sess.model.no_sync() if nosync else contextlib.nullcontext():
        sess.timed(None, 0, [batch] * spec.warmup_steps)
        if world > 1:
            dist.barrier()
        samples, seconds = sess.timed(None, 1, [batch] * args.steps)
        if variant == args.profile and args.out is not None:
            if rank == 0:
                name = f"profile-{spec.benchmark}-{variant}-{world}gpu.txt"
                prof = profile_steps(sess, batch, args.out / name)
            else:
                sess.timed(None, 0, [batch] * PROFILED_STEPS)
    return samples / seconds, prof


def worker(rank: int, world: int, jobs: list, args: argparse.Namespace, port: int, q) -> None:
    """One rank: every (spec, variant) in turn; rank 0 reports the samples/s summed over the
    ranks."""
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(rank)
    init = {"init_method": f"tcp://127.0.0.1:{port}", "rank": rank, "world_size": world}
    group = process_group("nccl" if cuda else "gloo", **init)
    with group if world > 1 else contextlib.nullcontext():
        for spec, variant in jobs:
            t0 = time.perf_counter()
            rate, prof = measure(spec, variant, rank, world, args)
            total = torch.tensor(rate, device="cuda" if cuda else "cpu")
            if world > 1:
                dist.all_reduce(total)
            if rank == 0:
                graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
                line = {"benchmark": spec.benchmark, "variant": variant, "gpus": world}
                line |= {"samples_s": round(float(total), 1), "graphs": graphs}
                line |= {"seconds": round(time.perf_counter() - t0, 1)}
                print(json.dumps(line | ({"profile": prof} if prof else {})), flush=True)
                q.put(line)
            gc.collect()
            if cuda:
                torch.cuda.empty_cache()
            torch._dynamo.reset()  # compiled graphs of this model are of no use to the next


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmarks", default="transformer")
    ap.add_argument("--gpus", default="1,4")
    ap.add_argument("--variants", default="suite,nosync,views,bf16,compile")
    ap.add_argument("--precision", default="bf16")
    ap.add_argument("--interconnect", default="default", choices=sorted(NCCL_ENV))
    ap.add_argument("--steps", type=int, default=30, help="timed steps per measurement")
    ap.add_argument("--warmup", type=int, help="untimed steps (default: the suite's)")
    ap.add_argument("--batch-size", type=int, help="samples per GPU (default: the suite's)")
    ap.add_argument("--profile", help="variant to profile on rank 0")
    ap.add_argument("--baseline", help="divide every variant by this variant's 1-GPU rate")
    ap.add_argument("--out", type=Path, help="folder for the profiles and results.json")
    args = ap.parse_args()
    os.environ.update(NCCL_ENV[args.interconnect])
    benchmarks, variants = args.benchmarks.split(","), args.variants.split(",")
    machine = Machine.detect()
    rates: dict[tuple[str, str, int], float] = {}
    lines = []
    for world in (int(g) for g in args.gpus.split(",")):
        opts = Options(
            benchmarks=benchmarks,
            scale="throughput",
            gpus=[world],
            precisions=[args.precision],
            warmup=args.warmup,
            batch=args.batch_size,
            out=Path("/tmp/ddp_scaling"),
        )
        jobs = [(s, v) for s in plan_runs(opts, machine) for v in variants]
        q = mp.get_context("spawn").SimpleQueue()
        spawn(worker, world, world, jobs, args, free_port(), q)
        while not q.empty():
            line = q.get()
            rates[(line["benchmark"], line["variant"], world)] = line["samples_s"]
            lines.append(line)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "results.json").write_text(json.dumps(lines, indent=1) + "\n")
    print(f"{'benchmark':12} {'variant':8} {'gpus':>4} {'samples/s':>12} {'% of linear':>11}")
    for (bench, variant, w), rate in sorted(rates.items()):
        one = rates.get((bench, args.baseline or variant, 1))
        eff = f"{100 * rate / (w * one):.1f}" if one else "-"
        print(f"{bench:12} {variant:8} {w:>4} {rate:>12,.1f} {eff:>11}")


if __name__ == "__main__":
    main()
