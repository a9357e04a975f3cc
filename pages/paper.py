"""The paper page: built once from the library, rendered as markdown (agent, Accept: text/markdown) or HTML."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import quote

from pages.base import (
    SITE_NAME,
    Link,
    PageMeta,
    breadcrumbs,
    byline,
    chat_path,
    external,
    md_escape,
    paper_path,
    researcher_path,
)
from pages.graphs import Graph
from pages.references import MAX_CITING_SHOWN, ReferenceRow, neighbourhood, reference_items
from retrieval.archive import Archive
from retrieval.scholarly.catalog import PaperView
from retrieval.vectors.store import IndexUnavailable
MAX_SIMILAR_SHOWN = 5
MAX_VERSIONS = 50


@dataclass(frozen=True)
class Author:
    name: str
    href: str | None  # the researcher's page, when the catalog knows who they are
    institution: str | None = None


@dataclass(frozen=True)
class PaperPage:
    id: str
    arxiv_id: str | None
    title: str
    path: str
    authors: list[str]
    abstract: str
    categories: list[str]
    published: datetime | None
    updated: datetime | None
    year: int | None
    version: int | None
    links: list[Link]
    doi: str | None
    venue: str | None
    journal_ref: str | None
    comments: str | None
    cited_by_count: int | None
    summary: str | None
    topics: list[str]
    paper_type: str | None
    research_field: str | None
    novelty: str | None
    references: list[ReferenceRow]
    reference_count: int
    author_links: list[Author]
    citing: list[Link]  # papers of this archive that cite it, newest first
    citing_count: int
    similar: list[Link] = field(default_factory=list)  # the index's nearest neighbours, closest first
    not_held: list[str] = field(default_factory=list)  # arXiv ids it cites that are not here: one job fetches them
    graph: Graph | None = None  # its citation neighbourhood drawn (`pages.graphs`)

    @property
    def versions(self) -> list[Link]:
        """arXiv's pages of each version, v1 first (the first and the latest dates are on the page)."""
        if not self.arxiv_id or not self.version or self.version > MAX_VERSIONS:
            return []
        return [Link(f"v{n}", external("https://arxiv.org/abs/", f"{self.arxiv_id}v{n}")) for n in
                range(1, self.version + 1)]  # fmt: skip

    @property
    def date_label(self) -> str:
        """arXiv dates are submissions; other sources give a publication date."""
        return "Submitted" if self.arxiv_id else "Published"

    @property
    def chat_path(self) -> str:
        return chat_path(paper=self.id)

    @property
    def fetch_references_path(self) -> str:
        return f"/papers/{quote(self.id, safe='/:')}/references/fetch"

    dock_label = "this paper"

    def meta(self, base_url: str) -> PageMeta:
        description = f"{byline(self.authors)}. {self.abstract[:200]}".strip()
        article = {
            "@context": "https://schema.org",
            "@type": "ScholarlyArticle",
            "headline": self.title,
            "name": self.title,
            "author": [{"@type": "Person", "name": n} for n in self.authors],
            "abstract": self.abstract,
            "url": base_url + self.path,
            "about": self.categories,
        }
        if self.published or self.year:
            article["datePublished"] = self.published.date().isoformat() if self.published else str(self.year)
        if self.doi:
            article["identifier"] = external("https://doi.org/", self.doi)
        crumbs = breadcrumbs(base_url, Link(SITE_NAME, "/"), Link("Papers", "/search"), Link(self.title, self.path))
        return PageMeta(title=self.title, description=description, path=self.path, json_ld=[article, crumbs])

    def to_markdown(self) -> str:
        lines = [f"# {md_escape(self.title)}", ""]
        lines.append(f"**Authors:** {', '.join(_author_markdown(a) for a in self.author_links) or 'unknown'}")
        if self.arxiv_id:
            lines.append(f"**arXiv:** {self.arxiv_id}" + (f" (v{self.version})" if self.version else ""))
        if self.published:
            dates = f"**{self.date_label}:** {self.published.date().isoformat()}"
            if self.updated and self.updated.date() != self.published.date():
                dates += f" · **Last revised:** {self.updated.date().isoformat()}"
            lines.append(dates)
        elif self.year:
            lines.append(f"**Published:** {self.year}")
        if self.categories:
            lines.append(f"**Categories:** {', '.join(self.categories)} (primary {self.categories[0]})")
        for label, value in (
            ("Venue", self.venue),
            ("Journal reference", self.journal_ref),
            ("Comments", self.comments),
        ):
            if value:
                lines.append(f"**{label}:** {md_escape(value)}")
        if self.doi:
            lines.append(f"**DOI:** {md_escape(self.doi)}")
        if self.cited_by_count is not None:
            lines.append(f"**Cited by:** {self.cited_by_count}")
        lines.append(f"**Page:** {self.path}")
        lines += ["", "## Abstract", "", md_escape(self.abstract) or "_No abstract available._"]
        if self.summary or self.topics:
            lines += ["", "## Summary (written by an LLM from the abstract)", ""]
            lines += [md_escape(self.summary)] if self.summary else []
            for label, value in (
                ("Topics", ", ".join(self.topics)),
                ("Type", self.paper_type),
                ("Field", self.research_field),
                ("What is new", self.novelty),
            ):
                if value:
                    lines += ["", f"**{label}:** {md_escape(value)}"]
        lines += ["", "## Links", ""] + [f"- [{link.label}]({link.href})" for link in self.links]
        lines.append(f"- Cite: [BibTeX](/papers/{self.id}.bib), [RIS](/papers/{self.id}.ris), "
                     f"[CSL-JSON](/papers/{self.id}.json)")
        if len(self.versions) > 1:
            lines.append("- arXiv versions: " + ", ".join(f"[{v.label}]({v.href})" for v in self.versions))
        if self.references:
            lines += ["", f"## References ({self.reference_count})", ""]
            lines += [
                (f"- [{md_escape(r.label)}]({r.href})" if r.href else f"- {md_escape(r.label)}")
                + (f" ({md_escape(r.detail)})" if r.detail else "")
                for r in self.references
            ]
            if self.not_held:
                lines += ["", f"{len(self.not_held)} of these references have an arXiv id and are not in this archive; "
                          f"a signed-in reader fetches them all at once: POST {self.fetch_references_path}."]
        if self.citing:
            lines += ["", f"## Cited by ({self.citing_count} in this archive)", ""]
            lines += [f"- [{md_escape(link.label)}]({link.href})" for link in self.citing]
        if self.similar:
            lines += ["", "## Similar papers (closest in meaning, in this archive)", ""]
            lines += [f"- [{md_escape(link.label)}]({link.href})" for link in self.similar]
        return "\n".join(lines) + "\n"


