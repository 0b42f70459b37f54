"""Train one workload to its quality target on one data-parallel rank, logging as MLPerf does.

The run is timed MLPerf-style: ``init_start``..``init_stop`` covers building data and model,
``run_start``..``run_stop`` covers training and evaluation. Evaluation runs on rank 0 with the
unwrapped model (a sharded model on every rank, each gathering its weights); rank 0's result
is broadcast so all ranks stop together. Any exception (Ctrl-C,
SIGTERM, a crash) ends the log with ``run_stop`` status ``aborted`` before it propagates.

At the ``throughput`` scale there is no target and no evaluation: the run trains on one
device-resident synthetic batch and logs samples/s per timed window.

The log is written with the official ``mlperf_logging.mllog`` writer, flushed line by line so
that an interrupted run keeps everything logged before the interruption.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import torch
import torch.distributed as dist
from mlperf_logging.mllog import constants as C
from mlperf_logging.mllog import mllog
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.flop_counter import FlopCounterMode

from collector.run import sharded
from collector.run.procs import process_group, raise_on_sigterm
from collector.run.spec import RunSpec
from collector.run.types import Batch, RunContext
from collector.run.workloads import Workload, workload_class

#: progress(kind, epoch, value): kind is "epoch" or "window" (value = samples/s), or "eval"
#: (value = quality)
Progress = Callable[[str, int, float], None]

THROUGHPUT_LABEL = "compute throughput on synthetic data, data loading not included"
EVAL_TARGET = "eval_target"
COLLECTOR_RUN = "collector_run"
TRACKED_STATS = "tracked_stats"

AMP_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
COMM_HOOKS = {"bf16": default_hooks.bf16_compress_hook, "fp16": default_hooks.fp16_compress_hook}


class RunLog:
    """An open ``result_<i>.txt`` with a ``logging.Logger`` and file handler of its own (mllog's
    module-level logger is a process-wide singleton that only ever adds handlers);
    ``start``/``end``/``event`` are :class:`mllog.MLLogger`'s."""

    def __init__(self, path: Path, append: bool = False) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._logger = logging.getLogger(f"collector.mllog.{uuid.uuid4().hex}")
        self._logger.propagate = False
        self._logger.setLevel(logging.INFO)
        mode = "a" if append else "w"
        self._handler = logging.FileHandler(path, mode=mode, encoding="utf-8")
        self._handler.setFormatter(logging.Formatter("%(message)s"))
        self._logger.addHandler(self._handler)
        root = str(Path(__file__).resolve().parents[2])
        ml = mllog.MLLogger(self._logger, root_dir=root)
        self.event, self.start, self.end = ml.event, ml.start, ml.end

    def close(self) -> None:
        """Flush and close the file."""
        self._handler.flush()
        self._handler.close()
        self._logger.removeHandler(self._handler)


def setup_precision(precision: str, device: torch.device) -> torch.dtype | None:
    """Set TF32 switches for ``precision``; return the autocast dtype (None for fp32/tf32)."""
    if device.type == "cuda":
        tf32 = precision == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
    return AMP_DTYPES.get(precision)


