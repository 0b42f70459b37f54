"""The description of one run, passed from the planner to the training processes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collector.ingest.telemetry import telemetry_path

#: fp8: bf16 with the matrix products of the language models in float8 (torchao)
PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8")
INTERCONNECTS = ("default", "no-p2p")


@dataclass(frozen=True)
class RunSpec:
    """Everything a training process needs to run one benchmark once and log it."""

    suite: str
    scale: str
    benchmark: str
    config: str
    precision: str
    accelerator: str
    accelerators: int  # GPUs per node; 0 on CPU
    workers: int  # data-parallel processes per node (GPUs, or CPU processes)
    interconnect: str  # default | no-p2p | none
    quality_metric: str
    repeat: int
    repeats: int
    seed: int
    target: float
    max_epochs: int
    eval_every: int
    params: dict[str, Any]
    log_path: Path
    org: str
    threads: int = 1
    data_root: Path | None = None
    framework: str = ""
    env: dict[str, str] = field(default_factory=dict)
    nodes: int = 1
    warmup_steps: int = 0  # throughput scale: untimed steps before the windows
    window_steps: int = 0  # throughput scale: steps per timed window (max_epochs windows)

    @property
    def world(self) -> int:
        """Data-parallel processes over all nodes."""
        return self.nodes * self.workers

    @property
    def total_accelerators(self) -> int:
        """``accelerators`` of ``collector_run``: GPUs over all nodes.

        A single-host CPU run reports 0; a multi-node CPU run reports its processes, so the
        record still says how wide the job was.
        """
        if self.accelerators:
            return self.nodes * self.accelerators
        return self.world if self.nodes > 1 else 0

    @property
    def status(self) -> str:
        """``submission_status``: ``full``, ``throughput``, or ``proxy-<scale>``."""
        return self.scale if self.scale in ("full", "throughput") else f"proxy-{self.scale}"

    @property
    def telemetry_path(self) -> Path:
        """``result_<i>.telemetry.csv`` beside the log (where ingest looks for it)."""
        return telemetry_path(self.log_path)

    def collector_run(self) -> dict[str, Any]:
        """The value of the ``collector_run`` event."""
        keys = ("suite", "scale", "benchmark", "config", "precision", "accelerator")
        value = {k: getattr(self, k) for k in keys}
        value |= {"accelerators": self.total_accelerators, "nodes": self.nodes}
        keys = ("interconnect", "quality_metric", "repeat", "framework")
        return value | {k: getattr(self, k) for k in keys}
