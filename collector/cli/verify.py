"""`collector verify`: a store's integrity, snapshot by snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from collector import store as stores
from collector.cli.app import app
from collector.errors import one_line
from collector.store.verify import verify_store


@app.command("verify")
def verify_command(
    store: Annotated[
        Path | None,
        typer.Option(help="Store folder (default: the working store, else runs/warehouse)."),
    ] = None,
    upgrade: Annotated[
        bool,
        typer.Option(
            "--upgrade",
            help="Add checksums to manifests written before collector recorded them, once "
            "their row counts match.",
        ),
    ] = False,
) -> None:
    """Check that CURRENT names a snapshot and that every snapshot's table files match the
    row counts, sizes and sha256 its manifest records. Exit status 1 on any mismatch."""
    path = stores.resolve(store)
    findings = verify_store(path, upgrade)
    for finding in findings:
        typer.echo(one_line(str(finding)))
    problems = sum(f.problem for f in findings)
    typer.echo(f"{path}: {'integrity verified' if not problems else f'{problems} problems'}")
    if problems:
        raise typer.Exit(1)
