"""The search results page, built from the one search function."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from pages.base import SITE_NAME, Link, PageMeta, breadcrumbs, byline, md_escape, paper_path
from retrieval.search.hybrid import SearchResult


@dataclass(frozen=True)
class SearchRow:
    rank: int
    title: str
    path: str
    authors: str
    year: int | None
    categories: list[str]
    sentences: list[str]
    page: int | None = None  # found by a passage of its full text: that passage's page


WEAK = ("Nothing in this archive answers this well. The closest matches are below, labelled as such. You can "
        "fetch a paper that is not here by its arXiv id, add your own PDF on your library page, or try broader "
        "words.")  # fmt: skip


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
    weaker: list[SearchRow] = field(default_factory=list)  # under the relevance floor: folded, or the closest
    weak: bool = False  # nothing clears the floor: `weaker` holds the closest matches

    @property
    def weak_text(self) -> str:
        return WEAK

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
        if self.note:  # (it may quote the query and a paper's words: "Read "GRPO" as ...")
            lines += [md_escape(self.note), ""]
        if self.weak:
            lines += [f"**{WEAK}**", "", "## Closest matches", ""]
        lines += _rows_markdown(self.weaker if self.weak else self.rows)
        if self.weaker and not self.weak:
            lines += ["", f"## Weaker matches ({len(self.weaker)})", ""] + _rows_markdown(self.weaker)
        pager = [f"[Previous]({self.address(self.page - 1)})"] if self.page > 1 else []
        pager += [f"[Next]({self.address(self.page + 1)})"] if self.has_next else []
        if pager:
            lines += ["", f"Page {self.page}: " + " · ".join(pager)]
        return "\n".join(lines) + "\n"


def _rows_markdown(rows: list[SearchRow]) -> list[str]:
    lines = []
    for row in rows:
        head = f"{row.rank}. [{md_escape(row.title)}]({row.path})"
        details = ", ".join(
            str(x) for x in (row.authors and md_escape(row.authors), row.year, " ".join(row.categories[:3])) if x
        )
        lines.append(f"{head}: {details}" if details else head)
        if row.page is not None:
            lines.append(f"   > found in its full text, p. {row.page}")
        lines += [f"   > {md_escape(s)}" for s in row.sentences]
    return lines


def build_search_page(
    result: SearchResult, authors: dict[str, list[str]], per_page: int = 10, page: int = 1, **extra
) -> SearchPage:
    """The page's hits: those that clear the relevance floor as the results, the others folded as weaker matches
    (or, when none clears, shown as the closest matches under "nothing here answers this well")."""
    rows, weaker = [], []
    for hit in result.hits[(page - 1) * per_page : page * per_page]:
        names = authors.get(hit.paper.id, [])
        row = SearchRow(
            rank=hit.rank,
            title=hit.paper.title,
            path=paper_path(hit.paper),
            authors=byline(names, shown=4),
            year=hit.paper.year,
            categories=list(hit.paper.categories),
            sentences=hit.sentences,
            page=hit.page if hit.kind == "passage" else None,
        )
        (rows if hit.clears else weaker).append(row)
    weak = bool(result.hits) and result.weak
    return SearchPage(result.query, rows, result.note, page=page, has_next=len(result.hits) > page * per_page,
                      weaker=weaker, weak=weak, **extra)  # fmt: skip
