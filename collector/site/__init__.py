"""The static website: derived tables rendered into Markdown pages, charts and downloads.

`generate` renders in memory, `write` puts the result under site_src/, `check` says whether
what is there is current.
"""

from collector.site.build import Result, StaleSiteError, check, generate, write

__all__ = ["Result", "StaleSiteError", "check", "generate", "write"]
