"""End-to-end runs at the tiny scale: target reached, log contract, compliance, abort, resume."""

from __future__ import annotations

import copy
import gc
import json
import weakref
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from collector.ingest.check import mlperf_check
from collector.run import engine
from collector.run.plan import Options, plan_runs, run_finished
from collector.run.runner import execute, run_suite
from collector.run.suite import load_suite


def read_log(path: Path) -> list[dict]:
    lines = path.read_text().splitlines()
    assert all(ln.startswith(":::MLLOG {") for ln in lines)
    return [json.loads(ln[len(":::MLLOG ") :]) for ln in lines]


def test_tiny_ncf_reaches_target_with_contract_log(cpu_machine, tmp_path):
    opts = Options(benchmarks=["ncf"], repeats=1, out=tmp_path, ingest=False, ceilings=False)
    result = run_suite(opts, cpu_machine)
    assert [r.status for r in result.results] == ["success"]
    log = tmp_path / "results" / "testhost_1xcpu_fp32_none" / "ncf" / "result_0.txt"
    recs = read_log(log)
    by_key: dict[str, list[dict]] = {}
    for r in recs:
        by_key.setdefault(r["key"], []).append(r)
    one = {k: v[0]["value"] for k, v in by_key.items()}
    assert one["submission_benchmark"] == "ncf"
    assert one["submission_org"] == "testhost"
    assert one["submission_division"] == "local"
    assert one["submission_status"] == "proxy-tiny"
    assert one["submission_platform"] == "testhost_1xcpu_fp32_none"
    assert one["global_batch_size"] == 1024 and one["seed"] == 1
    keys = [r["key"] for r in recs]
    i = keys.index("run_start")
    assert keys[i + 1 : i + 3] == ["eval_target", "collector_run"]
    assert by_key["eval_target"][0]["event_type"] == "POINT_IN_TIME"
    assert one["eval_target"] == 0.48
    cr = one["collector_run"]
    assert cr == {
        "suite": "v0.5",
        "scale": "tiny",
        "benchmark": "ncf",
        "config": "testhost_1xcpu_fp32_none",
        "precision": "fp32",
        "accelerator": "Test CPU",
        "accelerators": 0,
        "nodes": 1,
        "interconnect": "none",
        "quality_metric": "hr@10",
        "repeat": 0,
        "framework": cr["framework"],
    }
    assert cr["framework"].startswith("PyTorch ")
    assert by_key["run_start"][0]["event_type"] == "INTERVAL_START"
    epochs = [r["metadata"]["epoch_num"] for r in by_key["epoch_start"]]
    assert epochs == list(range(1, len(epochs) + 1))
    stats = by_key["tracked_stats"]
    assert [s["metadata"]["epoch_num"] for s in stats] == epochs
    assert all(
        isinstance(s["value"]["throughput"], float) and s["value"]["throughput"] > 0 for s in stats
    )
    acc = by_key["eval_accuracy"]
    assert all(isinstance(a["value"], float) for a in acc)
    assert acc[-1]["value"] >= 0.48  # stopped at the first evaluation reaching the target
    assert all(a["value"] < 0.48 for a in acc[:-1])
    assert recs[-1]["key"] == "run_stop" and recs[-1]["metadata"]["status"] == "success"
    telemetry = log.with_name("result_0.telemetry.csv").read_text().splitlines()
    assert telemetry[0] == (
        "time_s,unix_s,device,gpu_util_pct,gpu_mem_used_mib,gpu_power_w,gpu_sm_clock_mhz,"
        "gpu_temp_c,cpu_util_pct"
    )
    assert len(telemetry) >= 2 and telemetry[1].split(",")[2] == "cpu"
    system = json.loads((tmp_path / "systems" / "testhost_1xcpu_fp32_none.json").read_text())
    assert (
        system["accelerators_per_node"] == 0 and system["system_name"] == "testhost_1xcpu_fp32_none"
    )
    report = mlperf_check(log, "0.7.0")
    assert report.ok, report.failures


