"""One process of a multi-node job, started by torchrun: ``python -m collector.run.node ...``.

torchrun (or Slurm through torchrun) starts ``--nproc-per-node`` copies of this module on each
node and sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR`` and
``MASTER_PORT``. Every process joins one process group (NCCL on GPUs, gloo on CPU), plans the
same runs and trains each of them as one data-parallel rank. Global rank 0 writes the MLPerf
logs, telemetry and the system description (with every node's facts, gathered over the group)
under ``--out``: on a cluster that folder must be on a filesystem shared by the nodes, or the
results stay on whichever node rank 0 ran.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from collector.errors import RunError
from collector.run import engine
from collector.run.plan import Machine, Options, comma_list, plan_runs, run_finished
from collector.run.procs import process_group, raise_on_sigterm
from collector.run.spec import RunSpec
from collector.run.sysinfo import NCCL_ENV
from collector.run.system import capture_systems, node_facts
from collector.run.telemetry import Telemetry


def parser() -> argparse.ArgumentParser:
    """The node options: the subset of ``collector run`` a node needs (``--out`` required),
    each stored under its :class:`Options` field."""
    p = argparse.ArgumentParser(prog="python -m collector.run.node", description=__doc__)
    p.add_argument("--suite", default="v0.5")
    p.add_argument("--scale", default="auto")
    p.add_argument("--benchmarks", type=comma_list, help="comma-separated subset")
    p.add_argument("--precision", dest="precisions", type=comma_list)
    p.add_argument("--interconnect", dest="interconnects", type=comma_list, default=["default"])
    p.add_argument("--out", type=lambda t: Path(t).resolve(), required=True)
    p.add_argument("--data-root", type=Path)
    p.add_argument("--nodes", type=int, required=True)
    p.add_argument("--gpus-per-node", dest="gpus", type=lambda t: [int(t)], required=True)
    for flag in ("--repeats", "--steps", "--warmup"):
        p.add_argument(flag, type=int)
    p.add_argument("--batch-size", dest="batch", type=int)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--no-ceilings", dest="ceilings", action="store_false")
    return p


def options(argv: list[str] | None = None) -> Options:
    """Parse node arguments into :class:`Options` (one interconnect: NCCL reads it at start)."""
    opts = Options(**vars(parser().parse_args(argv)), ingest=False, launcher="torchrun")
    opts.validate()
    return opts


def _env_int(name: str) -> int:
    try:
        return int(os.environ[name])
    except (KeyError, ValueError) as exc:
        raise RunError(f"{name} is not set: start this module through torchrun") from exc


def run_node(opts: Options) -> list[tuple[RunSpec, str]]:
    """Join the torchrun job, run every planned spec as one rank; returns (spec, status)."""
    rank, world = _env_int("RANK"), _env_int("WORLD_SIZE")
    local_rank, local_world = _env_int("LOCAL_RANK"), _env_int("LOCAL_WORLD_SIZE")
    per_node = opts.gpus[0]
    if world != opts.nodes * per_node or local_world != per_node:
        raise RunError(
            f"torchrun started {world} process(es), {local_world} per node; the job asks for "
            f"{opts.nodes} node(s) x {per_node}"
        )
    machine = Machine.detect()
    cuda = bool(machine.gpu_names)
    os.environ.update(NCCL_ENV[opts.interconnects[0]] if cuda else {})
    if cuda:
        torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    results: list[tuple[RunSpec, str]] = []
    with process_group("nccl" if cuda else "gloo"):
        facts = node_facts(per_node) if local_rank == 0 else None
        gathered: list[Any] = [None] * world
        dist.all_gather_object(gathered, facts)
        nodes = [f for f in gathered if f]
        # Every rank plans with the first node's host name, so config names and paths agree.
        machine = dataclasses.replace(machine, host=nodes[0]["host"])
        specs = plan_runs(opts, machine)
        out = opts.out or Path.cwd()
        if rank == 0:
            capture_systems(specs, out, opts.ceilings, nodes)
        for k, spec in enumerate(specs, 1):
            done = [run_finished(spec.log_path) if opts.resume and rank == 0 else None]
            dist.broadcast_object_list(done, 0)
            if done[0]:
                results.append((spec, f"skipped-{done[0]}"))
                continue
            t0 = time.perf_counter()
            gpu_ids = list(range(spec.accelerators))
            with Telemetry(spec.telemetry_path, gpu_ids) if rank == 0 else contextlib.nullcontext():
                status = engine.train(spec, rank, world, device)
            if rank == 0:
                print(
                    f"[{k}/{len(specs)}] {spec.config} {spec.benchmark} run {spec.repeat}: "
                    f"{status} ({time.perf_counter() - t0:.1f} s)",
                    flush=True,
                )
            results.append((spec, status))
        dist.barrier()
    return results


def main(argv: list[str] | None = None) -> int:
    """Entry point; exit status 0 when every run ended (success or failed), else 1."""
    raise_on_sigterm()
    try:
        results = run_node(options(argv))
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 1 if any(status == "aborted" for _, status in results) else 0


if __name__ == "__main__":
    sys.exit(main())
