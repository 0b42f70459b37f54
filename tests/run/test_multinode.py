"""Multi-node launches: torchrun commands, the Slurm script, fabric capture, and a real
two-node torchrun job on this host (gloo over loopback) whose results ingest with nodes = 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import collector.cli.run  # noqa: F401  (registers the command)
from collector import store as stores
from collector.cli import app
from collector.errors import RunError
from collector.run.launch import sbatch_script, torchrun_commands
from collector.run.plan import Options, plan_runs
from collector.run.procs import free_port
from collector.run.sysinfo import fabric
from collector.run.system import describe_system


def _opts(tmp_path: Path, **kw) -> Options:
    base = dict(benchmarks=["ncf"], scale="tiny", gpus=[1], nodes=2, launcher="torchrun")
    base.update(kw)
    return Options(out=tmp_path, **base)


def test_torchrun_commands_one_per_node_with_a_shared_rendezvous(tmp_path):
    cmds = torchrun_commands(_opts(tmp_path, gpus=[4], rdzv_endpoint="node0:29400"))
    assert len(cmds) == 2
    for rank, cmd in enumerate(cmds):
        assert cmd[1:3] == ["-m", "torch.distributed.run"]
        assert {"--nnodes=2", "--nproc-per-node=4", f"--node-rank={rank}"} <= set(cmd)
        assert {"--rdzv-backend=c10d", "--rdzv-endpoint=node0:29400"} <= set(cmd)
        node = cmd[cmd.index("collector.run.node") + 1 :]
        assert node[node.index("--out") + 1] == str(tmp_path.resolve())
        assert node[node.index("--gpus-per-node") + 1] == "4"
    only = torchrun_commands(_opts(tmp_path, node_rank=1, rdzv_endpoint="node0:29400"))
    assert len(only) == 1 and "--node-rank=1" in only[0]


def test_launch_options_are_checked(tmp_path):
    with pytest.raises(RunError, match="--node-rank must be in 0..1"):
        torchrun_commands(_opts(tmp_path, node_rank=2))
    with pytest.raises(RunError, match="one width"):
        torchrun_commands(_opts(tmp_path, gpus=[1, 2]))
    with pytest.raises(RunError, match="host:port"):
        torchrun_commands(_opts(tmp_path, rdzv_endpoint="node0"))
    res = CliRunner().invoke(app, ["run", "--nodes", "2", "--dry-run", "--out", str(tmp_path)])
    assert res.exit_code != 0 and "--launcher torchrun or slurm" in str(res.exception)


def test_cli_dry_run_prints_torchrun_commands(tmp_path):
    res = CliRunner().invoke(
        app,
        ["run", "--launcher", "torchrun", "--nodes", "3", "--gpus-per-node", "2"]
        + ["--benchmarks", "ncf", "--rdzv-endpoint", "h0:29500", "--dry-run"]
        + ["--out", str(tmp_path)],
    )
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 3
    assert all("--rdzv-endpoint=h0:29500" in ln and "--nproc-per-node=2" in ln for ln in lines)
    assert [f"--node-rank={k}" in ln for k, ln in enumerate(lines)] == [True] * 3


def test_sbatch_script_runs_torchrun_once_per_node(tmp_path):
    opts = _opts(tmp_path, launcher="slurm", gpus=[8], sbatch_args=["--partition=gpu"])
    text = sbatch_script(opts, gpus_on_nodes=True)
    lines = text.splitlines()
    assert lines[0] == "#!/bin/bash"
    assert {"#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=1"} <= set(lines)
    assert {"#SBATCH --gpus-per-node=8", "#SBATCH --partition=gpu"} <= set(lines)
    assert 'head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)' in lines
    srun = next(ln for ln in lines if ln.startswith("srun "))
    assert '"--node-rank=$SLURM_NODEID"' in srun and '"--rdzv-endpoint=$COLLECTOR_RDZV"' in srun
    assert "--nproc-per-node=8" in srun and "--rdzv-backend=c10d" in srun
    assert lines[-1].endswith(f"-m collector.cli ingest {tmp_path.resolve()}")
    cpu = sbatch_script(_opts(tmp_path, launcher="slurm", ingest=False), gpus_on_nodes=False)
    assert "--gpus-per-node" not in cpu.split("srun")[0] and "collector.cli ingest" not in cpu


def test_fabric_prefers_infiniband_then_interface_speed(tmp_path):
    port = tmp_path / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    port.mkdir(parents=True)
    (port / "rate").write_text("200 Gb/sec (4X HDR)\n")
    (port / "state").write_text("4: ACTIVE\n")
    (port / "link_layer").write_text("InfiniBand\n")
    for nic, speed in (("eth0", "25000"), ("lo", "")):
        (tmp_path / "class" / "net" / nic).mkdir(parents=True)
        (tmp_path / "class" / "net" / nic / "speed").write_text(speed)
        (tmp_path / "class" / "net" / nic / "operstate").write_text("up")
    ib = fabric(tmp_path)
    assert ib["kind"] == "infiniband"
    assert ib["summary"] == "InfiniBand: 1 port(s), 200 Gb/sec (4X HDR)"
    assert ib["ports"][0]["device"] == "mlx5_0"
    (port / "rate").unlink()
    (port / "state").unlink()
    (port / "link_layer").unlink()
    port.rmdir()
    eth = fabric(tmp_path)
    assert eth["kind"] == "ethernet" and eth["summary"] == "eth0 25000 Mb/s"
    assert [n["interface"] for n in eth["interfaces"]] == ["eth0"]


def test_multi_node_plan_names_and_collector_run(tmp_path, cpu_machine):
    specs = plan_runs(_opts(tmp_path, gpus=[2], nodes=3), cpu_machine)
    s = specs[0]
    assert s.config == "testhost_3n2xcpu_fp32_none" and s.world == 6
    run = s.collector_run()
    assert run["nodes"] == 3 and run["accelerators"] == 6  # CPU: processes over all nodes
    nodes = [{"host": h, "gpus": [], "fabric": {"summary": "eth0 10000 Mb/s"}} for h in "ab"]
    desc = describe_system(s.config, "org", 2, "fp32", "none", nodes)
    assert desc["number_of_nodes"] == 2 and desc["host_networking"] == "eth0 10000 Mb/s"
    assert [n["host"] for n in desc["collector"]["nodes"]] == ["a", "b"]


@pytest.mark.slow
def test_two_node_torchrun_job_trains_and_ingests_with_two_nodes(tmp_path):
    """Two torchrun 'nodes' on this host, each one process, rendezvous on 127.0.0.1."""
    out, store = tmp_path / "out", tmp_path / "store"
    base = [sys.executable, "-m", "collector.cli", "run", "--launcher", "torchrun"]
    base += ["--nodes", "2", "--gpus-per-node", "1", "--benchmarks", "ncf", "--scale", "tiny"]
    base += ["--repeats", "1", "--no-ceilings", "--out", str(out), "--store", str(store)]
    base += ["--rdzv-endpoint", f"127.0.0.1:{free_port()}"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen(
            [*base, "--node-rank", str(r)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        for r in (0, 1)
    ]
    try:
        outputs = [p.communicate(timeout=120)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0, 0], "\n".join(outputs)
    # c10d may give global rank 0 (the one that logs) to either node; node rank 0 ingests.
    assert any("ncf run 0: success" in o for o in outputs) and "ingested" in outputs[0]
    logs = list((out / "results").glob("*/ncf/result_0.txt"))
    assert len(logs) == 1 and logs[0].parent.parent.name.endswith("_2n1xcpu_fp32_none")
    system = (out / "systems" / f"{logs[0].parent.parent.name}.json").read_text()
    assert '"number_of_nodes": 2' in system
    runs = stores.read(store)["runs"].to_pylist()
    assert len(runs) == 1
    assert runs[0]["nodes"] == 2 and runs[0]["accelerators"] == 2
    assert runs[0]["status"] == "success" and runs[0]["benchmark"] == "ncf"