def _author_markdown(author: Author) -> str:
    name = f"[{md_escape(author.name)}]({author.href})" if author.href else md_escape(author.name)
    return name + (f" ({md_escape(author.institution)})" if author.institution else "")



def build_paper_page(archive: Archive, view: PaperView) -> PaperPage:
    paper = view.paper
    links = []
    if paper.arxiv_id:
        links += [
            Link("arXiv abstract", external("https://arxiv.org/abs/", paper.arxiv_id)),
            Link("PDF", external("https://arxiv.org/pdf/", paper.arxiv_id)),
        ]
    elif (
        paper.landing_url
        and paper.landing_url.startswith(("https://", "http://"))
        and "doi.org/" not in paper.landing_url
    ):
        links.append(Link("Publisher page", quote(paper.landing_url, safe=":/?&=#%+,;~@!$*'")))
    if paper.doi:
        links.append(Link("DOI", external("https://doi.org/", paper.doi)))
    if paper.openalex_id:
        links.append(Link("OpenAlex", external("https://openalex.org/", paper.openalex_id)))
    references = reference_items(archive, paper.id)
    citing = archive.cited_by(paper.id, MAX_CITING_SHOWN)
    authors = [
        Author(a.name, researcher_path(a.researcher_id, a.name) if a.researcher_id else None, a.institution)
        for a in view.authors
    ]
    return PaperPage(
        id=paper.id,
        arxiv_id=paper.arxiv_id,
        title=paper.title,
        path=paper_path(paper),
        authors=[a.name for a in view.authors],
        abstract=paper.abstract,
        categories=list(paper.categories),
        published=paper.published,
        updated=paper.updated,
        year=paper.year,
        version=paper.version,
        links=links,
        doi=paper.doi,
        venue=paper.venue,
        journal_ref=paper.journal_ref,
        comments=paper.comments,
        cited_by_count=paper.cited_by_count,
        summary=paper.summary,
        topics=list(paper.topics),
        paper_type=paper.paper_type,
        research_field=paper.research_field,
        novelty=paper.novelty,
        references=references.items,
        reference_count=references.total,
        not_held=references.not_held,
        author_links=authors,
        citing=[Link(p.title, paper_path(p)) for p in citing.papers],
        citing_count=citing.total,
        similar=_similar(archive, paper.id),
        graph=neighbourhood(paper.title, references, citing),
    )


def _similar(archive: Archive, paper_id: str) -> list[Link]:
    """The nearest papers by meaning; none (and the rest of the page) when the index cannot answer."""
    if archive.index is None:  # (a catalog read without its index)
        return []
    try:
        return [Link(p.title, paper_path(p)) for p, _score in archive.similar(paper_id, MAX_SIMILAR_SHOWN)]
    except IndexUnavailable:
        return []


def paper_page(archive: Archive, raw_id: str) -> PaperPage | None:
    """The page of the paper an id, a versioned id, an old-style id or an OpenAlex id names."""
    paper_id = archive.resolve_paper_id(raw_id)
    view = archive.paper_view(paper_id) if paper_id else None
    return build_paper_page(archive, view) if view else None