def compile_model(model: torch.nn.Module, dynamic: bool | None = None) -> torch.nn.Module:
    """``torch.compile(model)``, or the eager model where compilation is unavailable;
    ``dynamic`` as ``torch.compile`` takes it (true where every step has other sizes)."""
    # a graph the compiler cannot handle runs eager instead of failing the run
    torch._dynamo.config.suppress_errors = True
    try:
        return cast(torch.nn.Module, torch.compile(model, dynamic=dynamic))
    except Exception as exc:  # toolchain-dependent (no compiler, unsupported Python)
        print(f"torch.compile unavailable ({exc}); running eager")
        return model


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@dataclass
class Session:
    """A workload set up on one rank: its model (compiled and/or DDP-wrapped), the unwrapped
    model, the optimizer with its learning-rate schedule, and the precision context."""

    workload: Workload
    model: torch.nn.Module
    raw: torch.nn.Module
    opt: torch.optim.Optimizer
    autocast: Callable[[], contextlib.AbstractContextManager]
    scaler: torch.amp.GradScaler | None

    def __post_init__(self) -> None:
        self.schedule = LambdaLR(self.opt, self.workload.lr_factor)

    def step(self, batch: Batch) -> None:
        """One optimizer step on ``batch``: the workload's micro-batches, each backward pass
        accumulating its share of the gradient (under DDP reduced once, after the last), the
        gradient norm clipped to ``max_grad_norm`` where the suite sets one, then the update
        and the schedule's next learning rate."""
        micro = self.workload.micro_batches(batch)
        self.opt.zero_grad(set_to_none=True)
        for i, mb in enumerate(micro):
            defer = i < len(micro) - 1 and hasattr(self.model, "no_sync")
            with self.model.no_sync() if defer else contextlib.nullcontext():
                with self.autocast():
                    loss = self.workload.loss(self.model, mb) / len(micro)
                (loss if self.scaler is None else self.scaler.scale(loss)).backward()
        clip = self.workload.params.get("max_grad_norm")
        if clip:
            if self.scaler is not None:
                self.scaler.unscale_(self.opt)
            trainable = [p for p in self.model.parameters() if p.requires_grad]
            torch.nn.utils.clip_grad_norm_(trainable, float(clip), foreach=True)
        if self.scaler is not None:
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            self.opt.step()
        self.schedule.step()

    def timed(self, log: RunLog | None, epoch: int, batches: Iterable[Batch]) -> tuple[int, float]:
        """Train on ``batches`` as epoch (or window) ``epoch``, logging its start: the samples
        of this rank and the seconds taken, synchronised at both ends."""
        if log:
            log.start(C.EPOCH_START, metadata={"epoch_num": epoch})
        device = self.workload.ctx.device
        _sync(device)
        t0, samples = time.perf_counter(), 0
        for batch in batches:
            self.step(batch)
            samples += self.workload.batch_samples(batch)
        _sync(device)
        return samples, time.perf_counter() - t0


def data_parallel(model: torch.nn.Module, device: torch.device, options: dict) -> torch.nn.Module:
    """``model`` in DistributedDataParallel with the suite's ``ddp`` options; ``comm_hook``
    names a gradient communication hook from :data:`COMM_HOOKS` (``bf16``: on GPUs, gradients
    cast to bf16 for the all-reduce and back, half the bytes, as references that train in half
    precision reduce them)."""
    options = dict(options)
    hook = options.pop("comm_hook", None)
    if hook is not None and hook not in COMM_HOOKS:
        raise ValueError(f"unknown ddp comm_hook {hook!r} (choose from {', '.join(COMM_HOOKS)})")
    ids = [device.index] if device.type == "cuda" else None
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=ids, **options)
    if hook is not None and device.type == "cuda":  # NCCL's reductions; gloo has no bf16 sum
        ddp.register_comm_hook(None, COMM_HOOKS[hook])
    return ddp


def wants_compile(params: dict, precision: str) -> bool:
    """``params['compile']``: true, or the list of precisions under which to compile."""
    flag = params.get("compile", False)
    return precision in flag if isinstance(flag, list) else bool(flag)


