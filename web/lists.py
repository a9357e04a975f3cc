"""The /researchers and /institutions lists: most papers first, 50 a page, filtered by a name."""

from __future__ import annotations

from dataclasses import dataclass

from retrieval.archive import Archive
from web.addresses import institution_path, researcher_path
from web.base import SITE_NAME, Link, PageMeta, breadcrumbs, md_escape

PER_PAGE = 50


@dataclass(frozen=True)
class ListItem:
    label: str
    href: str
    count: int


@dataclass(frozen=True)
class ListPage:
    kind: str  # "researchers" or "institutions"
    path: str
    items: list[ListItem]
    total: int
    page: int
    pages: int
    query: str

    @property
    def title(self) -> str:
        return self.kind.capitalize()

    def meta(self, base_url: str) -> PageMeta:
        crumbs = breadcrumbs(base_url, Link(SITE_NAME, "/"), Link(self.title, self.path))
        description = f"{self.total} {self.kind} with papers in this archive, most papers first."
        return PageMeta(title=self.title, description=description, path=self.path, json_ld=[crumbs])

    def to_markdown(self) -> str:
        head = f"# {self.title}" + (f" matching {md_escape(self.query)!r}" if self.query else "")
        lines = [
            head,
            "",
            f"{self.total} {self.kind} with papers here, most papers first (page {self.page} of {self.pages}).",
            "",
        ]
        lines += [
            f"- [{md_escape(i.label)}]({i.href}): {i.count} paper{'s' if i.count != 1 else ''}" for i in self.items
        ]
        return "\n".join(lines) + "\n"


def list_page(archive: Archive, kind: str, page: int = 1, query: str = "") -> ListPage:
    path_of = researcher_path if kind == "researchers" else institution_path
    query = query.strip()[:100]
    rows, total, at = archive.most_papers(kind, page, PER_PAGE, query)
    items = [ListItem(name, path_of(i, name), n) for i, name, n in rows]
    return ListPage(kind, f"/{kind}", items, total, at.page, at.pages, query)
