"""Running a planned suite: system capture, ceilings, telemetry, progress, processes, ingest."""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.multiprocessing as mp
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
from collector.run.procs import free_port, raise_on_sigterm, scoped_env, start, wait
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
    if spec.workers > 1:
        statuses: list[str] = []
        execute_group([spec], _Reports([spec], progress, lambda _, status: statuses.append(status)))
        return statuses[0] if statuses else "aborted"
    gpu_ids = list(range(spec.accelerators))
    device = torch.device("cuda", 0) if spec.accelerators else torch.device("cpu")
    with scoped_env(spec.env), Telemetry(spec.telemetry_path, gpu_ids):
        engine.release(device)
        try:
            return engine.train(spec, 0, 1, device, progress)
        finally:
            engine.release(device)


class _Reports:
    """What the workers of a group report, turned into telemetry, progress and statuses: a
    run's telemetry is sampled from its ``start`` to its ``stop``; ``current`` is the run
    under way (None between runs)."""

    def __init__(
        self,
        specs: list[RunSpec],
        progress: engine.Progress | None = None,
        stopped: Callable[[RunSpec, str], None] = lambda spec, status: None,
        started: Callable[[RunSpec], None] = lambda spec: None,
    ) -> None:
        self.specs, self.progress, self.stopped, self.started = specs, progress, stopped, started
        self.current: RunSpec | None = None
        self._telemetry = contextlib.ExitStack()

    def __call__(self, kind: str, k: int, *values: Any) -> None:
        spec = self.specs[k]
        if kind == "start":
            self.current = spec
            self.started(spec)
            gpu_ids = list(range(spec.accelerators))
            self._telemetry.enter_context(Telemetry(spec.telemetry_path, gpu_ids))
        elif kind == "stop":
            self._telemetry.close()
            self.current = None
            self.stopped(spec, values[0])
        elif self.progress is not None:
            self.progress(kind, *values)

    def close(self) -> None:
        """End the telemetry of a run cut short."""
        self._telemetry.close()


def execute_group(specs: list[RunSpec], reports: _Reports) -> None:
    """Run ``specs`` (runs of one configuration: the same workers and environment) in one set
    of spawned workers, which join their process group once; ``reports`` gets what rank 0
    reports. A crashed or interrupted run is logged as aborted (the workers are stopped
    first) and the error re-raised."""
    events = mp.get_context("spawn").SimpleQueue()

    def drain() -> None:
        while not events.empty():
            reports(*events.get())

    with scoped_env(specs[0].env):
        workers = start(
            engine.worker, specs[0].workers, specs, specs[0].workers, free_port(), events
        )
    try:
        wait(workers, drain)
    except BaseException:
        # what rank 0 put on the queue before the end says which run was under way: a run
        # can begin (or end) between the last drain and the interrupt
        with contextlib.suppress(Exception):
            drain()
        if reports.current is not None:
            engine.mark_aborted(reports.current.log_path)
        raise
    finally:
        reports.close()


def run_suite(
    opts: Options,
    machine: Machine | None = None,
    console: Console | None = None,
    suite: Suite | None = None,
) -> SuiteResult:
    """Plan and run the suite (``opts.suite`` unless ``suite`` is given); the Python API
    behind ``collector run``.

    Runs of one configuration on several workers share one set of worker processes (see
    :func:`execute_group`); a crashed run is logged as aborted and the others go on. An
    interrupt (Ctrl-C, SIGTERM) stops every worker within seconds, logs the current run as
    aborted and returns with ``interrupted`` set; finished runs keep their logs.
    """
    console = console or Console()
    machine = machine or Machine.detect()
    specs = plan_runs(opts, machine, suite)
    out = opts.out or default_out(machine)
    result = SuiteResult(out=out)
    if opts.dry_run:
        return result
    raise_on_sigterm()
    capture_systems(specs, out, opts.ceilings, console=console)
    with Progress(*COLUMNS, console=console, transient=False) as bars:
        view = _View(bars, specs)
        try:
            for config in dict.fromkeys(s.config for s in specs):
                runs = [s for s in specs if s.config == config]
                _run_config(runs, opts.resume, view, result, console)
        except KeyboardInterrupt:
            result.interrupted = True
    if result.interrupted:
        last = result.results[-1].status if result.results else "aborted"
        current = "is logged as aborted" if last == "aborted" else f"had already ended ({last})"
        console.print(f"interrupted: the current run {current}; rerun with --resume")
        return result
    if opts.ingest:
        ingest_results(out, opts.store, console)
    return result


COLUMNS = (
    TextColumn("{task.description}"),
    BarColumn(),
    MofNCompleteColumn(),
    TimeElapsedColumn(),
    TextColumn("{task.fields[info]}"),
)


