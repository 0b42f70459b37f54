"""Expanding the command-line dimensions into the matrix of runs, and describing it."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from rich.console import Console

from collector.errors import RunError
from collector.ingest.pipeline import ingest
from collector.run.spec import INTERCONNECTS, PRECISIONS, RunSpec
from collector.run.suite import SCALES, Suite, load_suite
from collector.run.sysinfo import (
    NCCL_ENV,
    accel_short,
    config_name,
    cpu_model,
    hostname,
    visible_gpus,
)


@dataclass(frozen=True)
class Machine:
    """What the planner needs to know about this host."""

    host: str
    cpu: str
    cores: int
    gpu_names: tuple[str, ...] = ()

    @classmethod
    def detect(cls) -> Machine:
        """Probe this host (GPUs through NVML, as ``CUDA_VISIBLE_DEVICES`` shows them)."""
        names = tuple(g["name"] for g in visible_gpus())
        affinity = getattr(os, "sched_getaffinity", None)  # Linux
        cores = len(affinity(0)) if affinity else os.cpu_count() or 1
        return cls(hostname(), cpu_model(), cores, names)


LAUNCHERS = ("local", "torchrun", "slurm")


@dataclass
class Options:
    """The ``collector run`` options, as a plain object the CLI, the API, the node processes
    and the launchers share; :meth:`validate` is the one place they are checked."""

    suite: str = "v0.5"
    benchmarks: list[str] | None = None
    scale: str = "auto"
    gpus: list[int] = field(default_factory=lambda: [1])
    precisions: list[str] | None = None
    interconnects: list[str] = field(default_factory=lambda: ["default"])
    repeats: int | None = None
    data_root: Path | None = None
    out: Path | None = None
    store: Path | None = None
    resume: bool = False
    dry_run: bool = False
    ingest: bool = True
    ceilings: bool = True
    nodes: int = 1
    launcher: str = "local"  # local | torchrun | slurm
    node_rank: int | None = None
    rdzv_endpoint: str | None = None
    sbatch_args: list[str] = field(default_factory=list)
    # throughput scale: overrides of the suite's steps and batch (short runs, tests)
    steps: int | None = None  # steps per timed window
    warmup: int | None = None  # untimed steps
    batch: int | None = None  # samples per accelerator

    def validate(self, suite: Suite | None = None, machine: Machine | None = None) -> Suite:
        """Raise :class:`RunError` naming the first option that cannot run; return the suite.

        Without ``machine`` only what holds on any host is checked; with it also what this
        host allows (precisions and interconnects that need GPUs, no more GPUs than it has).
        """
        suite = suite or load_suite(self.suite)
        self._check_launch()
        unknown = [b for b in self.benchmarks or [] if b not in suite.benchmarks]
        if unknown:
            known = ", ".join(suite.benchmarks)
            raise RunError(f"unknown benchmark(s) {', '.join(unknown)} (known: {known})")
        if self.scale != "auto" and self.scale not in SCALES:
            raise RunError(f"unknown scale {self.scale!r} (choose from auto, {', '.join(SCALES)})")
        if self.scale != "auto" and self.scale not in suite.scales:
            have = ", ".join(suite.scales)
            raise RunError(f"suite {suite.name} has no scale {self.scale} (it has {have})")
        for p in self.precisions or []:
            if p not in PRECISIONS:
                raise RunError(f"unknown precision {p!r} (choose from {', '.join(PRECISIONS)})")
        check_precisions(suite, self.benchmarks or list(suite.benchmarks), self.precisions or [])
        for ic in self.interconnects:
            if ic not in INTERCONNECTS:
                choices = ", ".join(INTERCONNECTS)
                raise RunError(f"unknown interconnect {ic!r} (choose from {choices})")
        for g in self.gpus:
            if g < 1:
                raise RunError(f"--gpus must be >= 1, got {g}")
        if self.repeats is not None and self.repeats < 1:
            raise RunError("--repeats must be >= 1")
        for name, v in (("--steps", self.steps), ("--batch-size", self.batch)):
            if v is not None and v < 1:
                raise RunError(f"{name} must be >= 1, got {v}")
        if self.warmup is not None and self.warmup < 0:
            raise RunError(f"--warmup must be >= 0, got {self.warmup}")
        tuned = self.steps is not None or self.warmup is not None or self.batch is not None
        if self.scale != "throughput" and tuned:
            raise RunError("--steps, --warmup and --batch-size apply to --scale throughput only")
        if self.scale == "full" and self.data_root is None:
            raise RunError("--scale full needs --data-root")
        if machine is not None:
            self._check_host(machine)
        return suite

    def _check_launch(self) -> None:
        if self.launcher not in LAUNCHERS:
            choices = ", ".join(LAUNCHERS)
            raise RunError(f"unknown launcher {self.launcher!r} (choose from {choices})")
        if self.nodes < 1:
            raise RunError(f"--nodes must be >= 1, got {self.nodes}")
        if self.launcher == "local":
            if self.nodes != 1 or self.node_rank is not None:
                raise RunError("--nodes and --node-rank need --launcher torchrun or slurm")
            return
        if len(self.gpus) != 1 or self.gpus[0] < 1:
            raise RunError("a multi-node job takes one width: --gpus-per-node G (G >= 1)")
        if len(self.interconnects) != 1:
            raise RunError("a multi-node job runs one --interconnect; launch one job per setting")
        if self.node_rank is not None and not 0 <= self.node_rank < self.nodes:
            raise RunError(f"--node-rank must be in 0..{self.nodes - 1}, got {self.node_rank}")
        if self.rdzv_endpoint is not None:
            host, _, port = self.rdzv_endpoint.rpartition(":")
            if not host or not port.isdigit():
                raise RunError(f"--rdzv-endpoint expects host:port, got {self.rdzv_endpoint!r}")

    def _check_host(self, machine: Machine) -> None:
        if machine.gpu_names:
            for g in self.gpus:
                if g > len(machine.gpu_names):
                    raise RunError(f"--gpus {g}: this machine has {len(machine.gpu_names)} GPU(s)")
            return
        for p in self.precisions or []:
            if p in ("tf32", "fp16", "fp8"):
                raise RunError(f"precision {p} needs a GPU; on CPU use fp32 or bf16")
        for ic in self.interconnects:
            if ic != "default":
                raise RunError(
                    f"interconnect {ic} needs GPUs (NCCL); on CPU only 'default' applies"
                )


def check_precisions(suite: Suite, benchmarks: list[str], precisions: list[str]) -> None:
    """Raise :class:`RunError` where a benchmark does not run in one of ``precisions``."""
    for p in precisions:
        for bench in benchmarks:
            if p not in suite.benchmarks[bench].precisions:
                known = ", ".join(suite.benchmarks[bench].precisions)
                raise RunError(f"{bench} does not run in {p} (it runs in {known})")


def comma_list(text: str | None) -> list[str] | None:
    """The items of a comma-separated option (None when it names none)."""
    items = [t.strip() for t in (text or "").split(",") if t.strip()]
    return items or None


def framework() -> str:
    """``PyTorch <version>`` as installed (read without importing torch)."""
    try:
        return f"PyTorch {metadata.version('torch')}"
    except metadata.PackageNotFoundError:
        return "PyTorch"


def threads_per_worker(cores: int, workers: int, gpu: bool) -> int:
    """Intra-op threads for each worker process.

    GPU jobs share the host cores among workers. CPU jobs on small hosts (<= 4 cores) leave one
    core for the main process (telemetry, logging) and the OS: an OpenMP team that loses a core
    to another process spins at its barriers and slows down many times over, whereas one thread
    fewer costs a fraction.
    """
    if not gpu and cores <= 4:
        cores -= 1
    return max(1, cores // workers)


def auto_scale(suite: Suite, on_gpu: bool) -> str:
    """``--scale auto``: tiny on CPU; on GPUs small, or throughput where the suite has no
    small scale."""
    if not on_gpu:
        return "tiny"
    return "small" if "small" in suite.scales else "throughput"


def default_out(machine: Machine) -> Path:
    """``.collector/runs/<hostname>`` under the current directory (git ignores `.collector`,
    so a run leaves the checkout clean)."""
    return Path.cwd() / ".collector" / "runs" / machine.host


def plan_runs(opts: Options, machine: Machine, suite: Suite | None = None) -> list[RunSpec]:
    """Every run the options ask for, in execution order (config, benchmark, repeat)."""
    suite = opts.validate(suite, machine)
    on_gpu = bool(machine.gpu_names)
    scale = opts.scale if opts.scale != "auto" else auto_scale(suite, on_gpu)
    names = opts.benchmarks or list(suite.benchmarks)
    precisions = opts.precisions or (["bf16"] if on_gpu else ["fp32"])
    check_precisions(suite, names, precisions)
    out = opts.out or default_out(machine)
    accel = machine.gpu_names[0] if on_gpu else machine.cpu
    short = accel_short(accel) if on_gpu else "cpu"
    specs, stack = [], framework()
    for g, prec, ic, bench in itertools.product(opts.gpus, precisions, opts.interconnects, names):
        if g == 1 and opts.nodes == 1 and ic != "default" and "default" in opts.interconnects:
            continue  # one accelerator has no link to change: the default run is the same run
        ic_name = ic if on_gpu else "none"
        config = config_name(machine.host, g, short, prec, ic_name, opts.nodes)
        b = suite.benchmarks[bench]
        s = b.scales[scale]
        params = {**s.params, "batch_size": opts.batch} if opts.batch else s.params
        n = opts.repeats or s.runs
        for i in range(n):
            specs.append(
                RunSpec(
                    suite=suite.name,
                    scale=scale,
                    benchmark=bench,
                    config=config,
                    precision=prec,
                    accelerator=accel,
                    accelerators=g if on_gpu else 0,
                    workers=g,
                    interconnect=ic_name,
                    quality_metric=b.quality_metric,
                    repeat=i,
                    repeats=n,
                    seed=i + 1,
                    target=s.target,
                    max_epochs=s.max_epochs,
                    eval_every=s.eval_every,
                    params=params,
                    log_path=out / "results" / config / bench / f"result_{i}.txt",
                    org=machine.host,
                    threads=threads_per_worker(machine.cores, g, on_gpu),
                    data_root=opts.data_root,
                    framework=stack,
                    env=NCCL_ENV[ic_name] if on_gpu else {},
                    nodes=opts.nodes,
                    warmup_steps=s.warmup_steps if opts.warmup is None else opts.warmup,
                    window_steps=opts.steps or s.window_steps,
                )
            )
    return specs


def _records(log: Path) -> list[dict]:
    """Each non-empty line of ``log`` as its MLLOG record, ``{}`` where it is not one."""
    if not log.is_file():
        return []
    records: list[dict] = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        rec: object = {}
        with contextlib.suppress(json.JSONDecodeError):
            rec = json.loads(line[len(":::MLLOG ") :]) if line.startswith(":::MLLOG ") else {}
        if line.strip():
            records.append(rec if isinstance(rec, dict) else {})
    return records


def run_finished(log: Path) -> str | None:
    """The run_stop status if ``log`` ends with run_stop success or failed, else None."""
    last = (_records(log) or [{}])[-1]
    status = (last.get("metadata") or {}).get("status")
    return status if last.get("key") == "run_stop" and status in ("success", "failed") else None


def last_eval_epoch(log: Path) -> int | None:
    """The ``epoch_num`` of the last ``eval_accuracy`` in ``log`` (None without one)."""
    evals = [r for r in _records(log) if r.get("key") == "eval_accuracy"]
    epochs = [(r.get("metadata") or {}).get("epoch_num") for r in evals]
    return next((int(e) for e in reversed(epochs) if e is not None), None)


def describe(specs: list[RunSpec], out: Path, resume: bool = False) -> list[str]:
    """The dry-run plan: one line per run.

    Format: ``<k>/<N> <config> <benchmark> scale=<s> repeat=<i>/<n> workers=<w>
    precision=<p> interconnect=<ic> target=<t> <path relative to out>`` followed by ``done``
    or ``todo`` when resuming; multi-node runs add ``nodes=<n>`` after ``workers``
    (workers per node). At ``throughput`` ``steps=<warm-up>+<windows>x<steps>`` replaces
    the target.
    """
    lines = []
    for k, s in enumerate(specs, 1):
        rel = s.log_path.relative_to(out) if s.log_path.is_relative_to(out) else s.log_path
        line = (
            f"{k}/{len(specs)} {s.config} {s.benchmark} scale={s.scale} "
            f"repeat={s.repeat + 1}/{s.repeats} workers={s.workers} "
            + (f"nodes={s.nodes} " if s.nodes > 1 else "")
            + f"precision={s.precision} "
            f"interconnect={s.interconnect} {_goal(s)} {rel.as_posix()}"
        )
        if resume:
            line += " done" if run_finished(s.log_path) else " todo"
        lines.append(line)
    return lines


def ingest_results(out: Path, store: Path | None, console: Console) -> None:
    """Ingest the results folder ``out`` into the store (the default store when None)."""
    ingest([out], store=store)
    console.print(f"ingested {out}")


def _goal(spec: RunSpec) -> str:
    if spec.scale == "throughput":
        return f"steps={spec.warmup_steps}+{spec.max_epochs}x{spec.window_steps}"
    return f"target={spec.target:g}"
