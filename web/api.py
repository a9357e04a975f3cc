"""The JSON API: papers, researchers, institutions and search, described by /openapi.json."""

from __future__ import annotations

from datetime import date, datetime

from fastapi import APIRouter, HTTPException, Path, Query
from pydantic import BaseModel, Field

from pages.base import citation_path, institution_path, paper_path, researcher_path
from pages.people import institution_page, researcher_page
from retrieval.vectors.index import Filters
from web.dependencies import Deps, Guarded, Viewer, routes_with
from web.http import WebDeps


class PaperOut(BaseModel):
    id: str = Field(description="Catalog id: the arXiv id, or openalex:W<id>")
    arxiv_id: str | None
    title: str
    authors: list[str]
    abstract: str
    categories: list[str]
    published: datetime | None
    updated: datetime | None
    year: int | None
    doi: str | None
    cited_by_count: int | None
    summary: str | None = Field(description="Written by an LLM from the abstract, when analysed")
    topics: list[str]
    url: str = Field(description="The paper's page on this site")
    bibtex_url: str = Field(description="The paper as BibTeX (arXiv's conventions for arXiv papers)")
    ris_url: str = Field(description="The paper as RIS")
    csl_url: str = Field(description="The paper as CSL-JSON (Zotero, Pandoc, citeproc)")


class Counted(BaseModel):
    name: str
    count: int
    url: str | None = None


class ResearcherOut(BaseModel):
    id: int
    name: str
    url: str
    paper_count: int
    positions: dict[str, int] = Field(description="first/middle/last/sole, across fully matched papers only")
    fully_matched_papers: int
    fields: list[Counted]
    coauthors: list[Counted]
    institutions: list[Counted]
    external_ids: list[str]
    papers: list[str] = Field(description="Paper page paths, newest first (first page of 24)")


class InstitutionOut(BaseModel):
    id: int
    name: str
    url: str
    ror_id: str | None
    location: str
    types: list[str]
    paper_count: int
    researcher_count: int
    fields: list[Counted]
    researchers: list[Counted]
    parents: list[Counted]
    children: list[Counted]


class SearchHitOut(BaseModel):
    id: str
    title: str
    url: str
    year: int | None
    score: float
    sentences: list[str]
    matched: str = Field(description="author: a paper of a researcher the query names (these come first); "
                                     "abstract: its title and abstract match the query; passage: a passage of its "
                                     "full text does (on `page`), asked when no abstract clears the floor")  # fmt: skip
    page: int | None = Field(None, description="For `passage`: the PDF page of that passage (1-based)")
    relevant: bool = Field(description="Clears the relevance floor. The hits that do come first; the others are "
                                       "weaker matches, listed after them")  # fmt: skip


class NamedResearcherOut(BaseModel):
    id: int
    name: str
    url: str


class SearchOut(BaseModel):
    query: str
    note: str | None = Field(description="Why nothing matched, or how a name the archive spells out was read "
                                         "(Read \"GRPO\" as \"Group Relative Policy Optimization\", ...)")  # fmt: skip
    researchers: list[NamedResearcherOut] = Field(description="The researchers the query names (namesakes apart)")
    weak: bool = Field(description="No hit clears the relevance floor: the archive does not answer this well, and "
                                   "the hits are only the closest matches")  # fmt: skip
    hits: list[SearchHitOut]


class PassageHitOut(BaseModel):
    id: str = Field(description="The paper's catalog id")
    title: str
    url: str
    page: int | None = Field(description="Page of the PDF the passage starts on (1-based)")
    section: str | None
    text: str
    score: float
    relevant: bool = Field(description="Clears the relevance floor for passages")


class PassagesOut(BaseModel):
    query: str
    note: str | None = Field(description="Why nothing matched, or how a name the archive spells out was read")
    weak: bool = Field(description="No passage clears the relevance floor")
    hits: list[PassageHitOut]


class SupportOut(BaseModel):
    id: str = Field(description="The paper's catalog id")
    title: str
    url: str
    found: bool = Field(description="Every figure and name of the sentence is in the paper's text and a sentence "
                                    "there says nearly the same (the encoder's similarity, calibrated on judged "
                                    "claims): the terms and figures are there, not that the reasoning holds")
    support: str = Field(description="The paper's sentence (or two neighbours) closest to the sentence checked")
    page: int | None = Field(description="The PDF page the support stands on; null: the abstract")
    closeness: float = Field(description="The encoder's cosine between the sentence and its support")
    missing: list[str] = Field(description="Figures and names of the sentence that the paper's text does not hold")


def _counted(items) -> list[Counted]:
    return [Counted(name=i.label, count=i.count, url=i.href) for i in items]


router = APIRouter(prefix="/api", tags=["api"], route_class=Guarded)


def make_api(deps: WebDeps) -> APIRouter:
    """The JSON API's routes, each handed `deps`."""
    api = routes_with(deps)
    api.include_router(router)
    return api


@router.get("/papers/{paper_id:path}", response_model=PaperOut, responses={404: {"description": "Unknown paper"}},
            name="get_paper")
def api_paper(deps: Deps, paper_id: str = Path(max_length=300)) -> PaperOut:
    resolved = deps.archive.resolve_paper_id(paper_id)
    view = deps.archive.paper_view(resolved) if resolved else None
    if view is None:
        raise HTTPException(404, "no such paper in this archive")
    p = view.paper
    return PaperOut(
        id=p.id, arxiv_id=p.arxiv_id, title=p.title, authors=[a.name for a in view.authors], abstract=p.abstract,
        categories=list(p.categories), published=p.published, updated=p.updated, year=p.year, doi=p.doi,
        cited_by_count=p.cited_by_count, summary=p.summary, topics=list(p.topics), url=paper_path(p),
        bibtex_url=citation_path(p.id, "bib"), ris_url=citation_path(p.id, "ris"),
        csl_url=citation_path(p.id, "json"),
    )  # fmt: skip


