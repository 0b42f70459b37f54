"""Harness overhead of v5.1's RetinaNet, R-GAT, DLRM-DCNv2 and Flux.1: samples/s through the
engine against a bare training loop over the same model, in the same processes.

Every rank builds the workload once as `collector run --suite v5.1 --scale throughput` does
(DDP, or FSDP2 for Flux.1, DLRM-DCNv2's tables split across the ranks), warms it up, then
times windows of a plain loop (the workload's loss per micro-batch, backward, clipping where
the suite sets it, the optimizer step), the engine's timed windows (`engine.measure`: the
MLPerf log written by rank 0 and the telemetry sampler running), and the plain loop again. The
loss is the workload's own in both: it is the benchmark's work (R-GAT's neighbour sampling is
in it, as in the reference's step). The overhead is 1 - harness median / bare median (both
loops' windows together), each window synchronised at both ends and summed over all ranks.

    python benchmarks/suite_harness.py --benchmark retinanet --gpus 1
    python benchmarks/suite_harness.py --benchmark flux1 --gpus 4
    python benchmarks/suite_harness.py --benchmark dlrm_dcnv2 --smoke   # CPU: 2 processes, tiny

Goal: overhead <= 3%. On CPU (--smoke) the figures say nothing about hardware: it checks that
the script runs.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import logged_rates  # noqa: E402

from collector.run import engine  # noqa: E402
from collector.run.plan import Machine, Options, plan_runs  # noqa: E402
from collector.run.procs import free_port, spawn  # noqa: E402
from collector.run.spec import RunSpec  # noqa: E402
from collector.run.suite import SUITE_V51, load_suite  # noqa: E402
from collector.run.telemetry import Telemetry  # noqa: E402


def bare_windows(sess: engine.Session, batch: tuple, windows: int, steps: int) -> list[float]:
    """Samples/s (all ranks) of ``windows`` windows of a plain loop over the session's model."""
    model, opt, workload = sess.model, sess.opt, sess.workload
    clip = workload.params.get("max_grad_norm")
    trainable = [p for p in model.parameters() if p.requires_grad]
    micro = workload.micro_batches(batch)
    rates = []
    for _ in range(windows):
        engine._sync(workload.ctx.device)
        t0 = time.perf_counter()
        for _ in range(steps):
            for i, mb in enumerate(micro):
                defer = i < len(micro) - 1 and hasattr(model, "no_sync")
                with model.no_sync() if defer else contextlib.nullcontext():
                    with sess.autocast():
                        loss = workload.loss(model, mb)
                    (loss / len(micro)).backward()
            if clip:
                torch.nn.utils.clip_grad_norm_(trainable, float(clip), foreach=True)
            opt.step()
            opt.zero_grad(set_to_none=True)
        engine._sync(workload.ctx.device)
        done = workload.batch_samples(batch) * steps * workload.ctx.world
        rates.append(done / (time.perf_counter() - t0))
    return rates


def worker(rank: int, spec: RunSpec, world: int, port: int, out: Path, profile: int) -> None:
    with engine.rank_device(rank, spec, world, port) as device:
        torch.set_num_threads(max(1, spec.threads))
        sess = engine.setup(spec, rank, world, device)
        batch = next(iter(sess.workload.train_batches(1)))
        for _ in range(spec.warmup_steps):
            sess.step(batch)
        first = bare_windows(sess, batch, spec.max_epochs, spec.window_steps)
        log = engine.RunLog(spec.log_path) if rank == 0 else None
        warm = dataclasses.replace(spec, warmup_steps=0)
        gpus = list(range(spec.accelerators))
        with Telemetry(spec.telemetry_path, gpus) if rank == 0 else contextlib.nullcontext():
            engine.measure(warm, sess, log)
        if log:
            log.end("run_stop", metadata={"status": "success"})
            log.close()
        second = bare_windows(sess, batch, spec.max_epochs, spec.window_steps)
        if world > 1:
            dist.barrier()
        if profile:  # every rank steps and writes its own: the slowest one sets the pace
            (out / f"profile-{rank}.txt").write_text(profiled(sess, batch, profile))
        if rank == 0:
            (out / "bare.json").write_text(json.dumps({"first": first, "second": second}))


