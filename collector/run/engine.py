"""Train one workload to its quality target on one data-parallel rank, logging as MLPerf does.

The run is timed MLPerf-style: ``init_start``..``init_stop`` covers building data and model,
``run_start``..``run_stop`` covers training and evaluation. Evaluation runs on rank 0 with the
unwrapped model; its result is broadcast so all ranks stop together. Any exception (Ctrl-C,
SIGTERM, a crash) ends the log with ``run_stop`` status ``aborted`` before it propagates.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import cast

import torch
import torch.distributed as dist

from collector.run.mlperf_log import COLLECTOR_RUN, EVAL_TARGET, TRACKED_STATS, C, RunLog
from collector.run.procs import process_group
from collector.run.spec import RunSpec
from collector.run.workloads import RunContext, workload_class

#: progress(kind, epoch, value): kind is "epoch" (value = samples/s) or "eval" (value = quality)
Progress = Callable[[str, int, float], None]

AMP_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def setup_precision(precision: str, device: torch.device) -> torch.dtype | None:
    """Set TF32 switches for ``precision``; return the autocast dtype (None for fp32/tf32)."""
    if device.type == "cuda":
        tf32 = precision == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
    elif precision in ("tf32", "fp16"):
        raise ValueError(f"precision {precision} needs a GPU")
    return AMP_DTYPES.get(precision)


def compile_model(model: torch.nn.Module) -> torch.nn.Module:
    """``torch.compile(model)``, or the eager model where compilation is unavailable."""
    try:
        return cast(torch.nn.Module, torch.compile(model))
    except Exception as exc:  # toolchain-dependent (no compiler, unsupported Python)
        print(f"torch.compile unavailable ({exc}); running eager")
        return model


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _log_header(log: RunLog, spec: RunSpec) -> None:
    log.event(C.SUBMISSION_BENCHMARK, spec.benchmark)
    log.event(C.SUBMISSION_ORG, spec.org)
    log.event(C.SUBMISSION_DIVISION, "local")
    log.event(C.SUBMISSION_STATUS, spec.status)
    log.event(C.SUBMISSION_PLATFORM, spec.config)
    log.event(C.CACHE_CLEAR, True)


def train(
    spec: RunSpec,
    rank: int = 0,
    world: int = 1,
    device: torch.device | None = None,
    progress: Progress | None = None,
) -> str:
    """Run ``spec`` on this rank; rank 0 writes the log. Returns the run_stop status."""
    device = device or torch.device("cpu")
    torch.set_num_threads(max(1, spec.threads))
    log = RunLog(spec.log_path) if rank == 0 else None
    status = "aborted"
    started = False
    try:
        if log:
            _log_header(log, spec)
            log.start(C.INIT_START)
        amp = setup_precision(spec.precision, device)
        torch.manual_seed(spec.seed)
        ctx = RunContext(
            device=device,
            rank=rank,
            world=world,
            seed=spec.seed,
            data_root=spec.data_root,
            channels_last=device.type == "cuda",
        )
        cls = workload_class(spec.benchmark)
        workload = cls(spec.params, spec.scale, ctx)
        model = workload.build_model().to(device)
        if ctx.channels_last and workload.convolutional:
            model = model.to(memory_format=torch.channels_last)
        raw = model
        if spec.params.get("compile"):
            model = compile_model(model)
        if world > 1:
            ids = [device.index] if device.type == "cuda" else None
            model = torch.nn.parallel.DistributedDataParallel(
                model, device_ids=ids, **spec.params.get("ddp", {})
            )
        opt = workload.make_optimizer(model)
        base_lr = [g["lr"] for g in opt.param_groups]
        scaler = torch.amp.GradScaler(device.type) if spec.precision == "fp16" else None
        autocast = (
            (lambda: torch.autocast(device.type, dtype=amp))
            if amp is not None
            else contextlib.nullcontext
        )
        if log:
            log.event(C.GLOBAL_BATCH_SIZE, workload.global_batch_size)
            log.event(C.SEED, spec.seed)
            log.event(C.EVAL_SAMPLES, workload.eval_size())
            log.end(C.INIT_STOP)
            log.start(C.RUN_START)
            log.event(EVAL_TARGET, float(spec.target))
            kept = workload.fp32_operations(spec.precision)
            log.event(
                COLLECTOR_RUN, spec.collector_run() | ({"fp32_operations": kept} if kept else {})
            )
        started = True
        step = 0
        status = "failed"
        for epoch in range(1, spec.max_epochs + 1):
            if log:
                log.start(C.EPOCH_START, metadata={"epoch_num": epoch})
            _sync(device)
            t0 = time.perf_counter()
            samples = 0
            for batch in workload.train_batches(epoch):
                f = workload.lr_factor(step)
                for g, lr in zip(opt.param_groups, base_lr, strict=True):
                    g["lr"] = lr * f
                with autocast():
                    loss = workload.loss(model, batch)
                opt.zero_grad(set_to_none=True)
                if scaler is not None:
                    scaler.scale(loss).backward()
                    scaler.step(opt)
                    scaler.update()
                else:
                    loss.backward()
                    opt.step()
                samples += workload.batch_samples(batch)
                step += 1
            _sync(device)
            dt = time.perf_counter() - t0
            throughput = samples * world / dt if dt > 0 else 0.0
            if log:
                if epoch == 1:
                    log.event(C.TRAIN_SAMPLES, samples * world)
                log.event(TRACKED_STATS, {"throughput": throughput}, {"epoch_num": epoch})
                log.end(C.EPOCH_STOP, metadata={"epoch_num": epoch})
            if progress and rank == 0:
                progress("epoch", epoch, throughput)
            if epoch % spec.eval_every and epoch != spec.max_epochs:
                continue
            if log:
                log.start(C.EVAL_START, metadata={"epoch_num": epoch})
            reached = torch.zeros(2, dtype=torch.float64, device=device)
            if rank == 0:
                with autocast():
                    quality = float(workload.evaluate(raw))
                reached[0] = quality
                reached[1] = float(workload.target_reached(quality, spec.target))
            if world > 1:
                dist.broadcast(reached, 0)
            quality = float(reached[0])
            if log:
                meta = {"epoch_num": epoch, **workload.eval_metadata()}
                log.event(C.EVAL_ACCURACY, quality, meta)
                log.end(C.EVAL_STOP, metadata={"epoch_num": epoch})
            if progress and rank == 0:
                progress("eval", epoch, quality)
            if reached[1] > 0:
                status = "success"
                break
    except BaseException:
        status = "aborted"
        raise
    finally:
        if log:
            if not started:  # failed during init: still a complete, parseable record
                log.end(C.INIT_STOP)
                log.start(C.RUN_START)
            log.end(C.RUN_STOP, metadata={"status": status})
            log.close()
    return status


def worker(rank: int, spec: RunSpec, world: int, port: int) -> None:
    """Entry point of one spawned data-parallel process (NCCL on GPUs, gloo on CPU)."""
    from collector.run.signals import raise_on_sigterm

    raise_on_sigterm()
    os.environ.update(spec.env)
    cuda = spec.accelerators > 0
    if cuda:
        torch.cuda.set_device(rank)
    device = torch.device("cuda", rank) if cuda else torch.device("cpu")
    backend = "nccl" if cuda else "gloo"
    with process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world):
        train(spec, rank, world, device)
