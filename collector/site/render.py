"""Jinja2 rendering of the page templates (files in templates/), with escaping by default.

Every `{{ value }}` passes through `markdown_text` (HTML- and Markdown-escaped) unless the
value is `Markup`, which only the page builders create from escaped parts.
"""

from __future__ import annotations

from functools import cache

import jinja2
from markupsafe import Markup

from collector.site.escape import html_text, json_for_html, markdown_text, title_text
from collector.site.model import Page
from collector.site.pages.common import num


@cache
def environment() -> jinja2.Environment:
    """The template environment: package templates, StrictUndefined, escaping finalizer."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("collector.site", "templates"),
        undefined=jinja2.StrictUndefined,
        finalize=markdown_text,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["h"] = html_text
    env.filters["json"] = json_for_html
    env.filters["num"] = lambda v, d=3: Markup(markdown_text(num(v, d)))
    env.filters["md"] = markdown_text
    env.filters["title"] = title_text
    return env


def render(template: str, page: Page) -> str:
    """Render one page template with its context as `page`.

    The line naming the store snapshot is in every page's footer (`mkdocs_hook.footer`), not
    at the page's top: `note` is empty, for templates that still print it.
    """
    text = environment().get_template(template).render(page=page, note=Markup(""))
    return "\n".join(line.rstrip() for line in text.splitlines()).strip() + "\n"
