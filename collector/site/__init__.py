"""The static website: derived tables rendered into Markdown pages, charts and downloads.

`generate` renders in memory; `write` puts the result, with the static sources, into a docs
folder (`.collector/site_src`, which git ignores) that MkDocs builds. `mkdocs build` and
`mkdocs serve` do both through the hook in `collector.site.mkdocs_hook`.
"""

from collector.site.build import Result, generate, write

__all__ = ["Result", "generate", "write"]
