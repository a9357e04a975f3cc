"""What every page shares: links, and the site-wide text about where the data comes from."""

from __future__ import annotations

from dataclasses import dataclass, field

SITE_NAME = "ScholarLoom"
TAGLINE = "Papers, researchers and institutions, woven together"


@dataclass(frozen=True)
class Link:
    label: str
    href: str


@dataclass(frozen=True)
class PageMeta:
    """Head data of a page: title, description, canonical path, structured data."""

    title: str
    description: str
    path: str
    json_ld: list[dict] = field(default_factory=list)
    noindex: bool = False
    refresh_seconds: int | None = None  # reload the page (a job's progress, without script)


def breadcrumbs(base_url: str, *crumbs: Link) -> dict:
    return {
        "@context": "https://schema.org",
        "@type": "BreadcrumbList",
        "itemListElement": [
            {"@type": "ListItem", "position": n, "name": c.label, "item": base_url + c.href}
            for n, c in enumerate(crumbs, start=1)
        ],
    }


def md_escape(text: str) -> str:
    """Keep untrusted text from forming links, images or HTML when markdown is rendered."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace("<", "&lt;").replace(">", "&gt;")


def byline(names: list[str], shown: int = 3) -> str:
    """Authors as a listing shows them: the first few, then "et al."."""
    return ", ".join(names[:shown]) + (" et al." if len(names) > shown else "")


def figure(count: int) -> str:
    """A count for people: 1742 -> '1,742'."""
    return f"{count:,}"
