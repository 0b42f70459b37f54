"""The static website: derived tables rendered into Markdown pages, charts and downloads.

`generate` renders in memory; `write` puts the result, with the static sources, into a docs
folder (`.collector/site_src`, which git ignores) that MkDocs builds; `update` does both when
the folder does not hold the store's live snapshot yet. `collector site`, `mkdocs build` and
`mkdocs serve` call `update` (the latter two through the hook in `collector.site.mkdocs_hook`).
"""

from collector.site.build import Result, Update, generate, update, write

__all__ = ["Result", "Update", "generate", "update", "write"]