def test_compliance_catches_a_broken_log(cpu_machine, tmp_path):
    opts = Options(benchmarks=["ncf"], repeats=1, out=tmp_path, ingest=False, ceilings=False)
    run_suite(opts, cpu_machine)
    log = next(tmp_path.rglob("result_0.txt"))
    assert mlperf_check(log, "0.7.0").ok
    text = log.read_text()
    lines = [ln for ln in text.splitlines() if '"key": "init_stop"' not in ln]
    log.write_text("\n".join(lines) + "\n")
    assert any("init_stop" in f for f in mlperf_check(log, "0.7.0").failures)
    log.write_text(text.replace('"value": "proxy-tiny"', '"value": "onprem"'))
    assert any("submission_status" in f for f in mlperf_check(log, "0.7.0").failures)
    # a "success" whose accuracy never reached the target
    log.write_text(
        text.replace('"key": "eval_target", "value": 0.48', '"key": "eval_target", "value": 0.99')
    )
    assert not mlperf_check(log, "0.7.0").ok


def test_in_process_run_leaves_no_workload_behind(cpu_machine, tmp_path, monkeypatch):
    # A workload held in a reference cycle (as a frame kept by a lazy import once held one)
    # is freed when its run ends, not whenever the cycle collector next happens to run.
    opts = Options(benchmarks=["ncf"], repeats=1, out=tmp_path, ingest=False, ceilings=False)
    cls = engine.workload_class("ncf")
    made = []

    def cyclic(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        self.itself = self
        made.append(weakref.ref(self))

    real_init = cls.__init__
    monkeypatch.setattr(cls, "__init__", cyclic)
    gc.disable()
    try:
        status = execute(plan_runs(opts, cpu_machine)[0])
        assert status == "success" and len(made) == 1
        assert made[0]() is None
    finally:
        gc.enable()


def test_interrupted_run_is_logged_aborted_and_resume_completes(cpu_machine, tmp_path, monkeypatch):
    opts = Options(benchmarks=["ncf"], repeats=2, out=tmp_path, ingest=False, ceilings=False)
    real_train = engine.train
    calls = {"n": 0}

    def interrupting(spec, rank=0, world=1, device=None, progress=None):
        calls["n"] += 1

        def boom(kind, epoch, value):
            if kind == "epoch" and epoch == 2:
                raise KeyboardInterrupt

        return real_train(spec, rank, world, device, boom if calls["n"] == 2 else progress)

    monkeypatch.setattr(engine, "train", interrupting)
    first = run_suite(opts, cpu_machine)
    assert first.interrupted
    assert [r.status for r in first.results] == ["success", "aborted"]
    logs = [s.log_path for s in plan_runs(opts, cpu_machine)]
    last = read_log(logs[1])[-1]
    assert last["key"] == "run_stop" and last["metadata"]["status"] == "aborted"
    assert run_finished(logs[0]) == "success" and run_finished(logs[1]) is None
    monkeypatch.setattr(engine, "train", real_train)
    opts.resume = True
    second = run_suite(opts, cpu_machine)
    assert [r.status for r in second.results] == ["skipped-success", "success"]
    assert run_finished(logs[1]) == "success"


def test_interrupt_after_run_stop_keeps_the_logged_outcome(cpu_machine, tmp_path, monkeypatch):
    opts = Options(benchmarks=["ncf"], repeats=2, out=tmp_path, ingest=False, ceilings=False)
    real_train = engine.train

    def interrupted_on_the_way_out(spec, rank=0, world=1, device=None, progress=None):
        real_train(spec, rank, world, device, progress)
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "train", interrupted_on_the_way_out)
    console = Console(record=True, width=200)
    result = run_suite(opts, cpu_machine, console=console)
    assert result.interrupted
    assert [r.status for r in result.results] == ["success"]
    assert run_finished(result.results[0].spec.log_path) == "success"
    assert "interrupted: the current run had already ended (success); rerun with --resume" in (
        console.export_text()
    )


@pytest.mark.slow
def test_ddp_two_cpu_processes_with_gloo(cpu_machine, tmp_path):
    opts = Options(
        benchmarks=["ncf"], repeats=1, gpus=[2], out=tmp_path, ingest=False, ceilings=False
    )
    result = run_suite(opts, cpu_machine)
    assert [r.status for r in result.results] == ["success"]
    log = tmp_path / "results" / "testhost_2xcpu_fp32_none" / "ncf" / "result_0.txt"
    recs = read_log(log)
    assert sum(r["key"] == "run_stop" for r in recs) == 1  # only rank 0 writes
    assert next(r for r in recs if r["key"] == "global_batch_size")["value"] == 1024
    assert mlperf_check(log, "0.7.0").ok


