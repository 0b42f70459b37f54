"""A process group leaves no backend threads behind once its block ends, whether the block
succeeded or failed."""

from __future__ import annotations

import os
import random
import signal
import socket
import threading
import time
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from collector.run.procs import (
    GRACE_S,
    LOWEST_PORT,
    ephemeral_ports_start,
    free_port,
    process_group,
    raise_on_sigterm,
    scoped_env,
    start,
    stop,
    wait,
)


def thread_names() -> list[str]:
    """Names of this process's threads (Linux)."""
    tasks = Path("/proc/self/task")
    return sorted((tasks / t / "comm").read_text().strip() for t in os.listdir(tasks))


def _two_steps() -> list[str]:
    """Two DistributedDataParallel steps; the gloo threads alive meanwhile."""
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        model(torch.randn(8, 4)).sum().backward()
        opt.step()
    return [n for n in thread_names() if "gloo" in n]


def _train_then_leave(rank: int, world: int, rendezvous: str, left: dict) -> None:
    """Train in a group; record the gloo threads alive during and after it."""
    torch.set_num_threads(1)
    with process_group("gloo", init_method=rendezvous, rank=rank, world_size=world):
        inside = _two_steps()
    left[rank] = (inside, [n for n in thread_names() if "gloo" in n])


@pytest.mark.slow
def test_gloo_threads_are_joined_when_the_group_block_ends(tmp_path):
    # Threads still alive at interpreter shutdown can abort the process (see process_group).
    with mp.Manager() as manager:
        left = manager.dict()
        mp.spawn(_train_then_leave, args=(2, f"file://{tmp_path / 'rv'}", left), nprocs=2)
        for rank in (0, 1):
            inside, after = left[rank]
            assert inside, "expected gloo threads while the group exists"
            assert after == []


def _queue_collectives(fail: bool = False) -> None:
    """A DDP step, then collectives left unwaited: the gloo threads hold their tensors. With
    `fail`, an error while the model is still a local of this frame."""
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(64, 64))
    model(torch.randn(8, 64)).sum().backward()
    for _ in range(20):
        dist.all_reduce(torch.randn(1 << 14), async_op=True)
    if fail:
        raise RuntimeError(f"rank {dist.get_rank()} failed on purpose")


def _leave_work_unwaited(rank: int, world: int, rendezvous: str) -> None:
    with process_group("gloo", init_method=rendezvous, rank=rank, world_size=world):
        _queue_collectives()


@pytest.mark.slow
def test_a_worker_with_queued_collectives_exits_cleanly(tmp_path):
    # With the group left to interpreter shutdown, every such worker aborted (SIGABRT,
    # "terminate called without an active exception").
    mp.spawn(_leave_work_unwaited, args=(2, f"file://{tmp_path / 'rv'}"), nprocs=2)


def _fail_with_work_queued(rank: int, world: int, rendezvous: str) -> None:
    with process_group("gloo", init_method=rendezvous, rank=rank, world_size=world):
        _queue_collectives(fail=True)


@pytest.mark.slow
def test_a_failing_worker_with_queued_collectives_exits_with_its_error(tmp_path):
    # The failed block's frames held its model, whose release of the group then waited for
    # the group's threads while they waited for the interpreter lock: the worker hung.
    context = mp.start_processes(
        _fail_with_work_queued,
        args=(2, f"file://{tmp_path / 'rv'}"),
        nprocs=2,
        join=False,
        start_method="spawn",
    )
    began = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException, match="failed on purpose"):
        while not context.join(timeout=1):
            if time.monotonic() - began > 60:
                for process in context.processes:
                    process.kill()
                pytest.fail("the workers did not exit within 60 s")


def test_free_port_binds_below_the_ephemeral_range():
    port = free_port()
    assert LOWEST_PORT <= port < ephemeral_ports_start()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
    assert free_port(avoid=(port,)) != port


def test_free_port_skips_a_port_in_use(monkeypatch):
    with socket.socket() as held:
        held.bind(("", free_port()))
        taken = held.getsockname()[1]
        monkeypatch.setattr(random.Random, "sample", lambda self, pool, k: [taken, taken + 1])
        assert free_port() == taken + 1


def test_free_port_falls_back_to_the_kernel_where_nothing_lies_below_its_range(monkeypatch):
    from collector.run import procs

    monkeypatch.setattr(procs, "ephemeral_ports_start", lambda: LOWEST_PORT)
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_scoped_env_restores():
    os.environ.pop("COLLECTOR_TEST_VAR", None)
    with scoped_env({"COLLECTOR_TEST_VAR": "1"}):
        assert os.environ["COLLECTOR_TEST_VAR"] == "1"
    assert "COLLECTOR_TEST_VAR" not in os.environ


def _deaf(rank: int, ready: Path) -> None:
    """A rank that cannot handle SIGTERM, as one blocked in a collective whose peers are gone."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    (ready / str(rank)).touch()
    time.sleep(600)


def _until_ready(ready: Path, ranks: int) -> None:
    deadline = time.monotonic() + 120
    while len(list(ready.iterdir())) < ranks:
        assert time.monotonic() < deadline, "the workers never started"
        time.sleep(0.05)


@pytest.mark.slow
def test_an_interrupt_stops_workers_that_ignore_sigterm_within_the_grace_period(tmp_path):
    context = start(_deaf, 2, tmp_path)
    _until_ready(tmp_path, 2)
    began = time.monotonic()

    def interrupt() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        wait(context, interrupt)
    assert GRACE_S <= time.monotonic() - began < GRACE_S + 10
    assert [p.exitcode for p in context.processes] == [-signal.SIGKILL] * 2


def _fail_once_ready(rank: int, ready: Path) -> None:
    if rank == 0:
        _until_ready(ready, 1)
        raise RuntimeError("rank 0 failed on purpose")
    _deaf(rank, ready)


@pytest.mark.slow
def test_a_failed_rank_brings_down_the_others_and_its_error_is_raised(tmp_path):
    context = start(_fail_once_ready, 2, tmp_path)
    began = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException, match="failed on purpose"):
        wait(context, grace=2)
    assert time.monotonic() - began < 2 * 2 + 30
    assert context.processes[1].exitcode == -signal.SIGKILL


@pytest.mark.slow
def test_a_second_signal_while_stopping_still_ends_every_worker(tmp_path):
    # as Ctrl-C pressed twice: the second comes while the first is stopping the workers
    raise_on_sigterm()
    context = start(_deaf, 2, tmp_path)
    _until_ready(tmp_path, 2)
    again = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM))
    again.start()
    try:
        stop(context.processes, grace=3)
    finally:
        again.join()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    assert [p.exitcode for p in context.processes] == [-signal.SIGKILL] * 2