def setup(spec: RunSpec, rank: int, world: int, device: torch.device) -> Session:
    """Build the workload, its model and optimizer on ``device`` for ``spec``."""
    amp = setup_precision(spec.precision, device)
    # where every step has the same shapes, cuDNN may time its algorithms once and keep the
    # fastest (Mask R-CNN's heads see new shapes every step: there it would time them all)
    torch.backends.cudnn.benchmark = bool(spec.params.get("cudnn_benchmark", False))
    torch.manual_seed(spec.seed)
    ctx = RunContext(device, rank, world, spec.seed, spec.data_root, device.type == "cuda")
    workload = workload_class(spec.benchmark)(spec.params, spec.scale, ctx)
    if workload.sharded:  # FSDP2 beside the replicated (DDP) path below
        compiled = wants_compile(spec.params, spec.precision)
        model, amp = sharded.build(spec, workload, world, device, compiled)
        autocast = functools.partial(torch.autocast, device.type, amp, amp is not None)
        return Session(workload, model, model, workload.make_optimizer(model), autocast, None)
    model = workload.build_model().to(device)
    if ctx.channels_last and workload.convolutional:
        model = model.to(memory_format=torch.channels_last)
    raw = model
    if wants_compile(spec.params, spec.precision):
        # compiled inside DDP (ResNet-50's campaigns ran so); the compiler still sees DDP's
        # forward and splits the graph at its gradient buckets, whose all-reduces then overlap
        # the backward pass. Compiled around DDP, Transformer (big) on 4 x H200 ran slower
        # than eager (benchmarks/ddp_scaling.py, benchmarks/RESULTS.md)
        model = compile_model(model, spec.params.get("compile_dynamic"))
    if world > 1:
        if workload.ddp_ignore:  # model-parallel parameters: each rank keeps its own
            ddp = torch.nn.parallel.DistributedDataParallel
            ddp._set_params_and_buffers_to_ignore_for_model(model, workload.ddp_ignore)
        model = data_parallel(model, device, spec.params.get("ddp", {}))
    opt = workload.make_optimizer(model)
    scaler = torch.amp.GradScaler(device.type) if spec.precision == "fp16" else None
    autocast = functools.partial(torch.autocast, device.type, amp, amp is not None)
    return Session(workload, model, raw, opt, autocast, scaler)


def train(
    spec: RunSpec,
    rank: int = 0,
    world: int = 1,
    device: torch.device | None = None,
    progress: Progress | None = None,
) -> str:
    """Run ``spec`` on this rank; rank 0 writes the log. Returns the run_stop status.

    At the ``throughput`` scale the run measures samples/s over timed windows
    (:func:`measure`); at the other scales it trains to the quality target (:func:`converge`).
    """
    device = device or torch.device("cpu")
    torch.set_num_threads(max(1, spec.threads))
    log = RunLog(spec.log_path) if rank == 0 else None
    status = "aborted"
    started = False
    throughput = spec.scale == "throughput"
    try:
        if log:
            log.event(C.SUBMISSION_BENCHMARK, spec.benchmark)
            log.event(C.SUBMISSION_ORG, spec.org)
            log.event(C.SUBMISSION_DIVISION, "local")
            log.event(C.SUBMISSION_STATUS, spec.status)
            log.event(C.SUBMISSION_PLATFORM, spec.config)
            log.event(C.CACHE_CLEAR, True)
            log.start(C.INIT_START)
        sess = setup(spec, rank, world, device)
        if log:
            log.event(C.GLOBAL_BATCH_SIZE, sess.workload.global_batch_size)
            for key, value in sess.workload.log_params().items():
                log.event(key, value)
            log.event(C.SEED, spec.seed)
            if not throughput:
                log.event(C.EVAL_SAMPLES, sess.workload.eval_size())
            log.end(C.INIT_STOP)
            log.start(C.RUN_START)
            if not throughput:
                log.event(EVAL_TARGET, float(spec.target))
                kept = sess.workload.fp32_operations(spec.precision)
                extra = {"fp32_operations": kept} if kept else {}
                log.event(COLLECTOR_RUN, spec.collector_run() | extra)
        started = True
        status = (measure if throughput else converge)(spec, sess, log, progress)
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


