"""Command-line entry point: one module per subcommand, each a thin body over the Python API.

A command's module is imported when that command runs (or shows its help), not before:
`collector --help` lists the commands from COMMANDS without loading the runner, the store or
the query engine.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from collector.cli.app import app
from collector.errors import CollectorError

# Each command, in the order a user meets them, with the line `collector --help` shows for it
# (the start of its own help text).
COMMANDS = {
    "run": "Run the suite's benchmarks to their quality targets on this machine.",
    "ingest": "Ingest MLPerf training logs (every round's format) and system descriptions.",
    "check": "Check logs against the MLPerf compliance rules of their round.",
    "query": "Query a derived table, or run ad-hoc SQL with --sql.",
    "site": "Render the derived tables into the site's Markdown pages, charts and data files.",
}


class Commands(TyperGroup):
    """The command group, loading each command's module when the command is asked for."""

    def list_commands(self, ctx: typer.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"collector.cli.{cmd_name}")  # adds its command to `app`
            self.commands.update(typer.main.get_group(app).commands)
        return self.commands.get(cmd_name)

    def format_help(self, ctx: typer.Context, formatter: Any) -> None:
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        with formatter.section("Commands"):
            formatter.write_dl(list(COMMANDS.items()))


app.info.cls = Commands


@app.callback()
def _group() -> None:
    """The group's own step: none (each command does its work)."""


def main() -> None:
    """Run the CLI; a CollectorError becomes one line on stderr and exit status 1.

    Usage errors (unknown option, missing argument) are reported by typer itself, exit 2.
    """
    try:
        app()
    except CollectorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
