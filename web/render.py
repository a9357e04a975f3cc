"""HTML and markdown responses for page objects."""

from __future__ import annotations

import json
from pathlib import Path

from markupsafe import Markup

from pages.base import SITE_NAME, TAGLINE, PageMeta, figure

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
PAGE_CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'none'; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


def json_ld(value: dict) -> Markup:
    """JSON for a <script type=application/ld+json> block that no title can break out of."""
    text = json.dumps(value, ensure_ascii=False)
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


class Renderer:
    """Jinja2 with autoescaping; built once by the app."""

    def __init__(self, base_url: str) -> None:
        from jinja2 import Environment, FileSystemLoader, select_autoescape

        self.base_url = base_url
        self.env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True))
        self.env.filters["json_ld"] = json_ld
        self.env.filters["figure"] = figure

    def html(self, template: str, meta: PageMeta, **context) -> str:
        return self.env.get_template(template).render(
            meta=meta, base_url=self.base_url, site_name=SITE_NAME, tagline=TAGLINE, **context
        )
