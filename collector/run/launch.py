"""Multi-node launchers: per-node torchrun commands, and a Slurm batch script that runs them.

Every node runs ``python -m torch.distributed.run`` (torchrun) with a c10d rendezvous; torchrun
starts ``collector.run.node`` once per GPU (or per CPU process). Global rank 0 writes the logs
and the system description under the output folder, which must be on a filesystem shared by
all nodes (the usual home or project filesystem of a cluster) for the results to be collected
in one place and ingested.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import jinja2
from rich.console import Console

from collector.errors import RunError
from collector.run.plan import Machine, Options, default_out, ingest_results, plan_runs
from collector.run.sysinfo import hostname

DEFAULT_PORT = 29500


def resolved_out(opts: Options) -> Path:
    """The absolute output folder every node is given (default: this host's runs folder)."""
    if opts.out is not None:
        return opts.out.resolve()
    return default_out(Machine(hostname(), "", 1))


def endpoint(opts: Options) -> str:
    """The rendezvous ``host:port``: ``--rdzv-endpoint``, else this host (loopback for 1 node)."""
    if opts.rdzv_endpoint:
        return opts.rdzv_endpoint
    host = "127.0.0.1" if opts.nodes == 1 else socket.getfqdn()
    return f"{host}:{DEFAULT_PORT}"


def _loopback(host: str) -> bool:
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host).is_loopback
    return host == "localhost"


def node_args(opts: Options, out: Path) -> list[str]:
    """The ``collector.run.node`` arguments for ``opts`` (the same on every node)."""
    values = {
        "--suite": opts.suite,
        "--scale": opts.scale,
        "--nodes": opts.nodes,
        "--gpus-per-node": opts.gpus[0],
        "--interconnect": opts.interconnects[0],
        "--out": out,
        "--benchmarks": ",".join(opts.benchmarks or []),
        "--precision": ",".join(opts.precisions or []),
        "--repeats": opts.repeats,
        "--data-root": opts.data_root and opts.data_root.resolve(),
        "--steps": opts.steps,
        "--warmup": opts.warmup,
        "--batch-size": opts.batch,
    }
    args = [str(a) for flag, v in values.items() if v not in (None, "") for a in (flag, v)]
    return args + ["--resume"] * opts.resume + ["--no-ceilings"] * (not opts.ceilings)


def torchrun_argv(opts: Options, out: Path, node_rank: str, rdzv: str, rdzv_id: str) -> list[str]:
    """One node's torchrun command line (``node_rank`` may be a shell variable reference)."""
    argv = [sys.executable, "-m", "torch.distributed.run", f"--nnodes={opts.nodes}"]
    argv += [f"--nproc-per-node={opts.gpus[0]}", f"--node-rank={node_rank}"]
    argv += ["--rdzv-backend=c10d", f"--rdzv-endpoint={rdzv}", f"--rdzv-id={rdzv_id}"]
    return [*argv, "-m", "collector.run.node", *node_args(opts, out)]


def torchrun_commands(opts: Options) -> list[list[str]]:
    """Per node rank, the torchrun command (only ``--node-rank``'s when given); the rendezvous
    id all nodes derive alike from the output folder."""
    opts.validate()
    out = resolved_out(opts)
    rdzv, rdzv_id = endpoint(opts), "collector-" + re.sub(r"[\W_]", "-", out.name)
    ranks = [opts.node_rank] if opts.node_rank is not None else list(range(opts.nodes))
    return [torchrun_argv(opts, out, str(r), rdzv, rdzv_id) for r in ranks]