def profiled(sess: engine.Session, batch: tuple, steps: int) -> str:
    """The operators of ``steps`` steps ranked by their own GPU time, under torch.profiler,
    with the steps' wall time and the GPU's busy time: where the step spends it."""
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    device = sess.workload.ctx.device
    engine._sync(device)
    t0 = time.perf_counter()
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(steps):
            sess.step(batch)
        engine._sync(device)
    wall_ms = (time.perf_counter() - t0) * 1000 / steps
    events = prof.key_averages()
    # the kernels' own rows: an operator's row repeats the time of the kernels it launched
    kernels = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA]
    busy_ms = sum(e.self_device_time_total for e in kernels) / 1000 / steps
    head = f"per step: wall {wall_ms:.1f} ms (profiled), GPU kernels {busy_ms:.1f} ms\n"
    table = events.table(sort_by="self_cuda_time_total", row_limit=20, max_name_column_width=60)
    return head + table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmark", choices=SUITE_V51, required=True)
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--precision", default="bf16")
    ap.add_argument("--steps", type=int, default=None, help="steps per window (suite's default)")
    ap.add_argument("--smoke", action="store_true", help="CPU: 2 processes, the tiny model")
    ap.add_argument("--out", type=Path, default=None, help="results folder (default: temporary)")
    ap.add_argument("--profile", type=int, default=0, help="then profile this many steps")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="suite-harness-"))
    out.mkdir(parents=True, exist_ok=True)
    suite = copy.deepcopy(load_suite("v5.1"))
    b = suite.benchmarks[args.benchmark]
    if args.smoke:
        params = dict(b.scales["tiny"].params, batch_per_accelerator=True, batch_size=8)
        params.pop("compile", None)
        b.scales["throughput"] = dataclasses.replace(b.scales["throughput"], params=params)
        machine, gpus, precision = Machine("harness", "cpu", 2), 2, "fp32"
    else:
        machine, gpus, precision = Machine.detect(), args.gpus, args.precision
    opts = Options(
        suite="v5.1",
        benchmarks=[args.benchmark],
        scale="throughput",
        gpus=[gpus],
        precisions=[precision],
        steps=args.steps,
        out=out,
    )
    (spec,) = plan_runs(opts, machine, suite)
    spawn(worker, spec.workers, spec, spec.workers, free_port(), out, args.profile)
    bare = json.loads((out / "bare.json").read_text())
    harness, run = logged_rates(spec.log_path)
    both = bare["first"] + bare["second"]
    median_bare, median_harness = statistics.median(both), statistics.median(harness)
    name = torch.cuda.get_device_name(0) if spec.accelerators else "CPU"
    print(f"device: {gpus} x {name}  benchmark: {args.benchmark}  precision: {precision}")
    steps = run.get("throughput", {}).get("window_steps")
    print(
        f"samples per accelerator and step: {spec.params['batch_size']}  steps per window: {steps}"
    )
    print(f"bare loop windows (samples/s): {', '.join(f'{r:,.1f}' for r in both)}")
    print(f"harness windows (samples/s):   {', '.join(f'{r:,.1f}' for r in harness)}")
    print(f"bare loop: {median_bare:,.1f} samples/s  harness: {median_harness:,.1f} samples/s")
    print(f"overhead: {(1 - median_harness / median_bare) * 100:+.2f}%  log: {spec.log_path}")
    if args.profile:
        for rank in range(spec.workers):
            print(f"rank {rank}: " + (out / f"profile-{rank}.txt").read_text())


if __name__ == "__main__":
    main()
