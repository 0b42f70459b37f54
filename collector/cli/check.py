"""`collector check PATH...`: compliance verdicts per run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from collector.cli.app import app
from collector.errors import one_line
from collector.ingest.check import check
from collector.ingest.trees import Skipped
from collector.store import WAIT_S, wait_seconds


@app.command("check")
def check_command(
    paths: Annotated[list[Path], typer.Argument(help="Result logs or folders of them.")],
    store: Annotated[Path | None, typer.Option(help="Store folder for the verdicts.")] = None,
    save: Annotated[bool, typer.Option(help="Store the verdicts in the compliance table.")] = True,
    wait: Annotated[
        float,
        typer.Option(help="Seconds to wait for another writer of the store to finish."),
    ] = WAIT_S,
    round_: Annotated[
        str | None, typer.Option("--round", help="The MLPerf round of the logs, e.g. v4.1.")
    ] = None,
) -> None:
    """Check logs against the MLPerf compliance rules of their round."""
    wait_seconds(wait)
    skipped: list[Skipped] = []
    verdicts = check(
        paths,
        store=store,
        save=save,
        wait_s=wait,
        on_wait=lambda message: print(message, file=sys.stderr),
        skipped=skipped,
        round_=round_,
    )
    for path in skipped:
        print(one_line(f"warning: {path.rel_path}: {path.message}"), file=sys.stderr)
    for verdict in verdicts:
        print(one_line(str(verdict)))
    failed = sum(1 for v in verdicts if v.verdict == "fail")
    print(f"checked {len(verdicts)} logs: {len(verdicts) - failed} pass, {failed} fail")
    if failed:
        raise typer.Exit(1)