def converge(
    spec: RunSpec, sess: Session, log: RunLog | None, progress: Progress | None = None
) -> str:
    """Train epoch by epoch until the quality target or ``max_epochs``; success or failed."""
    workload, ctx = sess.workload, sess.workload.ctx
    for epoch in range(1, spec.max_epochs + 1):
        samples, dt = sess.timed(log, epoch, workload.train_batches(epoch))
        throughput = samples * ctx.world / dt if dt > 0 else 0.0
        if log:
            if epoch == 1:
                log.event(C.TRAIN_SAMPLES, samples * ctx.world)
            log.event(TRACKED_STATS, {"throughput": throughput}, {"epoch_num": epoch})
            log.end(C.EPOCH_STOP, metadata={"epoch_num": epoch})
        if progress and ctx.rank == 0:
            progress("epoch", epoch, throughput)
        if epoch % spec.eval_every and epoch != spec.max_epochs:
            continue
        if log:
            log.start(C.EVAL_START, metadata={"epoch_num": epoch})
        reached = torch.zeros(2, dtype=torch.float64, device=ctx.device)
        # a model split across the ranks evaluates on every rank
        if ctx.rank == 0 or workload.sharded or workload.model_parallel:
            with sess.autocast():
                quality = workload.evaluate(sess.raw)
            reached[0] = quality
            reached[1] = float(workload.target_reached(quality, spec.target))
        if ctx.world > 1:
            dist.broadcast(reached, 0)
        quality = float(reached[0])
        if log:
            meta = {"epoch_num": epoch, **workload.eval_metadata()}
            log.event(C.EVAL_ACCURACY, quality, meta)
            log.end(C.EVAL_STOP, metadata={"epoch_num": epoch})
        if progress and ctx.rank == 0:
            progress("eval", epoch, quality)
        if reached[1] > 0:
            return "success"
    return "failed"


def step_flops(sess: Session, batch: Batch) -> int:
    """Floating-point operations of one step's forward and backward passes on ``batch``, counted by
    torch's FLOP counter on the unwrapped, eager model (matrix products and convolutions;
    custom kernels such as RoIAlign are not counted), or the model FLOPs the workload counts
    itself (the language models). Leaves no gradients behind and no compiled function changed:
    the count runs them eager, since a ``torch.compile``'d function first called under the
    counter ran eager at every later call (RetinaNet's fused focal loss: 163 img/s on an H200
    where the compiled step reaches 293)."""
    counted = sess.workload.model_flops(batch)
    if counted is not None:
        return counted
    counter = FlopCounterMode(display=False)
    with torch.compiler.set_stance("force_eager"), counter, sess.autocast():
        for mb in sess.workload.micro_batches(batch):
            sess.workload.loss(sess.raw, mb).backward()
    sess.opt.zero_grad(set_to_none=True)
    return int(counter.get_total_flops())


def measure(
    spec: RunSpec, sess: Session, log: RunLog | None, progress: Progress | None = None
) -> str:
    """Compute throughput on one device-resident synthetic batch (data loading not included):
    ``warmup_steps`` untimed steps, then ``max_epochs`` windows of ``window_steps`` steps, each
    synchronised and logged as ``tracked_stats`` (samples/s over all ranks, step time)."""
    ctx = sess.workload.ctx
    batch = next(iter(sess.workload.train_batches(1)))
    flops = step_flops(sess, batch)
    if ctx.device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(ctx.device)
    samples, warm_s = sess.timed(None, 0, [batch] * spec.warmup_steps)
    if log:
        per_window = sess.workload.batch_samples(batch) * ctx.world * spec.window_steps
        log.event(C.TRAIN_SAMPLES, per_window * spec.max_epochs)
        facts = {
            "measures": sess.workload.measures or THROUGHPUT_LABEL,
            "warmup_steps": spec.warmup_steps,
            "warmup_s": round(warm_s, 3),
            "window_steps": spec.window_steps,
            "windows": spec.max_epochs,
            "step_flops_per_accelerator": flops,
            "compiled": wants_compile(spec.params, spec.precision),
        }
        if ctx.world > 1:
            facts["data_parallel"] = dict(spec.params.get("ddp", {}))
        if sess.workload.tokens_per_sample:
            facts["tokens_per_sample"] = sess.workload.tokens_per_sample
        if ctx.device.type == "cuda":
            facts["peak_memory_gib"] = round(torch.cuda.max_memory_allocated(ctx.device) / 2**30, 3)
        log.event(COLLECTOR_RUN, spec.collector_run() | {"throughput": facts})
    for window in range(1, spec.max_epochs + 1):
        samples, dt = sess.timed(log, window, [batch] * spec.window_steps)
        rate = samples * ctx.world / dt if dt > 0 else 0.0
        if log:
            value = {"throughput": rate, "step_time_ms": 1000 * dt / spec.window_steps}
            if sess.workload.tokens_per_sample:
                value["tokens_per_s"] = rate * sess.workload.tokens_per_sample
            log.event(TRACKED_STATS, value, {"epoch_num": window})
            log.end(C.EPOCH_STOP, metadata={"epoch_num": window})
        if progress and ctx.rank == 0:
            progress("window", window, rate)
    return "success"


