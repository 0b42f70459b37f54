"""The v5.1 language models: Llama 3.1 8B pre-training and Llama 2 70B LoRA, on CPU at toy size
through the same code path (meta device, FSDP2 over two gloo processes, peft LoRA)."""

from __future__ import annotations

import copy
import importlib.util
import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from collector.errors import RunError
from collector.run.plan import Options, plan_runs
from collector.run.runner import run_suite
from collector.run.sharded import init_weights
from collector.run.suite import load_suite
from collector.run.types import RunContext
from collector.run.workloads import workload_class

# found, not imported: collecting this file costs no import of transformers and peft (3 s on
# two cores) in a worker that runs none of its tests
pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("transformers", "peft")),
    reason="the llm extra (transformers, peft) is not installed",
)

LLMS = ["llama31_8b", "llama2_70b_lora"]


def events(log: Path) -> list[dict]:
    return [json.loads(ln[len(":::MLLOG ") :]) for ln in log.read_text().splitlines()]


def small_suite(throughput: bool = False, **change):
    """v5.1 with fewer synthetic samples (and, for ``throughput``, the tiny models in the
    throughput block) so that each run takes a few seconds on two cores."""
    suite = copy.deepcopy(load_suite("v5.1"))
    suite = replace(suite, benchmarks={n: suite.benchmarks[n] for n in LLMS})
    for b in suite.benchmarks.values():
        tiny = b.scales["tiny"]
        params = dict(tiny.params, train_samples=64, eval_samples=16, **change)
        b.scales["tiny"] = replace(tiny, params=params, max_epochs=2)
        if throughput:
            params = dict(params, batch_size=4, batch_per_accelerator=True, micro_batch=2)
            b.scales["throughput"] = replace(b.scales["throughput"], params=params)
    return suite


def tiny_workload(name: str, scale: str = "tiny"):
    params = dict(load_suite("v5.1").benchmarks[name].scales["tiny"].params)
    return workload_class(name)(params, scale, RunContext(torch.device("cpu")))


def test_the_suite_holds_the_reference_sizes():
    s = {n: b.scales["throughput"].params for n, b in load_suite("v5.1").benchmarks.items()}
    eight, lora = s["llama31_8b"], s["llama2_70b_lora"]
    assert (eight["layers"], eight["d_model"], eight["ffn"]) == (32, 4096, 14336)
    assert (eight["heads"], eight["kv_heads"], eight["vocab"]) == (32, 8, 128256)
    assert eight["max_sequence_length"] == lora["max_sequence_length"] == 8192
    assert eight["batch_size"] * 4 == 32  # the reference's global batch on four GPUs
    assert (lora["layers"], lora["d_model"], lora["ffn"], lora["vocab"]) == (80, 8192, 28672, 32000)
    assert (lora["lora_rank"], lora["lora_alpha"]) == (16, 32)


@pytest.mark.parametrize("name", LLMS)
def test_model_flops_are_the_matrix_products_torch_counts(name):
    w = tiny_workload(name)
    torch.manual_seed(0)
    model = w.build_model()
    batch = next(iter(w.train_batches(1)))
    counter = FlopCounterMode(display=False)
    with counter:
        w.loss(model, batch).backward()
    products = counter.get_flop_counts()["Global"][torch.ops.aten.mm]
    p, tokens = w.params, batch[0].shape[0] * w.seq_len
    attention = 12 * p["layers"] * p["d_model"] * w.seq_len * tokens  # not counted on CPU
    expected = w.model_flops(batch) - attention
    if name == "llama31_8b":
        assert products == expected
    else:
        # the first layer's frozen projections need no input gradient (the embedding is
        # frozen too): the convention counts them, torch does not
        d, rank = p["d_model"], p["lora_rank"]
        kv = d * p["kv_heads"] // p["heads"]
        first = 2 * tokens * d * (d + 2 * kv + 3 * rank)
        assert products == expected - first


def test_lora_trains_only_the_adapters():
    model = tiny_workload("llama2_70b_lora").build_model()
    trained = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trained and all("lora_A" in n or "lora_B" in n for n in trained)
    assert {n.split(".")[-4] for n in trained} == {"q_proj", "k_proj", "v_proj", "o_proj"}
    frozen = [p for p in model.parameters() if not p.requires_grad]
    assert {p.dtype for p in frozen} == {torch.bfloat16}


