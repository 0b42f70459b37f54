"""The throughput scale: compute throughput on synthetic data (data loading not included)."""

from __future__ import annotations

import contextlib
import copy
import json
import statistics
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import yaml
from rich.console import Console

from collector.errors import RunError
from collector.run import engine
from collector.run.plan import Options, describe, plan_runs
from collector.run.runner import outcome, run_suite
from collector.run.suite import BENCHMARKS, load_suite, parse_suite

SUITE = Path(load_suite("v0.5").path)


def events(log: Path) -> list[dict]:
    return [json.loads(ln[len(":::MLLOG ") :]) for ln in log.read_text().splitlines()]


def tiny_throughput_suite(image_width: int = 96):
    """v0.5 with each benchmark's throughput block swapped for its tiny model (and Mask R-CNN
    on rectangular images), so every workload's throughput path runs in seconds."""
    suite = copy.deepcopy(load_suite("v0.5"))
    for name, b in suite.benchmarks.items():
        params = dict(b.scales["tiny"].params, batch_size=4, batch_per_accelerator=True)
        if name == "maskrcnn":
            params["image_width"] = image_width
        b.scales["throughput"] = replace(b.scales["throughput"], params=params)
    return suite


def test_every_published_size_is_in_the_suite():
    s = {n: b.scales["throughput"].params for n, b in load_suite("v0.5").benchmarks.items()}
    assert (s["resnet"]["image_size"], s["resnet"]["num_classes"]) == (224, 1000)
    assert s["ssd"]["image_size"] == 300
    assert (s["maskrcnn"]["image_size"], s["maskrcnn"]["image_width"]) == (800, 1333)
    assert (s["ncf"]["users"], s["ncf"]["items"]) == (138493, 26744)
    assert s["minigo"]["board"] == 19
    assert s["gnmt"]["vocab"] > 32000 and s["transformer"]["vocab"] > 32000
    assert s["transformer"]["d_model"] == 1024  # Transformer (big)


def test_plan_takes_step_and_batch_overrides_and_describes_steps(cpu_machine, tmp_path):
    opts = Options(scale="throughput", steps=3, warmup=2, batch=8, out=tmp_path)
    specs = plan_runs(opts, cpu_machine)
    assert [s.benchmark for s in specs] == list(BENCHMARKS)
    assert {(s.window_steps, s.warmup_steps, s.params["batch_size"]) for s in specs} == {(3, 2, 8)}
    assert all(s.status == "throughput" for s in specs)
    line = describe(specs, tmp_path)[0]
    assert "scale=throughput" in line and "steps=2+5x3" in line and "target=" not in line


def test_step_overrides_at_other_scales_are_an_error(cpu_machine, tmp_path):
    with pytest.raises(RunError, match="--scale throughput only"):
        plan_runs(Options(scale="tiny", steps=3, out=tmp_path), cpu_machine)
    with pytest.raises(RunError, match="--steps must be >= 1"):
        plan_runs(Options(scale="throughput", steps=0, out=tmp_path), cpu_machine)


def test_a_throughput_block_without_window_steps_names_the_field():
    data = yaml.safe_load(SUITE.read_text())
    del data["benchmarks"]["ssd"]["throughput"]["window_steps"]
    with pytest.raises(RunError, match=r"ssd\.throughput: missing key 'window_steps'"):
        parse_suite(data, SUITE)


@pytest.mark.slow
def test_every_workload_logs_timed_windows(cpu_machine, tmp_path):
    opts = Options(
        scale="throughput", steps=1, warmup=1, out=tmp_path, ingest=False, ceilings=False
    )
    specs = plan_runs(opts, cpu_machine, tiny_throughput_suite())
    console = Console(record=True, width=200)
    result = run_suite(opts, cpu_machine, console, suite=tiny_throughput_suite())
    assert [r.status for r in result.results] == ["success"] * len(BENCHMARKS)
    for spec in specs:
        recs = events(spec.log_path)
        keys = [r["key"] for r in recs]
        assert "eval_target" not in keys and "eval_accuracy" not in keys
        one = {r["key"]: r for r in recs}
        assert one["submission_status"]["value"] == "throughput"
        assert one["run_stop"]["metadata"]["status"] == "success"
        facts = one["collector_run"]["value"]["throughput"]
        assert (
            facts["measures"] == "compute throughput on synthetic data, data loading not included"
        )
        assert facts["windows"] == 5 and facts["window_steps"] == 1 and facts["warmup_steps"] == 1
        assert facts["step_flops_per_accelerator"] > 0
        windows = [r for r in recs if r["key"] == "tracked_stats"]
        assert [w["metadata"]["epoch_num"] for w in windows] == [1, 2, 3, 4, 5]
        for w in windows:
            v = w["value"]
            # samples/s and the step time describe the same window: batch / step time
            assert v["throughput"] == pytest.approx(4 / (v["step_time_ms"] / 1000), rel=1e-6)
        rates = [w["value"]["throughput"] for w in windows]
        assert statistics.median(rates) > 0
    text = console.export_text()
    assert "median" in text and "data loading not included" in text