def release(device: torch.device) -> None:
    """Free what a finished run left before the next one starts. A run's workload can sit in
    a reference cycle until the cycle collector happens to run: torch.fx keeps the frame that
    first imports torch._dynamo, and with it the frames of the run whose optimizer triggered
    that import, its model and its data. The next run needs that memory at once: on an 80 GB
    GPU a second ResNet-50 `small` run did not fit beside the first one's 25 GiB of images."""
    gc.collect()
    if device.type == "cuda":
        # blocks cut to the last run's sizes would not hold the next run's large tensors
        torch.cuda.empty_cache()


@contextlib.contextmanager
def rank_device(rank: int, spec: RunSpec, world: int, port: int) -> Iterator[torch.device]:
    """The device of spawned data-parallel process ``rank``, inside its process group (NCCL on
    GPUs, gloo on CPU) for the block."""
    cuda = spec.accelerators > 0
    if cuda:
        torch.cuda.set_device(rank)
    device = torch.device("cuda", rank) if cuda else torch.device("cpu")
    backend = "nccl" if cuda else "gloo"
    with process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world):
        yield device


def worker(rank: int, specs: list[RunSpec], world: int, port: int, events: Any = None) -> None:
    """Entry point of one spawned data-parallel process (NCCL on GPUs, gloo on CPU): joins the
    group once and trains ``specs`` (runs of one configuration) in turn. Rank 0 puts
    ``("start", k)``, each progress report ``(kind, k, epoch, value)`` and ``("stop", k,
    status)`` on ``events`` for the k-th run. Each run builds its own model, optimizer and
    data; compiled graphs and cuDNN's algorithm choices carry over from one run to the next."""
    raise_on_sigterm()
    os.environ.update(specs[0].env)
    report = events is not None and rank == 0
    with rank_device(rank, specs[0], world, port) as device:
        for k, spec in enumerate(specs):
            if report:
                events.put(("start", k))
            progress = functools.partial(_put, events, k) if report else None
            status = train(spec, rank, world, device, progress)
            if report:
                events.put(("stop", k, status))
            release(device)


def _put(events: Any, k: int, kind: str, epoch: int, value: float) -> None:
    events.put((kind, k, epoch, value))


def mark_aborted(log_path: Path) -> None:
    """End ``log_path`` with ``run_stop`` status ``aborted`` unless it already ends with a
    ``run_stop`` (a rank killed mid-run could not write its own): the run stays a complete,
    parseable record of what happened. A log that was never begun is left absent."""
    if not log_path.is_file():
        return
    lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    last = lines[-1] if lines else ""
    if '"key": "run_stop"' in last and last.endswith("}"):
        return
    started = any('"key": "run_start"' in line for line in lines)
    with open(log_path, "a", encoding="utf-8") as f:
        if lines and not last.endswith("}"):
            f.write("\n")  # a line cut short by the kill stays one bad line, not two
    log = RunLog(log_path, append=True)
    if not started:
        log.end(C.INIT_STOP)
        log.start(C.RUN_START)
    log.end(C.RUN_STOP, metadata={"status": "aborted"})
    log.close()
