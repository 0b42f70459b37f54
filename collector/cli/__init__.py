"""Command-line entry point: one module per subcommand, each a thin body over the Python API.

A command's module is imported when that command runs (or shows its help), not before:
`collector --help` lists the commands from COMMANDS without loading the runner, the store or
the query engine.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from types import FrameType
from typing import Any

import typer
from typer.core import TyperGroup

from collector.cli.app import app
from collector.errors import CollectorError, one_line

# Each command, in the order a user meets them, with the line `collector --help` shows for it
# (the start of its own help text).
COMMANDS = {
    "run": "Run the suite's benchmarks to their quality targets on this machine.",
    "ingest": "Ingest MLPerf training logs (every round's format) and system descriptions.",
    "check": "Check logs against the MLPerf compliance rules of their round.",
    "query": "Query a derived table, or run ad-hoc SQL with --sql.",
    "site": "Render the derived tables into the site's Markdown pages, charts and data files.",
    "verify": "Check that a store's snapshots match what their manifests record.",
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
    """Run the CLI; every failure is one line on stderr. A CollectorError exits 1; Ctrl-C
    (SIGINT) and SIGTERM end the command, exit 130 and 143, leaving the store as the last
    completed write left it (a write is atomic; the kernel releases the writer lock).

    Usage errors (unknown option, missing argument) are reported by typer itself, exit 2.
    """
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _interrupt)
    try:
        app()
    except SystemExit:
        if _RECEIVED:  # typer turns KeyboardInterrupt into a silent exit 130
            _interrupted()
        raise
    except KeyboardInterrupt:
        _interrupted()
    except CollectorError as exc:
        _fail(str(exc), 1)
    except OSError as exc:  # what the file system refused, where no layer above said more
        where = f"{exc.filename}: " if exc.filename else ""
        _fail(f"{where}{exc.strerror or exc}", 1)
    except MemoryError:
        _fail("out of memory", 1)
    except Exception as exc:  # a bug: still one line, the traceback on request
        if os.environ.get("COLLECTOR_TRACEBACK"):
            raise
        _fail(f"unexpected {type(exc).__name__}: {exc} (COLLECTOR_TRACEBACK=1 shows where)", 1)


_RECEIVED: list[str] = []  # the signals that interrupted the command


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGINT and SIGTERM alike raise KeyboardInterrupt, which every layer lets pass after
    its cleanup (worker processes ended, staging folders left for the next writer)."""
    _RECEIVED.append(signal.Signals(signum).name)
    raise KeyboardInterrupt(_RECEIVED[-1])


def _interrupted() -> None:
    name = _RECEIVED[0] if _RECEIVED else "SIGINT"
    _fail(f"interrupted ({name})", 143 if name == "SIGTERM" else 130)


def _fail(message: str, status: int) -> None:
    print(f"error: {one_line(message)}", file=sys.stderr)
    sys.exit(status)