@router.get("/researchers/{researcher_id}", response_model=ResearcherOut, responses={404: {"description": "Unknown"}},
            name="get_researcher")
def api_researcher(deps: Deps, researcher_id: int = Path(ge=1, le=2**62)) -> ResearcherOut:
    page = researcher_page(deps.archive, researcher_id)
    if page is None:
        raise HTTPException(404, "no such researcher")
    return ResearcherOut(
        id=page.id, name=page.name, url=researcher_path(page.id, page.name), paper_count=page.paper_count,
        positions=page.positions, fully_matched_papers=page.matched_papers, fields=_counted(page.fields),
        coauthors=_counted(page.coauthors), institutions=_counted(page.institutions),
        external_ids=[link.href for link in page.external_ids], papers=[p.path for p in page.papers],
    )  # fmt: skip


@router.get("/institutions/{institution}", response_model=InstitutionOut, responses={404: {"description": "Unknown"}},
            name="get_institution")
def api_institution(deps: Deps, institution: str = Path(max_length=300, description="Id, ROR id, name or acronym")):
    found = deps.archive.find_institution(institution)
    page = institution_page(deps.archive, found.institution.id) if found.institution else None
    if page is None:
        raise HTTPException(404, "no such institution")
    return InstitutionOut(
        id=page.id, name=page.name, url=institution_path(page.id, page.name), ror_id=page.ror_id,
        location=page.location, types=page.types, paper_count=page.paper_count,
        researcher_count=page.researcher_count, fields=_counted(page.fields),
        researchers=_counted(page.researchers), parents=_counted(page.parents), children=_counted(page.children),
    )  # fmt: skip


LIMITED = {429: {"description": "Too many searches from this address: wait (Retry-After)"},
           503: {"description": "Busy with other anonymous searches: try again (Retry-After)"}}  # `web.guards`


@router.get("/search", response_model=SearchOut, responses=LIMITED, name="search_papers")
def api_search(
    deps: Deps,
    viewer: Viewer,
    q: str = Query(max_length=2000, description="What to look for"),
    limit: int = Query(10, ge=1, le=50),
    category: str | None = Query(None, max_length=40, pattern=r"^[A-Za-z.-]+$"),
    published_after: date | None = None,
    published_before: date | None = None,
) -> SearchOut:
    filters = Filters(categories=(category,) if category else (), published_from=published_after,
                      published_to=published_before, viewer=viewer)  # signed in: own uploads too
    result = deps.archive.search(q, filters, limit=limit, sentences=1)
    hits = [
        SearchHitOut(
            id=h.paper.id,
            title=h.paper.title,
            url=paper_path(h.paper),
            year=h.paper.year,
            score=round(float(h.score), 6),
            sentences=list(h.sentences), matched=h.kind, page=h.page, relevant=h.clears,
        )  # fmt: skip
        for h in result.hits
    ]
    named = [
        NamedResearcherOut(id=r.id, name=r.name, url=researcher_path(r.id, r.name))
        for r in deps.archive.researchers_by_ids(list(result.people)).values()
    ]
    return SearchOut(query=result.query, note=result.note, researchers=named, weak=result.weak, hits=hits)


@router.get("/passages", response_model=PassagesOut, responses={404: {"description": "Unknown paper"}, **LIMITED},
            name="search_passages")
def api_passages(
    deps: Deps,
    viewer: Viewer,
    q: str = Query(max_length=2000, description="What to look for in the papers' full text"),
    limit: int = Query(10, ge=1, le=50),
    paper: str | None = Query(None, max_length=100, description="Only this paper's passages"),
) -> PassagesOut:
    paper_ids = ()
    if paper:
        resolved = deps.archive.resolve_paper_id(paper, viewer)
        if resolved is None:
            raise HTTPException(404, "no such paper")
        paper_ids = (resolved,)
    result = deps.archive.passages(q, Filters(paper_ids=paper_ids, viewer=viewer), limit=limit)
    hits = [
        PassageHitOut(id=h.paper.id, title=h.paper.title, url=paper_path(h.paper), page=h.page, section=h.section,
                      text=h.text, score=round(float(h.score), 6), relevant=h.clears)  # fmt: skip
        for h in result.hits
    ]
    return PassagesOut(query=result.query, note=result.note, weak=result.weak, hits=hits)


@router.get("/support", response_model=SupportOut, responses={404: {"description": "Unknown paper"}, **LIMITED},
            name="check_support")
def api_support(
    deps: Deps,
    viewer: Viewer,
    paper: str = Query(max_length=100, description="The paper's id"),
    sentence: str = Query(min_length=1, max_length=2000, description="One claim, checked against the paper's text"),
) -> SupportOut:
    """Whether one paper's own text (its abstract, its passages nearest the sentence) supports a sentence, as the
    chat checks each cited sentence of its answers; no model judges it."""
    supported = deps.archive.support(paper, sentence, viewer)
    if supported is None:
        raise HTTPException(404, "no such paper")
    verdict = supported.verdict
    return SupportOut(id=supported.paper.id, title=supported.paper.title, url=paper_path(supported.paper),
                      found=verdict.found, support=verdict.support, page=supported.page,
                      closeness=round(verdict.closeness, 4), missing=verdict.missing)  # fmt: skip
