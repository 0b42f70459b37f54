"""Every workload trains under DistributedDataParallel: two CPU processes over gloo."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from collector.run.procs import process_group
from collector.run.suite import BENCHMARKS
from collector.run.types import RunContext
from collector.run.workloads import workload_class
from tests.run.test_procs import thread_names
from tests.run.workloads.test_workloads import tiny_params

STEPS = 2  # DDP checks at the second step that the first one reduced every gradient


def _steps(name: str, rank: int, world: int) -> None:
    """Two DDP steps of one workload, then a check that both ranks hold the same weights."""
    params = tiny_params(name, batch_size=8)
    ctx = RunContext(device=torch.device("cpu"), rank=rank, world=world, seed=1)
    torch.manual_seed(0)
    w = workload_class(name)(params, "tiny", ctx)
    model = torch.nn.parallel.DistributedDataParallel(w.build_model(), **params.get("ddp", {}))
    opt = w.make_optimizer(model)
    batches = iter(w.train_batches(1))
    for _ in range(STEPS):
        opt.zero_grad()
        w.loss(model, next(batches)).backward()
        opt.step()
    first = next(model.parameters()).detach().clone()
    mean = first.clone()
    dist.all_reduce(mean)
    assert torch.allclose(first, mean / world), "ranks hold different weights"


def _train(rank: int, world: int, rendezvous: str, failures: dict) -> None:
    """Every workload on this rank (a failure is kept by benchmark); no gloo thread outlives
    the group, as in the runner's workers."""
    torch.set_num_threads(1)
    with process_group("gloo", init_method=rendezvous, rank=rank, world_size=world):
        for name in BENCHMARKS:
            try:
                _steps(name, rank, world)
            except Exception as e:  # noqa: BLE001 - reported per benchmark by the test
                failures[f"{name} rank {rank}"] = f"{type(e).__name__}: {e}"[:300]
    if threads := [n for n in thread_names() if "gloo" in n]:
        failures[f"rank {rank} after the group"] = f"threads left: {threads}"


@pytest.mark.slow
def test_every_workload_steps_under_ddp_with_gloo(tmp_path):
    with mp.Manager() as manager:
        failures = manager.dict()
        mp.spawn(_train, args=(2, f"file://{tmp_path / 'rendezvous'}", failures), nprocs=2)
        assert dict(failures) == {}
