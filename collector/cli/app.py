"""The Typer application that every subcommand module adds its command to."""

from __future__ import annotations

import re

import typer

app = typer.Typer(
    name="collector",
    help="Benchmark deep-learning training hardware and publish the answers as a static site.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# what a terminal would act on rather than show: control characters, line and paragraph
# separators, and the bidirectional overrides that reorder the text around them
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def one_line(text: str) -> str:
    """Text as one printable line: the characters a terminal would act on escaped (a file
    named with a newline or an escape sequence cannot forge or hide lines)."""
    return _UNPRINTABLE.sub(lambda m: repr(m.group())[1:-1], text)
