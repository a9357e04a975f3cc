"""Researcher and institution pages: built once from their profiles, rendered as markdown (agent, API) or HTML."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from pages.base import (
    SITE_NAME,
    Link,
    PageMeta,
    breadcrumbs,
    chat_path,
    external,
    institution_path,
    md_escape,
    paper_path,
    researcher_path,
)
from pages.graphs import MAX_COAUTHORS, Graph, Person, coauthor_network
from retrieval.archive import Archive

MATCHING_NOTE = (
    "Papers are linked to researchers by OpenAlex, ORCID and Semantic Scholar ids first, then by name with "
    "co-author and affiliation evidence; some work may not be attached yet."
)


@dataclass(frozen=True)
class PaperItem:
    title: str
    path: str
    year: int | None
    category: str | None


@dataclass(frozen=True)
class CountedLink:
    """A name with a count, linked: a co-author and the papers shared, a field and its papers."""

    label: str
    count: int
    href: str | None = None


def paper_items(papers) -> list[PaperItem]:
    return [PaperItem(p.title, paper_path(p), p.year, p.primary_category) for p in papers]


def paper_lines(items: list[PaperItem]) -> list[str]:
    return [
        f"- [{md_escape(i.title)}]({i.path})" + "".join(f" · {x}" for x in (i.year, i.category) if x) for i in items
    ]


def _papers_section(items: list[PaperItem], page: int, pages: int, category: str | None) -> list[str]:
    title = f"## Papers, newest first (page {page} of {pages})"
    if category:
        title += f", in {md_escape(category)}"
    return ["", title, "", *paper_lines(items)]


def _years(first, last) -> str:
    if not first:
        return ""
    return f"{first}" if first == last else f"{first}–{last}"


@dataclass(frozen=True)
class ResearcherPage:
    id: int
    name: str
    path: str
    paper_count: int
    years: str
    external_ids: list[Link]
    positions: dict[str, int]
    matched_papers: int
    fields: list[CountedLink]
    coauthors: list[CountedLink]
    institutions: list[CountedLink]
    institution_years: list[str]
    papers: list[PaperItem]
    page: int
    pages: int
    category: str | None
    network: Graph | None = None  # the co-author network drawn (`pages.graphs`)

    dock_label = "this researcher"

    @property
    def chat_path(self) -> str:
        return chat_path(researcher=self.id)

    @property
    def position_note(self) -> str:
        n = self.matched_papers
        return (
            f"Across the {n} of {self.paper_count} paper{'s' if self.paper_count != 1 else ''} where every author "
            "was matched, so the position is known."
        )

    def meta(self, base_url: str) -> PageMeta:
        description = f"{self.name}: {self.paper_count} paper{'s' if self.paper_count != 1 else ''} in this archive."
        person = {"@context": "https://schema.org", "@type": "Person", "name": self.name, "url": base_url + self.path}
        same_as = [link.href for link in self.external_ids if link.href.startswith("https://")]
        if same_as:
            person["sameAs"] = same_as
        crumbs = breadcrumbs(
            base_url, Link(SITE_NAME, "/"), Link("Researchers", "/researchers"), Link(self.name, self.path)
        )
        return PageMeta(title=self.name, description=description, path=self.path, json_ld=[person, crumbs])

    def to_markdown(self) -> str:
        plural = "s" if self.paper_count != 1 else ""
        lines = [f"# {md_escape(self.name)}", "", f"**{self.paper_count} paper{plural} here**"]
        if self.years:
            lines[-1] += f" · {self.years}"
        lines += [f"**Page:** {self.path}", "", f"_{MATCHING_NOTE}_"]
        ids = ", ".join(f"[{md_escape(link.label)}]({link.href})" for link in self.external_ids)
        lines += ["", f"**Identity:** {ids or 'by name only (no OpenAlex, ORCID or Semantic Scholar id yet)'}"]
        p = self.positions
        lines += ["", "## Author position", "", self.position_note]
        lines.append(f"First {p['first']} · middle {p['middle']} · last {p['last']} · sole {p['sole']}")
        if self.fields:
            lines += ["", "## Fields (primary category)", ""]
            lines += [f"- [{md_escape(f.label)}]({f.href}) {f.count}" for f in self.fields]
        if self.coauthors:
            lines += ["", "## Co-authors", ""]
            lines += [
                f"- [{md_escape(c.label)}]({c.href}): {c.count} shared paper{'s' if c.count != 1 else ''}"
                for c in self.coauthors
            ]
        if self.institutions:
            lines += ["", "## Institutions", ""]
            lines += [
                f"- [{md_escape(i.label)}]({i.href}) {years} ({i.count} paper{'s' if i.count != 1 else ''})"
                for i, years in zip(self.institutions, self.institution_years, strict=True)
            ]
        lines += _papers_section(self.papers, self.page, self.pages, self.category)
        return "\n".join(lines) + "\n"


def researcher_page(archive: Archive, researcher_id: int, page: int = 1, category: str | None = None):
    profile = archive.researcher(researcher_id, page, category)
    if profile is None:
        return None
    r = profile.researcher
    path = researcher_path(r.id, r.name)
    links = []
    if r.openalex_id:
        links.append(Link(f"OpenAlex {r.openalex_id}", external("https://openalex.org/", r.openalex_id)))
    if r.orcid:
        links.append(Link(f"ORCID {r.orcid}", external("https://orcid.org/", r.orcid)))
    if r.s2_id:
        links.append(Link(f"Semantic Scholar {r.s2_id}", external("https://www.semanticscholar.org/author/", r.s2_id)))
    return ResearcherPage(
        id=r.id,
        name=r.name,
        path=path,
        paper_count=profile.paper_count,
        years=_years(*profile.years),
        external_ids=links,
        positions=profile.positions,
        matched_papers=profile.matched_papers,
        fields=[CountedLink(c, n, f"{path}?category={quote(c)}") for c, n in profile.fields],
        coauthors=[CountedLink(c.name, c.shared, researcher_path(c.researcher_id, c.name))
                   for c in profile.coauthors[:MAX_COAUTHORS]],  # fmt: skip
        network=coauthor_network(r.name, [Person(c.researcher_id, c.name, researcher_path(c.researcher_id, c.name),
                                                 c.shared) for c in profile.coauthors[:MAX_COAUTHORS]],
                                 profile.coauthor_links, len(profile.coauthors)),  # fmt: skip
        institutions=[
            CountedLink(a.name, a.papers, institution_path(a.institution_id, a.name)) for a in profile.institutions
        ],
        institution_years=[_years(a.first_year, a.last_year) for a in profile.institutions],
        papers=paper_items(profile.papers.papers),
        page=profile.papers.page,
        pages=profile.papers.pages,
        category=category,
    )


@dataclass(frozen=True)
class InstitutionPage:
    id: int
    name: str
    path: str
    location: str
    types: list[str]
    ror_id: str | None
    links: list[Link]
    aliases: list[str]
    parents: list[CountedLink]
    children: list[CountedLink]
    paper_count: int
    fields: list[CountedLink]
    researchers: list[CountedLink]
    researcher_count: int
    papers: list[PaperItem]
    page: int
    pages: int
    category: str | None

    dock_label = "this institution"

    @property
    def chat_path(self) -> str:
        return chat_path(institution=self.id)

    def meta(self, base_url: str) -> PageMeta:
        description = f"{self.name}: {self.paper_count} papers and {self.researcher_count} researchers in this archive."
        org = {
            "@context": "https://schema.org",
            "@type": "Organization",
            "name": self.name,
            "url": base_url + self.path,
        }
        if self.ror_id:
            org["sameAs"] = [external("https://ror.org/", self.ror_id)]
        crumbs = breadcrumbs(
            base_url, Link(SITE_NAME, "/"), Link("Institutions", "/institutions"), Link(self.name, self.path)
        )
        return PageMeta(title=self.name, description=description, path=self.path, json_ld=[org, crumbs])

    def to_markdown(self) -> str:
        lines = [f"# {md_escape(self.name)}", ""]
        facts = [x for x in (self.location, ", ".join(self.types)) if x]
        if facts:
            lines.append(" · ".join(md_escape(f) for f in facts))
        lines.append(f"**{self.paper_count} papers, {self.researcher_count} researchers here** · "
                     f"**Page:** {self.path}")  # fmt: skip
        if self.links:
            lines.append("**Links:** " + ", ".join(f"[{md_escape(x.label)}]({x.href})" for x in self.links))
        if self.aliases:
            lines.append(f"**Also known as:** {md_escape(', '.join(self.aliases[:8]))}")
        for title, items in (("Part of", self.parents), ("Parts", self.children)):
            if items:
                lines += ["", f"## {title}", ""] + [f"- [{md_escape(i.label)}]({i.href})" for i in items[:30]]
        if self.fields:
            lines += ["", "## Fields (primary category)", ""]
            lines += [f"- [{md_escape(f.label)}]({f.href}) {f.count}" for f in self.fields]
        if self.researchers:
            lines += ["", "## Researchers (most papers here first)", ""]
            lines += [f"- [{md_escape(r.label)}]({r.href}): {r.count}" for r in self.researchers]
        lines += _papers_section(self.papers, self.page, self.pages, self.category)
        return "\n".join(lines) + "\n"


def institution_page(archive: Archive, institution_id: int, page: int = 1, category: str | None = None):
    profile = archive.institution(institution_id, page, category)
    if profile is None:
        return None
    i = profile.institution
    path = institution_path(i.id, i.name)
    links = []
    if i.ror_id:
        links.append(Link(f"ROR {i.ror_id}", external("https://ror.org/", i.ror_id)))
    if i.openalex_id:
        links.append(Link(f"OpenAlex {i.openalex_id}", external("https://openalex.org/", i.openalex_id)))
    if i.website and i.website.startswith(("https://", "http://")):
        links.append(Link("Website", quote(i.website, safe=":/?&=#%+,;~@!$*'")))
    return InstitutionPage(
        id=i.id,
        name=i.name,
        path=path,
        location=", ".join(x for x in (i.city, i.country_name or i.country_code) if x),
        types=list(i.types),
        ror_id=i.ror_id,
        links=links,
        aliases=[*i.acronyms, *i.aliases],
        parents=[CountedLink(p.name, 0, institution_path(p.id, p.name)) for p in profile.parents],
        children=[CountedLink(c.name, 0, institution_path(c.id, c.name)) for c in profile.children],
        paper_count=profile.paper_count,
        fields=[CountedLink(c, n, f"{path}?category={quote(c)}") for c, n in profile.fields],
        researchers=[CountedLink(m.name, m.papers, researcher_path(m.researcher_id, m.name))
                     for m in profile.researchers],  # fmt: skip
        researcher_count=profile.researcher_count,
        papers=paper_items(profile.papers.papers),
        page=profile.papers.page,
        pages=profile.papers.pages,
        category=category,
    )

