"""Running a planned suite: system capture, ceilings, telemetry, progress, processes, ingest."""

from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from collector.run import engine
from collector.run.engine import THROUGHPUT_LABEL
from collector.run.plan import (
    Machine,
    Options,
    default_out,
    ingest_results,
    last_eval_epoch,
    plan_runs,
    run_finished,
)
from collector.run.procs import free_port, raise_on_sigterm, scoped_env, spawn
from collector.run.spec import RunSpec
from collector.run.suite import Suite
from collector.run.system import capture_systems
from collector.run.telemetry import Telemetry


@dataclass
class RunResult:
    """The outcome of one run."""

    spec: RunSpec
    status: str  # success | failed | aborted | skipped-<status>
    seconds: float


@dataclass
class SuiteResult:
    """Everything a ``collector run`` did."""

    out: Path
    results: list[RunResult] = field(default_factory=list)
    interrupted: bool = False


def execute(spec: RunSpec, progress: engine.Progress | None = None) -> str:
    """Run one spec in this process (one worker) or across spawned workers; returns status."""
    gpu_ids = list(range(spec.accelerators))
    with scoped_env(spec.env), Telemetry(spec.telemetry_path, gpu_ids):
        if spec.workers > 1:
            spawn(engine.worker, spec.workers, spec, spec.workers, free_port())
            return run_finished(spec.log_path) or "aborted"
        device = torch.device("cuda", 0) if spec.accelerators else torch.device("cpu")
        _release(device)
        try:
            return engine.train(spec, 0, 1, device, progress)
        finally:
            _release(device)


def _release(device: torch.device) -> None:
    """Free what earlier in-process runs left before a run starts, and what it leaves when it
    ends. A run's workload can sit in a reference cycle until the cycle collector happens to
    run: torch.fx keeps the frame that first imports torch._dynamo, and with it the frames of
    the run whose optimizer triggered that import, its model and its data. The next run needs
    that memory at once: on an 80 GB GPU a second ResNet-50 `small` run did not fit beside
    the first one's 25 GiB of images."""
    gc.collect()
    if device.type == "cuda":
        # blocks cut to the last run's sizes would not hold the next run's large tensors
        torch.cuda.empty_cache()


def run_suite(
    opts: Options,
    machine: Machine | None = None,
    console: Console | None = None,
    suite: Suite | None = None,
) -> SuiteResult:
    """Plan and run the suite (``opts.suite`` unless ``suite`` is given); the Python API
    behind ``collector run``."""
    console = console or Console()
    machine = machine or Machine.detect()
    specs = plan_runs(opts, machine, suite)
    out = opts.out or default_out(machine)
    result = SuiteResult(out=out)
    if opts.dry_run:
        return result
    raise_on_sigterm()
    capture_systems(specs, out, opts.ceilings, console=console)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[info]}"),
    )
    with Progress(*columns, console=console, transient=False) as bars:
        suite_bar = bars.add_task(
            f"suite {specs[0].suite} ({specs[0].scale})", total=len(specs), info=""
        )
        bench_bar = bars.add_task("benchmark", total=1, info="")
        epoch_bar = bars.add_task("epoch", total=1, info="")
        for spec in specs:
            bars.update(
                bench_bar,
                description=f"{spec.benchmark} [{spec.config}]",
                total=spec.repeats,
                completed=spec.repeat,
            )
            done = run_finished(spec.log_path) if opts.resume else None
            if done:
                result.results.append(RunResult(spec, f"skipped-{done}", 0.0))
                bars.advance(suite_bar)
                continue
            unit = "window" if spec.scale == "throughput" else "epoch"
            bars.reset(epoch_bar, total=spec.max_epochs, description=unit, info="")
            rates: list[float] = []

            def progress(
                kind: str, epoch: int, value: float, _spec: RunSpec = spec, _rates: list = rates
            ) -> None:
                if kind == "eval":
                    info = f"{_spec.quality_metric} {value:.4g} (target {_spec.target:g})"
                    bars.update(epoch_bar, info=info)
                    return
                _rates.append(value)
                bars.update(epoch_bar, completed=epoch, info=f"{value:,.0f} samples/s")

            t0 = time.perf_counter()
            try:
                status = execute(spec, progress)
            except KeyboardInterrupt:
                # a run whose log already ends with its run_stop keeps the outcome it logged
                status = run_finished(spec.log_path) or "aborted"
                result.results.append(RunResult(spec, status, time.perf_counter() - t0))
                result.interrupted = True
                break
            except Exception as exc:  # a crashed run is logged as aborted; the suite goes on
                console.print(f"[red]{spec.benchmark} run {spec.repeat} crashed:[/red] {exc!r}")
                status = "aborted"
            result.results.append(RunResult(spec, status, time.perf_counter() - t0))
            bars.update(epoch_bar, **outcome(spec, status, rates))
            bars.advance(suite_bar)
            bars.update(bench_bar, completed=spec.repeat + 1)
    if result.interrupted:
        last = result.results[-1].status
        current = "is logged as aborted" if last == "aborted" else f"had already ended ({last})"
        console.print(f"interrupted: the current run {current}; rerun with --resume")
        return result
    if opts.ingest:
        ingest_results(out, opts.store, console)
    return result


def outcome(spec: RunSpec, status: str, rates: list[float]) -> dict[str, Any]:
    """How a finished run's progress line ends: the epoch that reached the target (the bar
    then ends there, not part-way to ``max_epochs``), the median of a throughput run's
    windows, or the run's status."""
    if status == "success" and spec.scale == "throughput" and rates:
        return {"info": f"median {statistics.median(rates):,.0f} samples/s ({THROUGHPUT_LABEL})"}
    epoch = last_eval_epoch(spec.log_path)
    if status == "success" and epoch is not None:
        return {"total": epoch, "completed": epoch, "info": f"reached target at epoch {epoch}"}
    if status == "failed":
        return {"info": f"target not reached in {spec.max_epochs} epochs"}
    return {"info": status}
