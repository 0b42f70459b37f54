"""Command-line entry point: one module per subcommand, each a thin body over the Python API."""

from __future__ import annotations

import sys

import typer

from collector.errors import CollectorError

app = typer.Typer(
    name="collector",
    help="Benchmark deep-learning training hardware and publish the answers as a static site.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    # Imported for their side effect of adding commands to `app`.
    from collector.cli import check, ingest, query, run, site  # noqa: F401


def main() -> None:
    """Run the CLI; a CollectorError becomes one line on stderr and exit status 1.

    Usage errors (unknown option, missing argument) are reported by typer itself, exit 2.
    """
    _register()
    try:
        app()
    except CollectorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
