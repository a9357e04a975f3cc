"""The search results page, built from the one search function."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from pages.addresses import paper_path
from pages.base import SITE_NAME, Link, PageMeta, breadcrumbs, md_escape
from retrieval.search import SearchResult


@dataclass(frozen=True)
class SearchRow:
    rank: int
    title: str
    path: str
    authors: str
    year: int | None
    categories: list[str]
    sentences: list[str]


@dataclass(frozen=True)
class SearchPage:
    query: str
    rows: list[SearchRow]
    note: str | None

    @property
    def path(self) -> str:
        return "/search?" + urlencode({"q": self.query}) if self.query else "/search"

    def meta(self, base_url: str) -> PageMeta:
        title = f"Search: {self.query}" if self.query else "Search papers"
        crumbs = breadcrumbs(base_url, Link(SITE_NAME, "/"), Link("Search", self.path))
        return PageMeta(
            title=title, description=f"Papers matching {self.query!r}.", path=self.path, json_ld=[crumbs], noindex=True
        )

    def to_markdown(self) -> str:
        lines = [f"# Search: {md_escape(self.query)}" if self.query else "# Search papers", ""]
        if self.note:
            lines += [self.note, ""]
        for row in self.rows:
            head = f"{row.rank}. [{md_escape(row.title)}]({row.path})"
            details = ", ".join(
                str(x) for x in (row.authors and md_escape(row.authors), row.year, " ".join(row.categories[:3])) if x
            )
            lines.append(f"{head}: {details}" if details else head)
            lines += [f"   > {md_escape(s)}" for s in row.sentences]
        return "\n".join(lines) + "\n"


def build_search_page(result: SearchResult, authors: dict[str, list[str]]) -> SearchPage:
    rows = []
    for hit in result.hits:
        names = authors.get(hit.paper.id, [])
        rows.append(
            SearchRow(
                rank=hit.rank,
                title=hit.paper.title,
                path=paper_path(hit.paper),
                authors=", ".join(names[:4]) + (" et al." if len(names) > 4 else ""),
                year=hit.paper.year,
                categories=list(hit.paper.categories),
                sentences=hit.sentences,
            )
        )
    return SearchPage(result.query, rows, result.note)