@pytest.mark.slow
def test_operations_kept_in_fp32_are_recorded_with_the_run(cpu_machine, tmp_path, monkeypatch):
    """A bf16 GNMT run on a CPU without bf16 kernels keeps its LSTMs in fp32, and its log says
    so in the collector_run event; other runs' events do not carry the key."""
    from collector.run.workloads import gnmt

    monkeypatch.setattr(gnmt, "cpu_has_bf16", lambda: False)
    opts = Options(
        benchmarks=["gnmt", "ncf"],
        precisions=["bf16"],
        repeats=1,
        out=tmp_path,
        ingest=False,
        ceilings=False,
    )
    run_suite(opts, cpu_machine)
    config = tmp_path / "results" / "testhost_1xcpu_bf16_none"
    events = {
        name: next(
            r["value"]
            for r in read_log(config / name / "result_0.txt")
            if r["key"] == "collector_run"
        )
        for name in ("gnmt", "ncf")
    }
    assert events["gnmt"]["fp32_operations"] == ["lstm"]
    assert "fp32_operations" not in events["ncf"]


def test_a_run_that_reaches_its_target_early_says_so_on_its_progress_line(cpu_machine, tmp_path):
    opts = Options(benchmarks=["ncf"], repeats=1, out=tmp_path, ingest=False, ceilings=False)
    console = Console(record=True, width=160)
    (result,) = run_suite(opts, cpu_machine, console).results
    assert result.status == "success"
    evals = [r for r in read_log(result.spec.log_path) if r["key"] == "eval_accuracy"]
    epoch = evals[-1]["metadata"]["epoch_num"]
    assert epoch < result.spec.max_epochs  # reached early: the bar must not stop part-way
    line = next(ln for ln in console.export_text().splitlines() if ln.startswith("epoch"))
    assert line.rstrip().endswith(f"reached target at epoch {epoch}")
    assert f"{epoch}/{epoch}" in line


@pytest.mark.slow
def test_runs_of_one_configuration_share_their_workers_and_a_crash_spares_the_rest(
    cpu_machine, tmp_path
):
    # NCF's model cannot be built (its layer sizes are gone): its runs crash in both ranks,
    # are logged as aborted, and MiniGo's runs go on in a fresh set of workers.
    suite = copy.deepcopy(load_suite("v0.5"))
    ncf = suite.benchmarks["ncf"].scales["tiny"]
    params = {k: v for k, v in ncf.params.items() if k != "layers"}
    suite.benchmarks["ncf"].scales["tiny"] = replace(ncf, params=params)
    opts = Options(
        benchmarks=["ncf", "minigo"],
        repeats=2,
        gpus=[2],
        out=tmp_path,
        ingest=False,
        ceilings=False,
    )
    console = Console(record=True, width=200)
    result = run_suite(opts, cpu_machine, console, suite=suite)
    assert [(r.spec.benchmark, r.status) for r in result.results] == [
        ("ncf", "aborted"),
        ("ncf", "aborted"),
        ("minigo", "success"),
        ("minigo", "success"),
    ]
    assert "ncf run 0 crashed" in console.export_text()
    for r in result.results:
        last = read_log(r.spec.log_path)[-1]
        assert last["key"] == "run_stop" and last["metadata"]["status"] == r.status
        assert r.spec.telemetry_path.is_file()


def test_a_log_cut_short_is_ended_as_aborted(tmp_path):
    log = tmp_path / "result_0.txt"
    engine.mark_aborted(log)
    assert not log.exists()  # a run that never began leaves no log
    run = engine.RunLog(log)
    run.start("init_start")
    run.end("init_stop")
    run.start("run_start")
    run.close()
    with open(log, "a") as f:
        f.write(':::MLLOG {"namespace": "", "time_ms": 17')  # killed mid-line
    engine.mark_aborted(log)
    lines = log.read_text().splitlines()
    assert lines[-2] == ':::MLLOG {"namespace": "", "time_ms": 17'
    assert json.loads(lines[-1][len(":::MLLOG ") :])["metadata"]["status"] == "aborted"
    engine.mark_aborted(log)
    assert log.read_text().splitlines() == lines  # already ended: left as it is
    early = tmp_path / "result_1.txt"
    engine.RunLog(early).start("init_start")
    engine.mark_aborted(early)
    keys = [json.loads(ln[len(":::MLLOG ") :])["key"] for ln in early.read_text().splitlines()]
    assert keys == ["init_start", "init_stop", "run_start", "run_stop"]
