"""Escaping of strings that come from logs and system descriptions, for every output context.

Every value a template prints passes through `markdown_text` unless it is `Markup` already;
HTML attributes and embedded JSON have their own functions.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from markupsafe import Markup

# Characters Markdown (and its tables) would interpret; each is backslash-escaped. Not "~":
# no extension of this site reads it, and Markdown keeps the backslash before it.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|])")
_SLUG_BAD = re.compile(r"[^a-z0-9]+")


def markdown_text(value: Any) -> str:
    """Plain text safe inside Markdown: HTML-escaped, Markdown syntax escaped, one line."""
    if isinstance(value, Markup):
        return str(value)
    if value is None:
        return ""
    text = " ".join(str(value).split())
    text = html.escape(text, quote=True)
    return _MD_SPECIAL.sub(r"\\\1", text)


def html_text(value: Any) -> Markup:
    """Text safe inside an HTML element or a quoted attribute (raw HTML blocks)."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else " ".join(str(value).split()), quote=True))


def json_for_html(value: Any) -> Markup:
    """JSON that can sit inside <script type="application/json">: <, >, & and quotes escaped.

    `</script>` in a string becomes `\\u003c/script\\u003e`, which JSON.parse reads back as the
    original text but the HTML parser never sees as a closing tag.
    """
    text = json.dumps(value, ensure_ascii=False, sort_keys=False, separators=(",", ":"))
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("'", "\\u0027")):
        text = text.replace(char, code)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


def slug(value: str) -> str:
    """A file-name-safe slug: lowercase letters, digits and dashes."""
    return _SLUG_BAD.sub("-", value.lower()).strip("-") or "x"


def title_text(value: Any) -> Markup:
    """A page title: Markdown-escaped, with < and > shown as ‹ ›.

    MkDocs copies the first heading into <title> and the navigation after unescaping it, so a
    title must not hold angle brackets at all; the page body shows the exact name.
    """
    text = str(value).replace("<", "\u2039").replace(">", "\u203a")
    return Markup(markdown_text(text))