def test_published_size_ncf_runs_on_cpu_with_a_small_batch(cpu_machine, tmp_path):
    opts = Options(
        scale="throughput",
        benchmarks=["ncf"],
        steps=1,
        warmup=0,
        batch=4,
        out=tmp_path,
        ingest=False,
        ceilings=False,
    )
    (result,) = run_suite(opts, cpu_machine).results
    assert result.status == "success"
    recs = events(result.spec.log_path)
    assert {r["key"]: r["value"] for r in recs}["global_batch_size"] == 4
    assert sum(r["key"] == "tracked_stats" for r in recs) == 5


@pytest.mark.slow
def test_two_data_parallel_processes_count_both_ranks_samples(cpu_machine, tmp_path):
    opts = Options(
        scale="throughput",
        benchmarks=["minigo"],
        gpus=[2],
        steps=1,
        warmup=1,
        out=tmp_path,
        ingest=False,
        ceilings=False,
    )
    (result,) = run_suite(opts, cpu_machine, suite=tiny_throughput_suite()).results
    assert result.status == "success"
    recs = events(result.spec.log_path)
    assert {r["key"]: r["value"] for r in recs}["global_batch_size"] == 8  # 4 per process
    for w in (r["value"] for r in recs if r["key"] == "tracked_stats"):
        assert w["throughput"] == pytest.approx(8 / (w["step_time_ms"] / 1000), rel=1e-6)


@pytest.mark.parametrize("benchmark", ["maskrcnn", "transformer", "resnet"])
def test_every_rank_trains_on_the_batch_of_a_one_accelerator_run(benchmark):
    # Mask R-CNN's work per step depends on its images' objects: each rank of a wider run
    # draws the one-GPU run's batch, so the efficiency compares equal work
    import torch

    from collector.run.types import RunContext
    from collector.run.workloads import workload_class

    params = tiny_throughput_suite().benchmarks[benchmark].scales["throughput"].params
    cpu = torch.device("cpu")

    def batch(rank: int, world: int) -> tuple:
        ctx = RunContext(cpu, rank, world, seed=1)
        workload = workload_class(benchmark)(params, "throughput", ctx)
        assert workload.global_batch_size == 4 * world
        return next(iter(workload.train_batches(1)))

    alone = batch(0, 1)
    assert len(alone[0]) == 4
    for rank in (0, 2):
        assert all(torch.equal(a, b) for a, b in zip(alone, batch(rank, 4), strict=True))


def test_the_progress_line_shows_a_slow_run_s_rate_in_significant_figures():
    spec = SimpleNamespace(scale="throughput")  # a throughput run's outcome reads only its scale
    slow, fast = outcome(spec, "success", [0.2, 0.2178, 0.22]), outcome(spec, "success", [12345.6])
    assert slow["info"].startswith("median 0.218 samples/s")
    assert fast["info"].startswith("median 12,346 samples/s")


def test_counting_a_steps_flops_leaves_compiled_functions_compiled():
    """The FLOPs are counted before the timed windows: a compiled function the loss calls must
    run its compiled graph in those windows, not its Python (RetinaNet's fused focal loss ran
    eager in every window once it had been called under the counter)."""
    graph_runs = []

    def backend(graph, example_inputs):
        def compiled(*args):
            graph_runs.append(1)
            return graph(*args)

        return compiled

    square_sum = torch.compile(lambda x: (x * x).sum(), backend=backend)

    class Workload:
        def model_flops(self, batch):
            return None

        def micro_batches(self, batch):
            return [batch]

        def loss(self, model, batch):
            return square_sum(model(batch))

    model = torch.nn.Linear(4, 4)
    sess = SimpleNamespace(
        workload=Workload(),
        raw=model,
        opt=torch.optim.SGD(model.parameters(), lr=0.1),
        autocast=contextlib.nullcontext,
    )
    x = torch.randn(2, 4)
    # the linear layer's product forward (2 x 2 x 4 x 4) and its weight gradient's
    assert engine.step_flops(sess, x) == 128
    assert all(p.grad is None for p in model.parameters())
    before = len(graph_runs)
    sess.workload.loss(model, x).backward()
    assert len(graph_runs) == before + 1
