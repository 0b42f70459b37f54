"""``collector run --launcher slurm`` against a one-node Slurm cluster started on this host.

The fixture needs the Debian ``slurm-wlm`` binaries (slurmctld, slurmd, sbatch, sinfo, squeue)
and root (slurmd runs jobs as their user). It uses ``auth/none`` so no munge daemon is needed.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from collector import store as stores
from collector.run.procs import free_port

BINARIES = ("slurmctld", "slurmd", "sbatch", "sinfo", "squeue", "scontrol")


def _conf(d: Path, host: str) -> str:
    controller = free_port()
    node = free_port(avoid=(controller,))
    return "\n".join(
        [
            "ClusterName=collectortest",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={controller}",
            f"SlurmdPort={node}",
            "AuthType=auth/none",
            "CredType=cred/none",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={d / 'state'}",
            f"SlurmdSpoolDir={d / 'spool'}",
            f"SlurmctldPidFile={d / 'slurmctld.pid'}",
            f"SlurmdPidFile={d / 'slurmd.pid'}",
            f"SlurmctldLogFile={d / 'slurmctld.log'}",
            f"SlurmdLogFile={d / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "ReturnToService=2",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            f"NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} State=UNKNOWN",
            "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


@pytest.fixture
def slurm_cluster(tmp_path_factory) -> Iterator[dict[str, str]]:
    """slurmctld + slurmd on localhost; yields the environment that points clients at it."""
    missing = [b for b in BINARIES if shutil.which(b) is None]
    if missing:
        pytest.skip(f"Slurm not installed ({', '.join(missing)} missing; apt install slurm-wlm)")
    if os.geteuid() != 0:
        pytest.skip("the local Slurm cluster needs root (slurmd runs jobs as their user)")
    d = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (d / sub).mkdir()
    host = socket.gethostname().split(".")[0]
    (d / "slurm.conf").write_text(_conf(d, host))
    env = {**os.environ, "SLURM_CONF": str(d / "slurm.conf")}
    daemons = [
        subprocess.Popen([shutil.which(b) or b, "-D"], env=env, stdout=f, stderr=subprocess.STDOUT)
        for b, f in (
            ("slurmctld", open(d / "slurmctld.out", "w")),  # noqa: SIM115
            ("slurmd", open(d / "slurmd.out", "w")),  # noqa: SIM115
        )
    ]
    try:
        deadline = time.monotonic() + 30
        state = ""
        while time.monotonic() < deadline:
            state = subprocess.run(
                ["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True
            ).stdout.strip()
            if state == "idle":
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"Slurm node not idle after 30 s (state {state!r}); logs in {d}")
        yield env
    finally:
        for p in daemons:
            p.terminate()
        for p in daemons:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.mark.slow
def test_slurm_job_trains_and_its_logs_ingest(tmp_path, slurm_cluster):
    env = slurm_cluster
    out, store = tmp_path / "out", tmp_path / "store"
    cmd = [sys.executable, "-m", "collector.cli", "run", "--launcher", "slurm", "--nodes", "1"]
    cmd += ["--gpus-per-node", "1", "--benchmarks", "ncf", "--scale", "tiny", "--repeats", "1"]
    cmd += ["--no-ceilings", "--out", str(out), "--store", str(store)]
    cmd += ["--rdzv-endpoint", f"127.0.0.1:{free_port()}"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "submitted batch job" in done.stdout
    job = done.stdout.split("submitted batch job ")[1].split(";")[0].strip()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        queue = subprocess.run(
            ["squeue", "-h", "-j", job], env=env, capture_output=True, text=True
        ).stdout
        if not queue.strip():
            break
        time.sleep(1)
    else:
        pytest.fail(f"job {job} still queued/running after 120 s")
    job_out = out / "slurm" / f"slurm-{job}.out"
    text = job_out.read_text() if job_out.exists() else "(no job output)"
    logs = list((out / "results").glob("*/ncf/result_0.txt"))
    assert len(logs) == 1, text
    assert (out / "slurm" / "collector.sbatch").read_text().startswith("#!/bin/bash")
    runs = stores.read(store)["runs"].to_pylist()
    assert len(runs) == 1, text
    assert runs[0]["status"] == "success" and runs[0]["nodes"] == 1
