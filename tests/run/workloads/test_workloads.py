"""Every workload builds its model and takes one optimizer step at the tiny scale."""

from __future__ import annotations

import copy

import pytest
import torch

from collector.run.suite import BENCHMARKS, load_suite
from collector.run.types import RunContext
from collector.run.workloads import workload_class

SMALLER = {"train_samples": 64, "eval_samples": 16, "users": 64, "items": 128, "per_user": 8}


def tiny_params(name: str, batch_size: int) -> dict:
    """The suite's tiny parameters of `name`, with smaller data and at most `batch_size`."""
    params = copy.deepcopy(load_suite("v0.5").benchmarks[name].scales["tiny"].params)
    params.update({k: v for k, v in SMALLER.items() if k in params})
    params["batch_size"] = min(params["batch_size"], batch_size)
    return params


@pytest.mark.parametrize("name", BENCHMARKS)
def test_tiny_model_builds_and_trains_one_step(name):
    params = tiny_params(name, batch_size=16)
    torch.manual_seed(0)
    w = workload_class(name)(params, "tiny", RunContext(device=torch.device("cpu")))
    model = w.build_model()
    opt = w.make_optimizer(model)
    batch = next(iter(w.train_batches(1)))
    before = [p.detach().clone() for p in model.parameters()]
    loss = w.loss(model, batch)
    assert loss.ndim == 0 and torch.isfinite(loss)
    opt.zero_grad()
    loss.backward()
    opt.step()
    changed = sum(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert changed > 0
    q = w.evaluate(model)
    assert isinstance(q, float) and q >= 0


@pytest.mark.parametrize("name", BENCHMARKS)
def test_tiny_step_under_bf16_autocast(name):
    params = tiny_params(name, batch_size=8)
    torch.manual_seed(0)
    w = workload_class(name)(params, "tiny", RunContext(device=torch.device("cpu")))
    model = w.build_model()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = w.loss(model, next(iter(w.train_batches(1))))
        q = w.evaluate(model)
    loss.backward()
    assert torch.isfinite(loss) and q >= 0
    assert all(p.grad is None or p.grad.dtype == torch.float32 for p in model.parameters())


def test_synthetic_data_is_deterministic_and_repeats_differ_only_in_order():
    params = copy.deepcopy(load_suite("v0.5").benchmarks["minigo"].scales["tiny"].params)
    cls = workload_class("minigo")
    a = cls(params, "tiny", RunContext(device=torch.device("cpu"), seed=1))
    b = cls(params, "tiny", RunContext(device=torch.device("cpu"), seed=2))
    assert torch.equal(a.eval_set[0], b.eval_set[0]) and torch.equal(a.eval_set[1], b.eval_set[1])
    xa = next(iter(a.train_batches(1)))[0]
    xb = next(iter(b.train_batches(1)))[0]
    assert not torch.equal(xa, xb)


def test_tensor_shards_split_each_global_batch_across_ranks():
    from collector.run.workloads.base import TensorShards

    data = (torch.arange(40).float().view(40, 1, 1, 1).expand(40, 3, 2, 2).contiguous(),)
    shards = [
        TensorShards(
            data, 8, RunContext(device=torch.device("cpu"), rank=r, world=2, channels_last=True), 5
        )
        for r in (0, 1)
    ]
    assert shards[0].steps_per_epoch() == 5
    for b0, b1 in zip(shards[0].epoch(3), shards[1].epoch(3), strict=True):
        assert b0[0].shape[0] == b1[0].shape[0] == 4
        assert b0[0].is_contiguous(memory_format=torch.channels_last)
        ids = set(b0[0][:, 0, 0, 0].tolist()) | set(b1[0][:, 0, 0, 0].tolist())
        assert len(ids) == 8  # disjoint halves of one global batch
    seen = torch.cat([b[0][:, 0, 0, 0] for s in shards for b in s.epoch(3)])
    assert sorted(seen.tolist()) == list(range(40))  # one epoch covers every sample once


def test_fused_update_is_asked_for_on_gpus_only():
    small = load_suite("v0.5").benchmarks["resnet"].scales["small"].params
    assert small["optim"]["fused"] and small["ddp"]["gradient_as_bucket_view"]
    params = copy.deepcopy(load_suite("v0.5").benchmarks["resnet"].scales["tiny"].params)
    params.update(train_samples=64, eval_samples=16)
    params["optim"] = {**params["optim"], "fused": True}
    w = workload_class("resnet")(params, "tiny", RunContext(device=torch.device("cpu")))
    opt = w.make_optimizer(w.build_model())
    assert not opt.defaults.get("fused")


@pytest.mark.parametrize(
    ("scale", "world", "lr"),
    [
        ("tiny", 1, 0.4),
        ("tiny", 2, 0.8),
        ("tiny", 4, 0.8),
        ("tiny", 8, 0.8),
        ("throughput", 4, 0.4),
    ],
)
def test_learning_rate_scales_with_the_gpus_up_to_max_lr(scale, world, lr):
    """The rate grows with the global batch, up to max_lr; not at throughput, where every rank
    trains on the one-GPU run's batch: the averaged gradient is that run's, and the rate stays
    its own, so that the ranks follow its path."""
    small = load_suite("v0.5").benchmarks["resnet"].scales["small"].params
    params = copy.deepcopy(load_suite("v0.5").benchmarks["resnet"].scales["tiny"].params)
    params.update(train_samples=64, eval_samples=16, batch_per_accelerator=True)
    params["optim"] = {**small["optim"], "fused": False}
    ctx = RunContext(device=torch.device("cpu"), world=world)
    w = workload_class("resnet")(params, scale, ctx)
    opt = w.make_optimizer(torch.nn.Linear(2, 2))
    assert opt.param_groups[0]["lr"] == pytest.approx(lr)
    assert "max_lr" not in opt.defaults


def test_gnmt_lstms_run_in_fp32_under_bf16_autocast_on_cpus_without_bf16(monkeypatch):
    """oneDNN has no bf16 LSTM on a CPU without AVX-512: there GNMT's LSTMs take fp32 inputs
    under bf16 autocast (and keep bf16 elsewhere); on other CPUs autocast decides."""
    from collector.run.workloads import gnmt

    monkeypatch.setattr(gnmt, "cpu_has_bf16", lambda: False)
    lstm = torch.nn.LSTM(8, 8, batch_first=True)
    x = torch.randn(2, 3, 8).bfloat16()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y, (h, c) = gnmt.recur(lstm, x)
        assert torch.nn.functional.linear(y, lstm.weight_hh_l0).dtype == torch.bfloat16
    assert y.dtype == h.dtype == c.dtype == torch.float32
    y, _ = gnmt.recur(lstm, x.float())  # no autocast: as given
    assert y.dtype == torch.float32
