"""Data-parallel step throughput of the `small` ResNet-50 on 1..N GPUs, per training-loop variant.

Each variant trains the suite's `small` ResNet-50 (bf16 autocast, channels_last) on random
device-resident batches for warm-up steps, then times ``--steps`` synchronised steps. One GPU
runs without DistributedDataParallel (as `collector run` does); N GPUs wrap the model in DDP
over NCCL. Efficiency is N-GPU images/s over N times the 1-GPU images/s of the same variant.

    python benchmarks/ddp_scaling.py --gpus 1,2,4            # every variant
    python benchmarks/ddp_scaling.py --variants base,tuned   # a subset

Variants:
    base     the engine's loop as it is: DDP defaults, SGD (foreach)
    views    DDP with gradient_as_bucket_view and static_graph
    fused    ``views`` plus the fused CUDA SGD kernel
    batch512 ``fused`` with 512 images per GPU instead of 256
    compile  ``fused`` with torch.compile
Results print as one JSON line per (variant, gpus) and a table at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.run.suite import load_suite  # noqa: E402
from collector.run.workloads.resnet import ResNet50  # noqa: E402

VARIANTS = {
    "base": {},
    "views": {"views": True},
    "fused": {"views": True, "fused": True},
    "batch512": {"views": True, "fused": True, "batch": 512},
    "compile": {"views": True, "fused": True, "compile": True},
}


def step_rate(rank: int, world: int, variant: dict, params: dict, warmup: int, steps: int) -> float:
    """Images/s of this rank over ``steps`` timed steps."""
    device = torch.device("cuda", rank)
    torch.manual_seed(1)
    batch = int(variant.get("batch", params["batch_size"]))
    size, classes = int(params["image_size"]), int(params["num_classes"])
    model = ResNet50(classes, int(params["width"]), list(params["layers"])).to(device)
    model = model.to(memory_format=torch.channels_last)
    if variant.get("compile"):
        model = torch.compile(model)
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(
            model,
            device_ids=[rank],
            gradient_as_bucket_view=bool(variant.get("views")),
            static_graph=bool(variant.get("views")),
        )
    opt = torch.optim.SGD(
        model.parameters(), lr=0.01, momentum=0.9, fused=bool(variant.get("fused")) or None
    )
    xs = torch.randn(8, batch, 3, size, size, device=device)
    xs = [x.contiguous(memory_format=torch.channels_last) for x in xs]
    ys = torch.randint(0, classes, (8, batch), device=device)

    def one(i: int) -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(xs[i % 8]), ys[i % 8])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for i in range(warmup):
        one(i)
    torch.cuda.synchronize(device)
    if world > 1:
        dist.barrier()
    t0 = time.perf_counter()
    for i in range(steps):
        one(i)
    torch.cuda.synchronize(device)
    return batch * steps / (time.perf_counter() - t0)


def worker(rank: int, world: int, names: list[str], args: argparse.Namespace, q) -> None:
    """One rank: every variant in turn; rank 0 reports the summed images/s."""
    torch.cuda.set_device(rank)
    if world > 1:
        dist.init_process_group(
            "nccl", init_method=f"tcp://127.0.0.1:{args.port + world}", rank=rank, world_size=world
        )
    params = load_suite("v0.5").benchmarks["resnet"].scales["small"].params
    for name in names:
        warm = args.warmup * (4 if VARIANTS[name].get("compile") else 1)
        rate = torch.tensor(step_rate(rank, world, VARIANTS[name], params, warm, args.steps))
        if world > 1:
            rate = rate.cuda()
            dist.all_reduce(rate)
        if rank == 0:
            q.put((name, world, float(rate)))
    if world > 1:
        dist.destroy_process_group()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", default="1,2,4")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--warmup", type=int, default=15)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--port", type=int, default=29611)
    args = ap.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    names = args.variants.split(",")
    ctx = mp.get_context("spawn")
    rates: dict[tuple[str, int], float] = {}
    for world in (int(g) for g in args.gpus.split(",")):
        q = ctx.SimpleQueue()
        mp.start_processes(worker, (world, names, args, q), nprocs=world, start_method="spawn")
        while not q.empty():
            name, w, rate = q.get()
            rates[(name, w)] = rate
            one = rates.get((name, 1))
            eff = rate / (w * one) if one else None
            print(json.dumps({"variant": name, "gpus": w, "img_s": round(rate), "eff": eff}))
    print(f"{'variant':10} {'gpus':>4} {'img/s':>9} {'efficiency':>10}")
    for (name, w), rate in sorted(rates.items()):
        one = rates.get((name, 1))
        eff = f"{100 * rate / (w * one):.1f}%" if one else "-"
        print(f"{name:10} {w:>4} {rate:>9,.0f} {eff:>10}")


if __name__ == "__main__":
    main()
