"""``collector run``: run an MLPerf suite on this machine and write MLPerf-format logs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from collector.cli.app import app
from collector.errors import RunError
from collector.run.launch import launch
from collector.run.plan import Machine, Options, comma_list, default_out, describe, plan_runs


def _ints(text: str) -> list[int]:
    try:
        return [int(t) for t in comma_list(text) or []]
    except ValueError as exc:
        raise RunError(f"--gpus expects integers like 1,2,4, got {text!r}") from exc


@app.command("run")
def run(
    suite: Annotated[
        str, typer.Option(help="Suite name (collector/suites/<name>.yml) or path.")
    ] = "v0.5",
    benchmarks: Annotated[
        str | None, typer.Option(help="Comma-separated subset, e.g. resnet,ncf.")
    ] = None,
    scale: Annotated[
        str,
        typer.Option(
            help="tiny, small, full, throughput (compute throughput on synthetic data, data "
            "loading not included) or auto (tiny on CPU, small on GPU)."
        ),
    ] = "auto",
    gpus: Annotated[
        str, typer.Option(help="Data-parallel widths, e.g. 1,2,4 (CPU: processes).")
    ] = "1",
    precision: Annotated[
        str | None,
        typer.Option(help="fp32,tf32,bf16,fp16,fp8 (default bf16 on GPU, fp32 on CPU)."),
    ] = None,
    interconnect: Annotated[
        str, typer.Option(help="default,no-p2p (no-p2p sets NCCL_P2P_DISABLE=1).")
    ] = "default",
    repeats: Annotated[
        int | None, typer.Option(help="Runs per benchmark (default: the suite's count).")
    ] = None,
    data_root: Annotated[Path | None, typer.Option(help="Data sets for --scale full.")] = None,
    out: Annotated[
        Path | None, typer.Option(help="Output folder (default .collector/runs/<hostname>).")
    ] = None,
    store: Annotated[
        Path | None, typer.Option(help="Store folder to ingest the results into.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan, one line per run.")
    ] = False,
    resume: Annotated[
        bool, typer.Option("--resume", help="Skip runs whose log ended success/failed.")
    ] = False,
    no_ingest: Annotated[
        bool, typer.Option("--no-ingest", help="Do not ingest the results.")
    ] = False,
    no_ceilings: Annotated[
        bool, typer.Option("--no-ceilings", help="Skip the ceiling measurements.")
    ] = False,
    steps: Annotated[
        int | None, typer.Option(help="--scale throughput: steps per timed window.")
    ] = None,
    warmup: Annotated[
        int | None, typer.Option(help="--scale throughput: untimed steps before the windows.")
    ] = None,
    batch_size: Annotated[
        int | None, typer.Option(help="--scale throughput: samples per accelerator.")
    ] = None,
    nodes: Annotated[int, typer.Option(help="Nodes of a multi-node job (torchrun, slurm).")] = 1,
    gpus_per_node: Annotated[
        int | None,
        typer.Option(help="GPUs per node of a multi-node job (CPU: processes); else --gpus."),
    ] = None,
    launcher: Annotated[
        str, typer.Option(help="local (spawn here), torchrun (per-node commands) or slurm.")
    ] = "local",
    node_rank: Annotated[
        int | None, typer.Option(help="torchrun: run only this node's command here.")
    ] = None,
    rdzv_endpoint: Annotated[
        str | None,
        typer.Option(help="torchrun/slurm rendezvous host:port (default: this host / 1st node)."),
    ] = None,
    sbatch_arg: Annotated[
        list[str] | None,
        typer.Option(help="Extra #SBATCH line, repeatable, e.g. --sbatch-arg=--partition=gpu."),
    ] = None,
) -> None:
    """Run the suite's benchmarks to their quality targets (or, at --scale throughput, for a
    fixed number of timed steps), over the requested matrix."""
    opts = Options(
        suite=suite,
        benchmarks=comma_list(benchmarks),
        scale=scale,
        gpus=[gpus_per_node] if gpus_per_node is not None else _ints(gpus),
        precisions=comma_list(precision),
        interconnects=comma_list(interconnect) or ["default"],
        repeats=repeats,
        data_root=data_root,
        out=out,
        store=store,
        resume=resume,
        dry_run=dry_run,
        ingest=not no_ingest,
        ceilings=not no_ceilings,
        nodes=nodes,
        launcher=launcher,
        node_rank=node_rank,
        rdzv_endpoint=rdzv_endpoint,
        sbatch_args=sbatch_arg or [],
        steps=steps,
        warmup=warmup,
        batch=batch_size,
    )
    opts.validate()
    if launcher != "local":  # the torchrun and Slurm launchers print what they run or submit
        raise typer.Exit(launch(opts))
    if dry_run:  # planning needs no torch
        machine = Machine.detect()
        for line in describe(plan_runs(opts, machine), opts.out or default_out(machine), resume):
            typer.echo(line)
        return
    # the runner imports torch: loaded only when a run starts, so the CLI imports without it
    from collector.run.runner import run_suite

    result = run_suite(opts)
    failed = [r for r in result.results if r.status in ("failed", "aborted")]
    typer.echo(f"{len(result.results)} run(s), {len(failed)} not successful; logs in {result.out}")
    if result.interrupted:
        raise typer.Exit(130)
