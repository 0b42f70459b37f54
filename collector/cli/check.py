"""`collector check PATH...`: compliance verdicts per run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from collector.cli.app import WAIT_HELP, app
from collector.errors import one_line

if TYPE_CHECKING:
    from collector.ingest.trees import Skipped


@app.command("check")
def check_command(
    paths: Annotated[list[Path], typer.Argument(help="Result logs or folders of them.")],
    store: Annotated[Path | None, typer.Option(help="Store folder for the verdicts.")] = None,
    save: Annotated[bool, typer.Option(help="Store the verdicts in the compliance table.")] = True,
    wait: Annotated[float | None, typer.Option(help=WAIT_HELP, show_default=False)] = None,
    round_: Annotated[
        str | None, typer.Option("--round", help="The MLPerf round of the logs, e.g. v4.1.")
    ] = None,
) -> None:
    """Check logs against the MLPerf compliance rules of their round."""
    from collector.warehouse import Warehouse

    skipped: list[Skipped] = []
    with Warehouse(store) as wh:
        verdicts = wh.check(
            paths,
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
