"""The search results page, built from the one search function."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from retrieval.search.hybrid import SearchResult
from web.addresses import paper_path
from web.base import SITE_NAME, Link, PageMeta, breadcrumbs, byline, md_escape


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
class NamedResult:
    label: str
    href: str
    detail: str


@dataclass(frozen=True)
class SearchPage:
    query: str
    rows: list[SearchRow]
    note: str | None
    category: str = ""
    after: str = ""
    before: str = ""
    page: int = 1
    has_next: bool = False
    researchers: list[NamedResult] = field(default_factory=list)
    institutions: list[NamedResult] = field(default_factory=list)

    def address(self, page: int | None = None) -> str:
        params = {"q": self.query, "category": self.category, "after": self.after, "before": self.before}
        params = {k: v for k, v in params.items() if v}
        if (page or self.page) > 1:
            params["page"] = str(page or self.page)
        return "/search?" + urlencode(params) if params else "/search"

    @property
    def path(self) -> str:
        return self.address()

    def meta(self, base_url: str) -> PageMeta:
        title = f"Search: {self.query}" if self.query else "Search papers"
        crumbs = breadcrumbs(base_url, Link(SITE_NAME, "/"), Link("Search", self.path))
        return PageMeta(
            title=title, description=f"Papers matching {self.query!r}.", path=self.path, json_ld=[crumbs], noindex=True
        )

    def to_markdown(self) -> str:
        lines = [f"# Search: {md_escape(self.query)}" if self.query else "# Search papers", ""]
        filters = [f"{k} {md_escape(v)}" for k, v in (("category", self.category), ("after", self.after),
                                                      ("before", self.before)) if v]  # fmt: skip
        if filters:
            lines += ["Filters: " + ", ".join(filters), ""]
        for title, items in (("Researchers", self.researchers), ("Institutions", self.institutions)):
            if items:
                lines += [f"## {title}", ""] + [
                    f"- [{md_escape(i.label)}]({i.href}): {md_escape(i.detail)}" for i in items
                ]
                lines += [""]
        if self.researchers or self.institutions:
            lines += ["## Papers", ""]
        if self.note:
            lines += [self.note, ""]
        for row in self.rows:
            head = f"{row.rank}. [{md_escape(row.title)}]({row.path})"
            details = ", ".join(
                str(x) for x in (row.authors and md_escape(row.authors), row.year, " ".join(row.categories[:3])) if x
            )
            lines.append(f"{head}: {details}" if details else head)
            lines += [f"   > {md_escape(s)}" for s in row.sentences]
        pager = [f"[Previous]({self.address(self.page - 1)})"] if self.page > 1 else []
        pager += [f"[Next]({self.address(self.page + 1)})"] if self.has_next else []
        if pager:
            lines += ["", f"Page {self.page}: " + " · ".join(pager)]
        return "\n".join(lines) + "\n"


def build_search_page(
    result: SearchResult, authors: dict[str, list[str]], per_page: int = 10, page: int = 1, **extra
) -> SearchPage:
    rows = []
    for hit in result.hits[(page - 1) * per_page : page * per_page]:
        names = authors.get(hit.paper.id, [])
        rows.append(
            SearchRow(
                rank=hit.rank,
                title=hit.paper.title,
                path=paper_path(hit.paper),
                authors=byline(names, shown=4),
                year=hit.paper.year,
                categories=list(hit.paper.categories),
                sentences=hit.sentences,
            )
        )
    return SearchPage(result.query, rows, result.note, page=page, has_next=len(result.hits) > page * per_page, **extra)
