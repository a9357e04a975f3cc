"""Citations in the catalog: which papers of the archive cite a paper."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func
from sqlmodel import select

from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Citation, Paper
from retrieval.scholarly.paging import newest_first
from retrieval.scholarly.records import arxiv_id_of


@dataclass(frozen=True)
class CitedBy:
    papers: list[Paper]
    total: int
    outside_count: int | None  # cited_by_count from OpenAlex/S2, covering papers outside this archive


def cited_by(catalog: Catalog, paper_id: str, limit: int = 50) -> CitedBy:
    """Papers of the archive that cite this one (newest first), and the wider count the sources give."""
    with catalog.session() as session:
        citing = select(Citation.citing_id).where(Citation.cited_id == paper_id)
        total = session.exec(
            select(func.count(func.distinct(Citation.citing_id))).where(Citation.cited_id == paper_id)
        ).one()
        papers = session.exec(select(Paper).where(Paper.id.in_(citing)).order_by(*newest_first()).limit(limit)).all()
        paper = session.get(Paper, paper_id)
    return CitedBy(list(papers), total, paper.cited_by_count if paper else None)


def not_held(references: list[Citation]) -> list[str]:
    """The arXiv ids a paper's references name that this archive does not hold, in the list's order, each once
    (an edge is linked to its paper when either arrives: `retrieval.scholarly.citation_edges.link_cited`)."""
    found: dict[str, None] = {}
    for citation in references:
        if citation.cited_id is None and citation.cited_arxiv_id and (arxiv_id := arxiv_id_of(citation.cited_arxiv_id)):
            found[arxiv_id] = None
    return list(found)
