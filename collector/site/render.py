"""Jinja2 rendering of the page templates (files in templates/), with escaping by default.

Every `{{ value }}` passes through `markdown_text` (HTML- and Markdown-escaped) unless the
value is `Markup`, which only the filters below and the page builders create from escaped parts.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup

from collector.site import charts, common
from collector.site.config import settings
from collector.site.escape import html_text, json_for_html, markdown_text, title_text
from collector.site.model import Page


@cache
def environment(finalize: bool = True) -> jinja2.Environment:
    """The template environment: package templates, StrictUndefined, escaping finalizer (plain
    text without it, for the titles and descriptions of charts)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("collector.site", "templates"),
        undefined=jinja2.StrictUndefined,
        finalize=markdown_text if finalize else None,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        h=html_text,
        json=json_for_html,
        num=lambda v, d=3: Markup(markdown_text(common.num(v, d))),
        title=title_text,
        link=lambda text, href: Markup(f"[{markdown_text(text)}]({href})"),
        rel=lambda dest, src: common.rel(src, dest),
        href=lambda path: html_text(common.built(path)),
        system_page=common.system_page,
        system_anchor=common.system_slug,
        evidence_heading=common.evidence_heading,
        round_name=lambda r: f"suite {r['round']}" if r["source"] == "local" else r["round"],
        benchmark_page=common.benchmark_page,
        interval=lambda low, high, unit="": Markup(markdown_text(common.interval(low, high, unit))),
        listed=common.listed,
        code=lambda v: Markup(f"`{common.code(v)}`"),
        groups=common.groups,
        in_site_order=lambda rows: sorted(rows, key=lambda r: common.site_rank(r["benchmark"])),
    )
    env.globals.update(
        bench=settings().benchmark, family=settings().family_title, top_rows=charts.TOP_ROWS
    )
    return env


def render(template: str, page: Page) -> str:
    """Render one page template with its context as `page`."""
    text = environment().get_template(template).render(page=page)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip() + "\n"


def phrase(name: str, **values: Any) -> str:
    """A sentence of `templates/phrases.j2` (a macro by name), as plain one-line text."""
    macro = getattr(environment(False).get_template("phrases.j2").module, name)
    return " ".join(str(macro(**values)).split())
