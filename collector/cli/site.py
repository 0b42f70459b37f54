"""`collector site`: generate the website's pages, charts and downloads from the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from collector.cli.app import app


@app.command("site")
def site_command(
    store: Annotated[Path | None, typer.Option(help="Store folder.")] = None,
    static: Annotated[Path, typer.Option(help="Static sources: docs_dir of mkdocs.yml.")] = Path(
        "site_src"
    ),
    out: Annotated[Path, typer.Option(help="Docs folder to write.")] = Path(".collector/site_src"),
) -> None:
    """Render the derived tables into the site's Markdown pages, charts and data files, beside
    the static sources, in a folder git ignores. `mkdocs build` and `mkdocs serve` do the same
    through their hook; this command is for looking at the generated Markdown."""
    from collector import site  # charts and templates load only when the site is built

    done = site.update(out, static if static.is_dir() else None, store)
    fresh = "" if done.generated else " (up to date already)"
    typer.echo(f"{out}: {done.files} files from store snapshot {done.snapshot}{fresh}")
