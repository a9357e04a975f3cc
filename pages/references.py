"""A paper's references as its page lists them (each linked to our page or its public address, with what the citing
paper's list says of it) and its citation neighbourhood drawn from them, for the paper page and the chat's card."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from pages.base import external, paper_path
from pages.graphs import Graph, Work, paper_neighbourhood
from retrieval.archive import Archive
from retrieval.scholarly.citations import CitedBy, not_held
from retrieval.scholarly.models import Paper
from retrieval.scholarly.records import arxiv_id_of

MAX_REFERENCES_SHOWN = 50
MAX_CITING_SHOWN = 20


@dataclass(frozen=True)
class ReferenceRow:
    """One entry of a paper's page's reference list (what `ingest.references` parsed, as the page shows it)."""

    label: str
    href: str | None  # our page when the cited work is in the corpus, else its public address
    paper: Paper | None = None  # the cited paper, when it is in the corpus
    detail: str | None = None  # what the citing paper's list says besides the title: "Wen et al., 2016. In EACL"
    leaves: bool = False  # the link leaves this site (a DOI's or OpenAlex's page), said beside it
    source: str | None = None  # whose title this is, in words: "OpenAlex", "the PDF's reference list", ...
    printed: str | None = None  # the citing paper's list's entry as printed, when it was read from its PDF


TITLE_SOURCES = {"openalex": "OpenAlex", "s2": "Semantic Scholar", "pdf": "the paper's own reference list"}


def _reference(citation, in_corpus: dict) -> ReferenceRow:
    said = dict(detail=_listed_as(citation), printed=citation.reference,
                source=TITLE_SOURCES.get(citation.cited_title_source or "") if citation.cited_title else None)
    if citation.cited_id and citation.cited_id in in_corpus:
        target = in_corpus[citation.cited_id]
        return ReferenceRow(target.title, paper_path(target), target, **{**said, "source": None})  # (its own title)
    if citation.cited_arxiv_id and (arxiv_id := arxiv_id_of(citation.cited_arxiv_id)):
        # not held: our page for the id, where a signed-in reader fetches it (`web.http.not_found`)
        return ReferenceRow(citation.cited_title or f"arXiv:{arxiv_id}", f"/papers/{quote(arxiv_id)}", **said)
    if citation.cited_doi:
        return ReferenceRow(citation.cited_title or f"doi:{citation.cited_doi}",
                         external("https://doi.org/", citation.cited_doi), leaves=True, **said)  # fmt: skip
    if citation.cited_openalex_id:
        return ReferenceRow(citation.cited_title or f"OpenAlex {citation.cited_openalex_id}",
                         external("https://openalex.org/", citation.cited_openalex_id), leaves=True,
                         **said)  # fmt: skip
    if citation.cited_title:  # listed with no id: not linked
        return ReferenceRow(citation.cited_title, None, **said)
    return ReferenceRow(citation.reference or citation.cited_key, None)  # an entry read with no title: as printed


def _listed_as(citation) -> str | None:
    """"Wen et al., 2016. In EACL": the first authors' surnames, the year and the venue the citing paper's own
    reference list gives."""
    surnames = [name.split()[-1] for name in (citation.cited_authors or "").split("; ") if name.strip()]
    who = " and ".join(surnames) if len(surnames) <= 2 else f"{surnames[0]} et al."
    said = ", ".join(part for part in (who, str(citation.cited_year or "")) if part)
    return ". ".join(part for part in (said, citation.cited_venue or "") if part) or None


@dataclass(frozen=True)
class References:
    items: list[ReferenceRow]  # the first works the paper cites, in its list's order
    total: int  # how many references are known in all
    not_held: list[str]  # the arXiv ids among all of them that this archive does not hold (a reader may fetch them)


def reference_items(archive: Archive, paper_id: str, limit: int = MAX_REFERENCES_SHOWN) -> References:
    """The first `limit` works a paper cites, each linked to our page or its public address; how many references
    are known in all, and which of them could be fetched from arXiv."""
    citations = archive.references(paper_id)
    shown = citations[:limit]
    in_corpus = archive.papers([c.cited_id for c in shown if c.cited_id])
    return References([_reference(c, in_corpus) for c in shown], len(citations), not_held(citations))


def neighbourhood(title: str, references: References, citing: CitedBy) -> Graph | None:
    """The paper's citation neighbourhood drawn (`pages.graphs`) from what its page lists."""
    return paper_neighbourhood(title, [_work(r) for r in references.items],
                               [Work(p.title, paper_path(p), "held", p.cited_by_count) for p in citing.papers],
                               references.total, citing.total)  # fmt: skip


def neighbourhood_card(archive: Archive, paper_id: str, references: References | None = None,
                       citing: CitedBy | None = None) -> tuple[Graph, str] | None:  # fmt: skip
    """The drawing and the address that opens it on the paper's page (for the chat's card), reading only what the
    caller has not already read (never the page's similar papers: no search)."""
    paper = archive.papers([paper_id]).get(paper_id)
    if paper is None:
        return None
    references = references or reference_items(archive, paper_id)
    citing = citing or archive.cited_by(paper_id, MAX_CITING_SHOWN)
    graph = neighbourhood(paper.title, references, citing)
    return (graph, f"{paper_path(paper)}#neighbourhood") if graph else None


def _work(reference: ReferenceRow) -> Work:
    if reference.paper is not None:
        return Work(reference.label, reference.href, "held", reference.paper.cited_by_count)
    return Work(reference.label, reference.href, "leaves" if reference.leaves else "not-held")