class _View:
    """The progress bars: the suite, the benchmark of the current run, its epochs or
    windows."""

    def __init__(self, bars: Progress, specs: list[RunSpec]) -> None:
        self.bars = bars
        self.suite = bars.add_task(
            f"suite {specs[0].suite} ({specs[0].scale})", total=len(specs), info=""
        )
        self.bench = bars.add_task("benchmark", total=1, info="")
        self.epoch = bars.add_task("epoch", total=1, info="")
        self.spec: RunSpec | None = None
        self.rates: list[float] = []
        self.t0 = time.perf_counter()

    def age(self) -> float:
        """Seconds since the current run began."""
        return time.perf_counter() - self.t0

    def start(self, spec: RunSpec) -> None:
        """A run begins."""
        self.spec, self.rates, self.t0 = spec, [], time.perf_counter()
        self.bars.update(
            self.bench,
            description=f"{spec.benchmark} [{spec.config}]",
            total=spec.repeats,
            completed=spec.repeat,
        )
        unit = "window" if spec.scale == "throughput" else "epoch"
        self.bars.reset(self.epoch, total=spec.max_epochs, description=unit, info="")

    def progress(self, kind: str, epoch: int, value: float) -> None:
        """An epoch, window or evaluation of the current run ended."""
        if self.spec is None:
            return
        if kind == "eval":
            info = f"{self.spec.quality_metric} {value:.4g} (target {self.spec.target:g})"
            self.bars.update(self.epoch, info=info)
            return
        self.rates.append(value)
        self.bars.update(self.epoch, completed=epoch, info=f"{value:,.0f} samples/s")

    def end(self, spec: RunSpec, status: str) -> None:
        """A run ended (or was skipped) with ``status``."""
        if not status.startswith("skipped"):
            self.bars.update(self.epoch, **outcome(spec, status, self.rates))
            self.bars.update(self.bench, completed=spec.repeat + 1)
        self.bars.advance(self.suite)


def _run_config(
    runs: list[RunSpec], resume: bool, view: _View, result: SuiteResult, console: Console
) -> None:
    """The runs of one configuration, in order: in this process on one worker, else in one
    set of workers (a fresh set after a crash, for the runs after the crashed one)."""
    todo = []
    for spec in runs:
        done = run_finished(spec.log_path) if resume else None
        if done:
            result.results.append(RunResult(spec, f"skipped-{done}", 0.0))
            view.end(spec, f"skipped-{done}")
        else:
            todo.append(spec)
    while todo:
        if todo[0].workers == 1:
            _run_here(todo.pop(0), view, result, console)
        else:
            _run_workers(todo, view, result, console)


def _run_here(spec: RunSpec, view: _View, result: SuiteResult, console: Console) -> None:
    view.start(spec)
    try:
        status = execute(spec, view.progress)
    except KeyboardInterrupt:
        # a run whose log already ends with its run_stop keeps the outcome it logged
        result.results.append(RunResult(spec, run_finished(spec.log_path) or "aborted", view.age()))
        raise
    except Exception as exc:  # a crashed run is logged as aborted; the suite goes on
        console.print(f"[red]{spec.benchmark} run {spec.repeat} crashed:[/red] {exc!r}")
        status = "aborted"
    result.results.append(RunResult(spec, status, view.age()))
    view.end(spec, status)


def _run_workers(todo: list[RunSpec], view: _View, result: SuiteResult, console: Console) -> None:
    """Run ``todo`` in one set of workers, removing each run from it as it ends; a crashed
    run is logged as aborted and removed too, so that the caller goes on with the rest."""
    group = list(todo)

    def ended(spec: RunSpec, status: str) -> None:
        result.results.append(RunResult(spec, status, view.age()))
        view.end(spec, status)
        todo.remove(spec)

    reports = _Reports(group, view.progress, ended, view.start)
    try:
        execute_group(group, reports)
    except KeyboardInterrupt:
        if reports.current is not None:  # aborted, unless its log already ends with run_stop
            spec = reports.current
            result.results.append(
                RunResult(spec, run_finished(spec.log_path) or "aborted", view.age())
            )
        raise
    except Exception as exc:
        spec = reports.current or todo[0]  # a group that failed to start blames its first run
        console.print(f"[red]{spec.benchmark} run {spec.repeat} crashed:[/red] {exc!r}")
        engine.mark_aborted(spec.log_path)
        ended(spec, "aborted")
        return
    for spec in [s for s in group if s in todo]:  # ended without a report: its log says how
        ended(spec, run_finished(spec.log_path) or "aborted")


def outcome(spec: RunSpec, status: str, rates: list[float]) -> dict[str, Any]:
    """How a finished run's progress line ends: the epoch that reached the target (the bar
    then ends there, not part-way to ``max_epochs``), the median of a throughput run's
    windows, or the run's status."""
    if status == "success" and spec.scale == "throughput" and rates:
        median = statistics.median(rates)
        shown = f"{median:,.0f}" if median >= 100 else f"{median:.3g}"  # 70B LoRA: 0.2 a second
        return {"info": f"median {shown} samples/s ({THROUGHPUT_LABEL})"}
    epoch = last_eval_epoch(spec.log_path)
    if status == "success" and epoch is not None:
        return {"total": epoch, "completed": epoch, "info": f"reached target at epoch {epoch}"}
    if status == "failed":
        return {"info": f"target not reached in {spec.max_epochs} epochs"}
    return {"info": status}
