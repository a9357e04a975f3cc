"""The listings: the home page (the latest papers, the ways in: categories, researchers, institutions), /papers, every
paper a page at a time, maybe of one category, and the /researchers and /institutions lists (most papers first, 50 a
page, filtered by a name); built once, rendered as markdown or HTML."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from retrieval.archive import Archive
from pages.base import (
    SITE_NAME,
    TAGLINE,
    Link,
    PageMeta,
    breadcrumbs,
    byline,
    figure,
    institution_path,
    md_escape,
    paper_path,
    researcher_path,
)
from pages.people import CountedLink, PaperItem, paper_items, paper_lines

LATEST = 12
SHOWN = 12  # categories, researchers and institutions on the home page
PAPERS_PER_PAGE = 50
LIST_PER_PAGE = 50  # researchers or institutions a page of their lists


def papers_address(category: str | None = None, page: int = 1, after: str | None = None,
                   before: str | None = None) -> str:  # fmt: skip
    """/papers, maybe of one category, at a page by its number or next to a cursor's paper (the pager's links:
    `after` a paper for older ones, `before` it for newer)."""
    pairs = (("category", category or ""), ("page", str(page) if page > 1 else ""), ("after", after or ""),
             ("before", before or ""))  # fmt: skip
    params = {k: v for k, v in pairs if v}
    return "/papers" + ("?" + urlencode(params) if params else "")


@dataclass(frozen=True)
class LatestPaper:
    title: str
    path: str
    authors: str
    year: int | None
    category: str | None


@dataclass(frozen=True)
class HomePage:
    counts: dict[str, int]
    latest: list[LatestPaper]
    categories: list[CountedLink]
    researchers: list[CountedLink]
    institutions: list[CountedLink]
    path: str = "/"

    def figures(self) -> dict[str, str]:
        return {kind: figure(n) for kind, n in self.counts.items()}

    def meta(self, base_url: str) -> PageMeta:
        website = {
            "@context": "https://schema.org",
            "@type": "WebSite",
            "name": SITE_NAME,
            "url": base_url + "/",
            "potentialAction": {
                "@type": "SearchAction",
                "target": {"@type": "EntryPoint", "urlTemplate": base_url + "/search?q={search_term_string}"},
                "query-input": "required name=search_term_string",
            },
        }
        return PageMeta(
            title="Papers, researchers and institutions",
            description=f"Search, browse and chat with {figure(self.counts.get('papers', 0))} research papers.",
            path="/",
            json_ld=[website],
        )

    def to_markdown(self) -> str:
        f = self.figures()
        lines = [f"# {SITE_NAME}", "", f"{TAGLINE}: {f['papers']} papers, {f['researchers']} researchers and "
                 f"{f['institutions']} institutions here. Search: `/search?q=<words>`; chat: `/chat` (signed in).",
                 "", "## Latest papers", ""]  # fmt: skip
        for p in self.latest:
            details = " · ".join(str(x) for x in (p.authors and md_escape(p.authors), p.year, p.category) if x)
            lines.append(f"- [{md_escape(p.title)}]({p.path})" + (f": {details}" if details else ""))
        for title, items, everything in (
            ("Browse by category", self.categories, ("All papers", "/papers")),
            ("Researchers with the most papers here", self.researchers, ("All researchers", "/researchers")),
            ("Institutions with the most papers here", self.institutions, ("All institutions", "/institutions")),
        ):
            lines += ["", f"## {title}", ""]
            lines += [f"- [{md_escape(i.label)}]({i.href}): {figure(i.count)}" for i in items]
            lines.append(f"- [{everything[0]}]({everything[1]})")
        return "\n".join(lines) + "\n"


def home_page(archive: Archive) -> HomePage:
    latest = archive.newest(limit=LATEST)
    authors = archive.author_names([p.id for p in latest])
    rows = []
    for p in latest:
        rows.append(LatestPaper(p.title, paper_path(p), byline(authors.get(p.id, [])), p.year, p.primary_category))
    categories = [CountedLink(c, n, papers_address(c)) for c, n in archive.categories(SHOWN)]
    people = [
        [CountedLink(name, n, path(i, name)) for i, name, n in archive.most_papers(kind, 1, SHOWN)[0]]
        for kind, path in (("researchers", researcher_path), ("institutions", institution_path))
    ]
    return HomePage(archive.counts(), rows, categories, *people)


@dataclass(frozen=True)
class PapersPage:
    """/papers: every paper here, newest first, PAPERS_PER_PAGE a page, maybe only one primary category."""

    papers: list[PaperItem]
    total: int
    page: int
    pages: int
    category: str | None
    categories: list[CountedLink]
    newer: str | None = None  # the pager's cursors (ids of papers here): keyset pages, however deep
    older: str | None = None
    cursor: tuple[str, str] | None = None  # ("after" or "before", id) when this page was reached by a cursor
    since: str = ""  # on a cursor's page: the newest shown paper's date, which says where the page stands
    path: str = "/papers"

    @property
    def title(self) -> str:
        return f"Papers in {self.category}" if self.category else "Papers"

    def address(self, page: int | None = None) -> str:
        if self.cursor and page is None:
            return papers_address(self.category, **{self.cursor[0]: self.cursor[1]})
        return papers_address(self.category, page or self.page)

    @property
    def newer_href(self) -> str | None:
        return papers_address(self.category, before=self.newer) if self.newer else None

    @property
    def older_href(self) -> str | None:
        return papers_address(self.category, after=self.older) if self.older else None

    @property
    def pager_label(self) -> str:
        if self.cursor:
            return f"From {self.since}" if self.since else "Further down the list"
        return f"Page {self.page} of {self.pages}"

    def meta(self, base_url: str) -> PageMeta:
        crumbs = [Link(SITE_NAME, "/"), Link("Papers", "/papers")]
        if self.category:
            crumbs.append(Link(self.category, papers_address(self.category)))
        return PageMeta(
            title=self.title + (f" (from {self.since})" if self.cursor and self.since else
                                f" (page {self.page})" if self.page > 1 else ""),  # fmt: skip
            description=f"{figure(self.total)} papers{f' in {self.category}' if self.category else ''}, newest first.",
            path=self.address(),
            json_ld=[breadcrumbs(base_url, *crumbs)],
        )

    def to_markdown(self) -> str:
        label = self.pager_label[0].lower() + self.pager_label[1:]
        lines = [f"# {md_escape(self.title)}", "", f"{figure(self.total)} papers, newest first ({label}).", ""]
        lines += paper_lines(self.papers)
        pager = [f"[Newest]({papers_address(self.category)})"] if self.newer else []
        pager += [f"[Newer]({self.newer_href})"] if self.newer_href else []
        pager += [f"[Older]({self.older_href})"] if self.older_href else []
        if pager:
            lines += ["", " · ".join(pager)]
        lines += ["", "## Categories", ""]
        lines += [f"- [{md_escape(c.label)}]({c.href}): {figure(c.count)}" for c in self.categories]
        return "\n".join(lines) + "\n"


def papers_page(
    archive: Archive, category: str | None, page: int = 1, after: str | None = None, before: str | None = None
) -> PapersPage:
    """/papers at a page by its number, or next to a cursor's paper (`after` it: older; `before` it: newer); a
    cursor naming no paper here gives the first page."""
    listed = archive.all_papers(category, page, PAPERS_PER_PAGE, after, before)
    categories = [CountedLink(c, n, papers_address(c)) for c, n in archive.categories()]
    cursor = None
    if listed.page == 0:  # reached by the cursor
        cursor = ("after", after) if after else ("before", before)
    newest = listed.papers[0].published if listed.papers else None
    since = f"{newest:%-d %b %Y}" if cursor and newest else ""
    return PapersPage(paper_items(listed.papers), listed.total, listed.page, listed.pages, category, categories,
                      listed.newer, listed.older, cursor, since)  # fmt: skip

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
    rows, total, at = archive.most_papers(kind, page, LIST_PER_PAGE, query)
    items = [ListItem(name, path_of(i, name), n) for i, name, n in rows]
    return ListPage(kind, f"/{kind}", items, total, at.page, at.pages, query)
