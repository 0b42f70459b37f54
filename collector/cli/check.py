"""`collector check PATH...`: compliance verdicts per run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from collector.cli import app
from collector.ingest.check import check


@app.command("check")
def check_command(
    paths: Annotated[list[Path], typer.Argument(help="Result logs or folders of them.")],
    store: Annotated[Path | None, typer.Option(help="Store folder for the verdicts.")] = None,
    save: Annotated[bool, typer.Option(help="Store the verdicts in the compliance table.")] = True,
    round_: Annotated[
        str | None, typer.Option("--round", help="The MLPerf round of the logs, e.g. v4.1.")
    ] = None,
) -> None:
    """Check logs against the MLPerf compliance rules of their round."""
    verdicts = check(paths, store=store, save=save, round_=round_)
    for verdict in verdicts:
        print(verdict)
    failed = sum(1 for v in verdicts if v.verdict == "fail")
    print(f"checked {len(verdicts)} logs: {len(verdicts) - failed} pass, {failed} fail")
    if failed:
        raise typer.Exit(1)
