"""`collector ingest PATH...`: read MLPerf logs into the Parquet store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from collector.cli.app import WAIT_HELP, app
from collector.errors import one_line

if TYPE_CHECKING:
    from collector.ingest.pipeline import IngestReport

HELP = (
    "Ingest MLPerf training logs (every round's format) and system descriptions.\n\n"
    "Re-ingesting unchanged files adds nothing and writes no new snapshot. Exit status 1 "
    "when a file or run could not be read fully and the store did not know that problem "
    "yet; problems an earlier ingest recorded are printed as already recorded and leave "
    "the exit status 0. One writer at a time: another waits for the store (--wait)."
)


@app.command("ingest", help=HELP)
def ingest_command(
    paths: Annotated[list[Path], typer.Argument(help="Result logs or folders of them.")],
    store: Annotated[
        Path | None,
        typer.Option(help="Store folder (default: runs/warehouse or $COLLECTOR_STORE)."),
    ] = None,
    source: Annotated[
        str | None, typer.Option(help="Force the source kind: official, local or published.")
    ] = None,
    wait: Annotated[float | None, typer.Option(help=WAIT_HELP, show_default=False)] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No warning lines.")] = False,
    round_: Annotated[
        str | None,
        typer.Option(
            "--round", help="The MLPerf round of the logs, e.g. v4.1, where no folder names it."
        ),
    ] = None,
    events: Annotated[
        bool, typer.Option(help="Store every logged event (--no-events: runs and evals only).")
    ] = True,
) -> None:
    """Ingest MLPerf training logs and system descriptions (see HELP)."""
    from collector.warehouse import Warehouse

    with Warehouse(store) as wh:
        report = wh.ingest(
            paths,
            source=source,
            round_=round_,
            events=events,
            on_issue=None if quiet else lambda i: print(one_line(str(i)), file=sys.stderr),
            wait_s=wait,
            on_wait=lambda message: print(message, file=sys.stderr),
        )
    if not quiet:
        for issue in report.recorded:
            print(one_line(f"{issue} (already recorded)"), file=sys.stderr)
    print(one_line(summary_line(report)))
    if report.failed:
        raise typer.Exit(1)


def summary_line(report: IngestReport) -> str:
    """The one-line result of an ingest."""
    errors = sum(1 for i in report.issues if i.severity == "error")
    warnings = len(report.issues) - errors
    published = (
        f"{report.published_rows} published study rows loaded; " if report.published_rows else ""
    )
    recorded = f", {len(report.recorded)} already recorded" if report.recorded else ""
    return (
        f"{published}ingested {report.files} files ({report.bytes / 1e6:.1f} MB): "
        f"{report.runs_added} runs added, {report.runs_unchanged} unchanged, "
        f"{report.systems} systems, {errors} errors, {warnings} warnings{recorded} "
        f"-> {report.store}"
    )
