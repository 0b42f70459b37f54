"""The Typer application that every subcommand module adds its command to."""

from __future__ import annotations

import typer

WAIT_HELP = "Seconds to wait for another writer of the store to finish [default: 600]."

app = typer.Typer(
    name="collector",
    help="Benchmark deep-learning training hardware and publish the answers as a static site.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
