"""Harness overhead of the v5.1 language models: tokens/s through the engine against a bare
training loop over the same sharded model, in the same processes.

Every rank builds the model once as `collector run --suite v5.1 --scale throughput` does
(meta device, FSDP2, each decoder layer compiled), warms it up, then times windows of a plain
loop (forward, loss, backward per micro-batch, clipping, AdamW step), the engine's timed
windows (`engine.measure`: the MLPerf log written by rank 0 and the telemetry sampler running),
and the plain loop again. The overhead is 1 - harness median / bare median (both loops' windows
together), each window synchronised at both ends and summed over all ranks.

    python benchmarks/llm_harness.py --gpus 4                      # Llama 3.1 8B, bf16
    python benchmarks/llm_harness.py --smoke                       # CPU: 2 processes, tiny model

Goal on 4 x H200: overhead <= 3%.
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
from collector.run.suite import load_suite  # noqa: E402
from collector.run.telemetry import Telemetry  # noqa: E402


def bare_windows(sess: engine.Session, batch: tuple, windows: int, steps: int) -> list[float]:
    """Tokens/s (all ranks) of ``windows`` windows of a plain loop over the session's model."""
    model, opt, workload = sess.model, sess.opt, sess.workload
    clip = workload.params.get("max_grad_norm")
    trainable = [p for p in model.parameters() if p.requires_grad]
    micro = workload.micro_batches(batch)
    rates = []
    for _ in range(windows):
        engine._sync(workload.ctx.device)
        t0 = time.perf_counter()
        for _ in range(steps):
            for (tokens,) in micro:
                with sess.autocast():
                    logits = model(input_ids=tokens[:, :-1]).logits
                    loss = torch.nn.functional.cross_entropy(
                        logits.flatten(0, 1).float(), tokens[:, 1:].flatten()
                    )
                (loss / len(micro)).backward()
            if clip:
                torch.nn.utils.clip_grad_norm_(trainable, float(clip), foreach=True)
            opt.step()
            opt.zero_grad(set_to_none=True)
        engine._sync(workload.ctx.device)
        tokens_done = batch[0].shape[0] * workload.seq_len * steps * workload.ctx.world
        rates.append(tokens_done / (time.perf_counter() - t0))
    return rates


def worker(rank: int, spec: RunSpec, world: int, port: int, out: Path) -> None:
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
        dist.barrier()
        if rank == 0:
            (out / "bare.json").write_text(json.dumps({"first": first, "second": second}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmark", default="llama31_8b")
    ap.add_argument("--gpus", type=int, default=4)
    ap.add_argument("--precision", default="bf16")
    ap.add_argument("--batch-size", type=int, default=1, help="sequences per accelerator")
    ap.add_argument("--steps", type=int, default=2, help="optimizer steps per window")
    ap.add_argument("--smoke", action="store_true", help="CPU: 2 processes, the tiny model")
    ap.add_argument("--out", type=Path, default=None, help="results folder (default: temporary)")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="llm-harness-"))
    out.mkdir(parents=True, exist_ok=True)
    suite = copy.deepcopy(load_suite("v5.1"))
    if args.smoke:
        b = suite.benchmarks[args.benchmark]
        params = dict(b.scales["tiny"].params, batch_per_accelerator=True, micro_batch=1)
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
        batch=args.batch_size,
        out=out,
    )
    (spec,) = plan_runs(opts, machine, suite)
    spawn(worker, spec.workers, spec, spec.workers, free_port(), out)
    bare = json.loads((out / "bare.json").read_text())
    rates, run = logged_rates(spec.log_path)
    facts = run["throughput"]
    harness = [r * facts["tokens_per_sample"] for r in rates]
    both = bare["first"] + bare["second"]
    median_bare, median_harness = statistics.median(both), statistics.median(harness)
    flops = facts["step_flops_per_accelerator"] / (
        args.batch_size * spec.params["max_sequence_length"]
    )
    per_gpu = median_harness / gpus
    name = torch.cuda.get_device_name(0) if spec.accelerators else "CPU"
    print(f"device: {gpus} x {name}  benchmark: {args.benchmark}  precision: {precision}")
    print(f"sequences per GPU and step: {args.batch_size}  steps per window: {args.steps}")
    print(f"bare loop windows (tokens/s): {', '.join(f'{r:,.0f}' for r in both)}")
    print(f"harness windows (tokens/s):   {', '.join(f'{r:,.0f}' for r in harness)}")
    print(f"bare loop: {median_bare:,.0f} tokens/s  harness: {median_harness:,.0f} tokens/s")
    print(f"harness per GPU: {per_gpu:,.0f} tokens/s, {per_gpu * flops / 1e12:.0f} TFLOP/s")
    print(f"overhead: {(1 - median_harness / median_bare) * 100:+.2f}%  log: {spec.log_path}")


if __name__ == "__main__":
    main()
