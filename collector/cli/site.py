"""`collector site`: generate the website's pages, charts and downloads from the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from collector.cli.app import app


@app.command("site")
def site_command(
    store: Annotated[Path | None, typer.Option(help="Store folder.")] = None,
    out: Annotated[Path, typer.Option(help="Docs folder of mkdocs.yml.")] = Path("site_src"),
    check: Annotated[
        bool, typer.Option("--check", help="Fail if the generated pages are stale; write nothing.")
    ] = False,
) -> None:
    """Render the derived tables into the site's Markdown pages, charts and data files."""
    from collector import site  # charts and templates load only when the site is built

    result = site.generate(store)
    if check:
        site.check(result, out)
        typer.echo(f"{out}: current with store snapshot {result.snapshot}")
        return
    written = site.write(result, out)
    typer.echo(f"{out}: {len(written)} generated files from store snapshot {result.snapshot}")
