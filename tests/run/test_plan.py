from pathlib import Path

import pytest

from collector.errors import RunError
from collector.run.plan import Machine, Options, describe, plan_runs, run_finished


def test_dry_run_lines_are_exact(cpu_machine, tmp_path):
    opts = Options(benchmarks=["ncf", "minigo"], repeats=2, out=tmp_path, gpus=[1, 2])
    lines = describe(plan_runs(opts, cpu_machine), tmp_path)
    assert lines == [
        "1/8 testhost_1xcpu_fp32_none ncf scale=tiny repeat=1/2 workers=1 precision=fp32 "
        "interconnect=none target=0.48 results/testhost_1xcpu_fp32_none/ncf/result_0.txt",
        "2/8 testhost_1xcpu_fp32_none ncf scale=tiny repeat=2/2 workers=1 precision=fp32 "
        "interconnect=none target=0.48 results/testhost_1xcpu_fp32_none/ncf/result_1.txt",
        "3/8 testhost_1xcpu_fp32_none minigo scale=tiny repeat=1/2 workers=1 precision=fp32 "
        "interconnect=none target=0.45 results/testhost_1xcpu_fp32_none/minigo/result_0.txt",
        "4/8 testhost_1xcpu_fp32_none minigo scale=tiny repeat=2/2 workers=1 precision=fp32 "
        "interconnect=none target=0.45 results/testhost_1xcpu_fp32_none/minigo/result_1.txt",
        "5/8 testhost_2xcpu_fp32_none ncf scale=tiny repeat=1/2 workers=2 precision=fp32 "
        "interconnect=none target=0.48 results/testhost_2xcpu_fp32_none/ncf/result_0.txt",
        "6/8 testhost_2xcpu_fp32_none ncf scale=tiny repeat=2/2 workers=2 precision=fp32 "
        "interconnect=none target=0.48 results/testhost_2xcpu_fp32_none/ncf/result_1.txt",
        "7/8 testhost_2xcpu_fp32_none minigo scale=tiny repeat=1/2 workers=2 precision=fp32 "
        "interconnect=none target=0.45 results/testhost_2xcpu_fp32_none/minigo/result_0.txt",
        "8/8 testhost_2xcpu_fp32_none minigo scale=tiny repeat=2/2 workers=2 precision=fp32 "
        "interconnect=none target=0.45 results/testhost_2xcpu_fp32_none/minigo/result_1.txt",
    ]


def test_gpu_matrix_defaults_and_env(tmp_path):
    gpu = Machine(host="node1", cpu="Xeon", cores=64, gpu_names=("NVIDIA H200",) * 8)
    opts = Options(
        benchmarks=["resnet"],
        gpus=[1, 8],
        precisions=["bf16", "tf32"],
        interconnects=["default", "no-p2p"],
        out=tmp_path,
    )
    specs = plan_runs(opts, gpu)
    configs = sorted({s.config for s in specs})
    assert configs == sorted(  # one GPU has no link to change: no second run of it
        f"node1_{g}xh200_{p}_{ic}"
        for g in (1, 8)
        for p in ("bf16", "tf32")
        for ic in ("default", "no-p2p")
        if g > 1 or ic == "default"
    )
    alone = plan_runs(Options(benchmarks=["resnet"], interconnects=["no-p2p"], out=tmp_path), gpu)
    assert {s.config for s in alone} == {"node1_1xh200_bf16_no-p2p"}  # asked for alone: run
    assert all(s.scale == "small" and s.repeats == 5 for s in specs)
    nop2p = next(s for s in specs if s.interconnect == "no-p2p")
    assert nop2p.env == {"NCCL_NVLS_ENABLE": "0", "NCCL_P2P_DISABLE": "1"}
    assert next(s for s in specs if s.workers == 8).threads == 8


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        (Options(precisions=["fp16"]), "needs a GPU"),
        (Options(interconnects=["no-p2p"]), "needs GPUs"),
        (Options(benchmarks=["bert"]), "unknown benchmark"),
        (Options(scale="huge"), "unknown scale"),
        (Options(scale="full"), "needs --data-root"),
        (Options(repeats=0), "--repeats"),
    ],
)
def test_bad_options(cpu_machine, opts, message):
    with pytest.raises(RunError, match=message):
        plan_runs(opts, cpu_machine)


def test_threads_leave_a_core_free_on_small_cpu_hosts(cpu_machine, tmp_path):
    from collector.run.plan import threads_per_worker

    assert [
        s.threads
        for s in plan_runs(Options(benchmarks=["ncf"], repeats=1, out=tmp_path), cpu_machine)
    ] == [1]
    assert threads_per_worker(2, 2, gpu=False) == 1
    assert threads_per_worker(16, 2, gpu=False) == 8
    assert threads_per_worker(64, 8, gpu=True) == 8


def test_run_finished_reads_the_last_line(tmp_path: Path):
    log = tmp_path / "r.txt"
    stop = ':::MLLOG {"key": "run_stop", "value": null, "metadata": {"status": "%s"}}\n'
    assert run_finished(log) is None
    log.write_text(stop % "success")
    assert run_finished(log) == "success"
    log.write_text(stop % "failed")
    assert run_finished(log) == "failed"
    log.write_text(stop % "aborted")
    assert run_finished(log) is None
    log.write_text((stop % "success") + ':::MLLOG {"key": "epoch_start", "metadata": {}}\n')
    assert run_finished(log) is None


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        (Options(nodes=2), "need --launcher torchrun or slurm"),
        (Options(node_rank=0), "need --launcher torchrun or slurm"),
        (Options(launcher="mpirun"), "unknown launcher"),
        (Options(launcher="torchrun", nodes=2, gpus=[1, 2]), "one width"),
        (Options(launcher="torchrun", interconnects=["default", "no-p2p"]), "one --interconnect"),
        (Options(launcher="slurm", nodes=2, node_rank=2), "--node-rank must be in 0..1"),
        (Options(launcher="torchrun", rdzv_endpoint="node0"), "host:port"),
        (Options(gpus=[0]), "--gpus must be >= 1"),
        (Options(scale="throughput", warmup=-1), "--warmup must be >= 0"),
        (Options(precisions=["int4"]), "unknown precision"),
        (Options(interconnects=["pcie"]), "unknown interconnect"),
    ],
)
def test_the_api_refuses_what_the_cli_refuses(cpu_machine, opts, message):
    # one check for the CLI, the Python API, the node processes and the launchers
    with pytest.raises(RunError, match=message):
        opts.validate()
    with pytest.raises(RunError, match=message):
        plan_runs(opts, cpu_machine)


def test_host_checks_need_the_host(cpu_machine):
    gpu = Machine(host="node1", cpu="Xeon", cores=64, gpu_names=("NVIDIA H200",) * 4)
    wide = Options(gpus=[8])
    wide.validate()  # any host may have eight GPUs
    with pytest.raises(RunError, match="this machine has 4 GPU"):
        wide.validate(machine=gpu)
    Options(gpus=[8], launcher="torchrun", nodes=2).validate(machine=cpu_machine)
