"""Command-line entry point: one module per subcommand, each a thin body over the Python API."""

from __future__ import annotations

import sys

from collector.cli import check, ingest, query, run, site  # noqa: F401  (each adds its command)
from collector.cli.app import app
from collector.errors import CollectorError


def main() -> None:
    """Run the CLI; a CollectorError becomes one line on stderr and exit status 1.

    Usage errors (unknown option, missing argument) are reported by typer itself, exit 2.
    """
    try:
        app()
    except CollectorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