def sbatch_script(opts: Options, gpus_on_nodes: bool | None = None) -> str:
    """A batch script: one task per node, each running torchrun, then the ingest on node 0.

    The node rank is ``$SLURM_NODEID``; the rendezvous endpoint is the first host of
    ``$SLURM_JOB_NODELIST`` (port 29500) unless ``--rdzv-endpoint`` is given. GPUs are
    requested with ``--gpus-per-node`` when this host has GPUs (``gpus_on_nodes``); pass
    anything else (partition, account, time, GPUs from a login node) as ``sbatch_args``.
    """
    opts.validate()
    out = resolved_out(opts)
    if gpus_on_nodes is None:
        gpus_on_nodes = bool(Machine.detect().gpu_names)
    inner = torchrun_argv(opts, out, "$SLURM_NODEID", "$COLLECTOR_RDZV", "$SLURM_JOB_ID")
    # "$VAR" expands in each task's shell
    task = " ".join(f'"{a}"' if "$" in a else shlex.quote(a) for a in inner)
    ingest = [sys.executable, "-m", "collector.cli", "ingest", str(out)]
    if opts.store is not None:
        ingest += ["--store", str(opts.store.resolve())]
    templates = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        keep_trailing_newline=True,
    )
    return templates.get_template("sbatch.j2").render(
        nodes=opts.nodes,
        cwd=Path.cwd(),
        out=out,
        gpus_per_node=opts.gpus[0] if gpus_on_nodes else None,
        sbatch_args=opts.sbatch_args,
        rdzv=opts.rdzv_endpoint or f"$head:{DEFAULT_PORT}",
        task=shlex.quote("exec " + task),
        ingest=shlex.join(ingest) if opts.ingest else None,
    )


def launch(opts: Options) -> int:
    """Run ``opts`` through its launcher; the exit status.

    ``torchrun``: print (dry run) or run the torchrun commands; node rank 0 ingests when all
    succeeded. With ``--node-rank`` only that node's command runs here (run the others on their
    nodes). Without it, a one-node job runs here, and so does a multi-node job whose rendezvous
    is a loopback address (all "nodes" on this host); other multi-node jobs need ``--node-rank``.

    ``slurm``: print the batch script, write it under ``<out>/slurm/`` and submit it with
    sbatch where there is one (unless dry run).
    """
    out = resolved_out(opts)
    if opts.launcher == "slurm":
        return _submit(opts, sbatch_script(opts), out)
    if opts.launcher != "torchrun":
        raise RunError(f"launcher {opts.launcher!r} is not a multi-node launcher")
    cmds = torchrun_commands(opts)
    if opts.dry_run:
        print("\n".join(shlex.join(c) for c in cmds))
        return 0
    host = endpoint(opts).rpartition(":")[0]
    if opts.node_rank is None and opts.nodes > 1 and not _loopback(host):
        raise RunError(
            "a multi-node torchrun job starts on each node: run with --node-rank K there "
            "(--dry-run prints every node's command)"
        )
    if opts.node_rank in (None, 0):
        plan_runs(opts, Machine.detect())  # fail early on bad options, before any node starts
    procs = [subprocess.Popen(c) for c in cmds]
    try:
        codes = [p.wait() for p in procs]
    except KeyboardInterrupt:
        codes = [p.wait() for p in procs]  # torchrun forwards the interrupt to its workers
    code = next((c for c in codes if c), 0)
    if code == 0 and opts.node_rank in (None, 0) and opts.ingest:
        ingest_results(out, opts.store, Console())
    if code == 0:
        print(f"torchrun job finished; logs in {out}")
    return code


def _submit(opts: Options, script: str, out: Path) -> int:
    print(script, end="")
    if opts.dry_run:
        return 0
    path = out / "slurm" / "collector.sbatch"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(script)
    os.chmod(path, 0o755)
    sbatch = shutil.which("sbatch")
    if sbatch is None:
        print(f"sbatch not found: submit {path} from a Slurm login node")
        return 0
    done = subprocess.run([sbatch, "--parsable", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RunError(f"sbatch failed: {done.stderr.strip() or done.stdout.strip()}")
    print(f"submitted batch job {done.stdout.strip().split(';')[0]}; logs in {out}")
    return 0
