"""`collector ingest PATH...`: read MLPerf logs into the Parquet store."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from collector.cli.app import app
from collector.errors import InputError, one_line
from collector.ingest.pipeline import SOURCES, IngestReport, ingest
from collector.store import WAIT_S, wait_seconds

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
    wait: Annotated[
        float,
        typer.Option(help="Seconds to wait for another writer of the store to finish."),
    ] = WAIT_S,
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
    if source is not None and source not in SOURCES:
        raise InputError(f"--source must be one of {', '.join(SOURCES)}, not {source!r}")
    if round_ is not None and not re.fullmatch(r"v\d+\.\d+", round_):
        raise InputError(f"--round must name a round such as v4.1, not {round_!r}")
    wait_seconds(wait)
    report = ingest(
        paths,
        store=store,
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