def test_weights_drawn_after_the_meta_device_are_finite_and_rotary_is_recomputed():
    w = tiny_workload("llama2_70b_lora")
    with torch.device("meta"):
        model = w.build_model()
    model.to_empty(device="cpu")
    init_weights(model, seed=1, rank=0)
    w.reset_buffers(model, torch.device("cpu"))
    named = dict(model.named_parameters())
    assert all(torch.isfinite(p).all() for p in named.values())
    assert all(float(p.detach().abs().max()) == 0 for n, p in named.items() if "lora_B" in n)
    assert all(
        float(p.std()) > 0.01 for n, p in named.items() if n.endswith("q_proj.base_layer.weight")
    )
    head = w.params["d_model"] // w.params["heads"]
    expected = 1.0 / (10000.0 ** (torch.arange(0, head, 2, dtype=torch.float) / head))
    assert torch.equal(model.base_model.model.model.rotary_emb.inv_freq, expected)


def test_fp8_is_refused_on_cpu_and_for_the_v05_workloads(cpu_machine, tmp_path):
    with pytest.raises(RunError, match="fp8 needs a GPU"):
        opts = Options(suite="v5.1", benchmarks=LLMS, precisions=["fp8"], out=tmp_path)
        plan_runs(opts, cpu_machine)
    gpu = replace(cpu_machine, gpu_names=("NVIDIA H200",))
    with pytest.raises(RunError, match="resnet does not run in fp8"):
        plan_runs(Options(benchmarks=["resnet"], precisions=["fp8"], out=tmp_path), gpu)
    opts = Options(suite="v5.1", benchmarks=LLMS, precisions=["bf16", "fp8"], out=tmp_path)
    specs = plan_runs(opts, gpu)
    assert {(s.scale, s.precision) for s in specs} == {
        ("throughput", "bf16"),
        ("throughput", "fp8"),
    }


def test_a_suite_without_a_scale_says_which_it_has(cpu_machine, tmp_path):
    with pytest.raises(RunError, match="suite v5.1 has no scale small"):
        plan_runs(Options(suite="v5.1", scale="small", out=tmp_path), cpu_machine)


@pytest.mark.slow
def test_tiny_runs_sharded_over_two_processes_and_logs_the_rounds_keys(cpu_machine, tmp_path):
    opts = Options(suite="v5.1", gpus=[2], repeats=1, out=tmp_path, ingest=False, ceilings=False)
    results = run_suite(opts, cpu_machine, suite=small_suite()).results
    assert {r.status for r in results} <= {"success", "failed"}  # both complete
    for r in results:
        recs = events(r.spec.log_path)
        one = {e["key"]: e["value"] for e in recs}
        assert one["submission_status"] == "proxy-tiny"
        assert one["global_batch_size"] == 16 and one["max_sequence_length"] == 32
        evals = [e["value"] for e in recs if e["key"] == "eval_accuracy"]
        assert len(evals) == 2 and all(0 < q < 6 for q in evals)  # below ln(256) = 5.55
        assert evals[1] < evals[0]  # learning
    lora = {e["key"]: e["value"] for e in events(results[1].spec.log_path)}
    assert (lora["lora_rank"], lora["lora_alpha"]) == (16, 32)


def test_throughput_counts_tokens_and_model_flops(cpu_machine, tmp_path):
    opts = Options(
        suite="v5.1",
        scale="throughput",
        steps=1,
        warmup=1,
        out=tmp_path,
        ingest=False,
        ceilings=False,
    )
    results = run_suite(opts, cpu_machine, suite=small_suite(throughput=True)).results
    assert [r.status for r in results] == ["success", "success"]
    for r in results:
        recs = events(r.spec.log_path)
        facts = {e["key"]: e["value"] for e in recs}["collector_run"]["throughput"]
        assert (
            facts["measures"] == "compute throughput on synthetic tokens, data loading not included"
        )
        assert facts["tokens_per_sample"] == 32
        w = workload_class(r.spec.benchmark)(
            r.spec.params, "throughput", RunContext(torch.device("cpu"))
        )
        batch = next(iter(w.train_batches(1)))
        assert facts["step_flops_per_accelerator"] == w.model_flops(batch)
        windows = [e["value"] for e in recs if e["key"] == "tracked_stats"]
        assert len(windows) == 3
        for v in windows:
            assert v["tokens_per_s"] == pytest.approx(32 * v["throughput"])
            assert v["throughput"] == pytest.approx(4 / (v["step_time_ms"] / 1000), rel=1e-6)
