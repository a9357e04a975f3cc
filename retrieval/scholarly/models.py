"""Catalog tables: the source of truth the vector index is rebuilt from."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timezone

from sqlalchemy import JSON, Column, DateTime, Index, String, UniqueConstraint, event, func
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def utc(moment: datetime | None) -> datetime | None:
    """A moment as the stores hand it back (SQLite's are naive; ours were written in UTC) in UTC; None stays None."""
    if moment is None:
        return None
    return moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def shown(moment: datetime | None, none: str = "never") -> str:
    """A stored moment as pages and mails show it ("2026-12-05 18:52 UTC"), or `none` when there is none."""
    return utc(moment).strftime("%Y-%m-%d %H:%M UTC") if moment is not None else none


def empty_list() -> list:
    """`default_factory=list`, but cheap: pydantic inspects a default factory's signature on every instance, and a
    builtin's signature costs ~60 us to fail to find (about 2 s of a demo load)."""
    return []


def empty_dict() -> dict:
    return {}


def normalise_name(name: str) -> str:
    """Lower case, accents and punctuation removed, spaces collapsed: 'Joseph E. Gonzalez' -> 'joseph e gonzalez'."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = re.sub(r"[^\w\s]", " ", text.lower())
    return re.sub(r"\s+", " ", text).strip()


MIN_TITLE_KEY_WORDS = 3
MIN_TITLE_KEY_CHARS = 16
MAX_TITLE_KEY_CHARS = 300


def title_key(title: str | None) -> str | None:
    """A title folded as `normalise_name` folds names, so the same work's title matches whoever printed it ("TripPy: A
    Triple Copy Strategy..." and "Trippy - a triple copy strategy..."); None for a title too short to tell one work
    from another (under three words or 16 characters), which matches nothing."""
    key = normalise_name(title or "").replace("_", " ")
    key = " ".join(key.split())[:MAX_TITLE_KEY_CHARS]
    return key if len(key) >= MIN_TITLE_KEY_CHARS and key.count(" ") >= MIN_TITLE_KEY_WORDS - 1 else None


def paper_block(paper_id: str) -> str:
    """A paper's block of ids: its id but the last four characters (an arXiv month's ids by the first of their five
    digits, an old-style id's archive and months, an OpenAlex work's id but four digits), so at most 10,000 papers
    each. The sitemap's parts are cut by blocks and read from the (id_block, id) index, never through an OFFSET."""
    return paper_id[:-4]


def _id_block(context) -> str:
    return paper_block(context.get_current_parameters()["id"])


class Paper(SQLModel, table=True):
    __tablename__ = "papers"

    id: str = Field(primary_key=True, max_length=200, description="arXiv id when there is one, else e.g. openalex:W123")
    arxiv_id: str | None = Field(default=None, index=True, unique=True)
    openalex_id: str | None = Field(default=None, index=True, unique=True)
    doi: str | None = Field(default=None, index=True)
    title: str
    abstract: str = ""
    categories: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    primary_category: str | None = Field(default=None, index=True)
    published: datetime | None = Field(default=None, index=True)
    updated: datetime | None = None
    year: int | None = Field(default=None, index=True, description="publication year, also when no exact date is known")
    version: int | None = None
    landing_url: str | None = None
    pdf_url: str | None = None
    journal_ref: str | None = None
    comments: str | None = None
    license: str | None = None
    venue: str | None = None
    cited_by_count: int | None = None
    # Filled later by LLM analysis (the reference site keeps these per paper).
    summary: str | None = None
    topics: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    paper_type: str | None = None
    research_field: str | None = None
    novelty: str | None = None
    significance_score: int | None = Field(default=None, description="1-10, the LLM's estimate")
    analysed: bool = False
    all_authors_matched: bool = False
    sources: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    id_block: str | None = Field(default=None, sa_column=Column(String(200), default=_id_block),
                                 description="`paper_block(id)`, set when the row is written")  # fmt: skip
    title_key: str | None = Field(default=None, description="`title_key(title)`: a reference listed by title alone "
                                  "finds the paper by it")  # fmt: skip


Index("ix_papers_id_block", Paper.id_block, Paper.id)
Index("ix_papers_id_category", Paper.id, Paper.primary_category)  # the fields of a profile's papers, index only
Index("ix_papers_title_key", Paper.title_key)
# DOIs are compared in lower case (a reference list's, a Zotero item's, a record's: each writes it its own way)
Index("ix_papers_doi_lower", func.lower(Paper.doi))

# Newest first (`retrieval.scholarly.paging.newest_first`) read from an index, for every paper and within one primary
# category: a page deep in a million-paper listing walks index entries, not the table, and sorts nothing.
_NEWEST = (Paper.published.is_(None), Paper.published.desc(), Paper.year.desc(), Paper.id)
Index("ix_papers_newest", *_NEWEST)
Index("ix_papers_category_newest", Paper.primary_category, *_NEWEST)


class Researcher(SQLModel, table=True):
    __tablename__ = "researchers"

    id: int | None = Field(default=None, primary_key=True)
    identity_key: str = Field(unique=True, index=True, description="openalex:A.., orcid:.., or name:<normalised name>")
    name: str
    name_key: str | None = Field(default=None, index=True, description="normalised name, for matching by name")
    openalex_id: str | None = Field(default=None, index=True)
    orcid: str | None = Field(default=None, index=True)
    s2_id: str | None = Field(default=None, index=True)
    aliases: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    paper_count: int = Field(default=0, sa_column_kwargs={"server_default": "0"},
                             description="papers here, kept at every commit (retrieval.scholarly.counts)")  # fmt: skip


class Institution(SQLModel, table=True):
    __tablename__ = "institutions"

    id: int | None = Field(default=None, primary_key=True)
    ror_id: str | None = Field(default=None, unique=True, index=True)
    openalex_id: str | None = Field(default=None, unique=True, index=True)
    name: str = Field(index=True)
    aliases: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    acronyms: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    country_code: str | None = None
    country_name: str | None = None
    city: str | None = None
    types: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    established: int | None = None
    website: str | None = None
    parent_rors: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    child_rors: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    search_key: str | None = Field(
        default=None, description="name, aliases and acronyms normalised (no accents or case), for finding by words"
    )
    paper_count: int = Field(default=0, sa_column_kwargs={"server_default": "0"},
                             description="papers here, kept at every commit (retrieval.scholarly.counts)")  # fmt: skip

    def searchable(self) -> str:
        return normalise_name(" ".join([self.name, *(self.aliases or []), *(self.acronyms or [])]))


# The "most papers" lists (most first, then by name) read from an index, any page deep.
Index("ix_researchers_most_papers", Researcher.paper_count.desc(), Researcher.name)
Index("ix_institutions_most_papers", Institution.paper_count.desc(), Institution.name)


class CatalogVersion(SQLModel, table=True):
    """How many times a kind of row was written, so caches built from those rows (the affiliation resolver) know
    when they are stale, whichever process wrote."""

    __tablename__ = "catalog_versions"

    subject: str = Field(primary_key=True, max_length=40)
    version: int = 0


class CatalogCount(SQLModel, table=True):
    """A count of the catalog kept as it is written (`retrieval.scholarly.counts`), so pages never count a table:
    papers, researchers, institutions, authorships, citations, the researchers and institutions with papers here
    (`researchers_with_papers`, ...), papers per primary category (`category:cs.CL`) and the sitemap's pages in each
    block of ids (`block:papers:2301.0`, `block:researchers:12`)."""

    __tablename__ = "catalog_counts"

    name: str = Field(primary_key=True, max_length=250)
    value: int = 0


VERSIONED = {Institution: "institutions"}  # row type -> the subject whose version its writes bump


@event.listens_for(Institution, "before_insert")
@event.listens_for(Institution, "before_update")
def _keep_search_key(mapper, connection, target: Institution) -> None:
    target.search_key = target.searchable()


class ResearcherTerm(SQLModel, table=True):
    """What finds a researcher without reading every name: each word of the normalised name (`w:<word>`) and each of
    its other names, normalised (`a:<name>`), with the researcher's paper count beside it, so the researchers with a
    term come most papers first from one index range. Kept as researchers are written (`retrieval.scholarly.terms`)
    and as their papers are counted (`retrieval.scholarly.counts`)."""

    __tablename__ = "researcher_terms"

    term: str = Field(primary_key=True, max_length=250)
    researcher_id: int = Field(primary_key=True)
    papers: int = Field(default=0, sa_column_kwargs={"server_default": "0"},
                        description="the researcher's `paper_count`, kept with it")  # fmt: skip


Index("ix_researcher_terms_most_papers", ResearcherTerm.term, ResearcherTerm.papers.desc(),
      ResearcherTerm.researcher_id)  # fmt: skip
Index("ix_researcher_terms_researcher", ResearcherTerm.researcher_id)  # a researcher's terms, to rewrite or recount


class Authorship(SQLModel, table=True):
    __tablename__ = "authorships"
    __table_args__ = (UniqueConstraint("paper_id", "position"),)

    id: int | None = Field(default=None, primary_key=True)
    paper_id: str = Field(foreign_key="papers.id", index=True)
    position: int = Field(description="0-based order in the author list")
    raw_name: str
    researcher_id: int | None = Field(default=None, foreign_key="researchers.id", index=True)
    match_method: str | None = Field(
        default=None, description="openalex, orcid, s2, name+coauthors, name+affiliation, name or name?"
    )
    match_confidence: float | None = None
    raw_affiliation: str | None = None
    institution_id: int | None = Field(default=None, foreign_key="institutions.id")


# An institution's members and their papers there read from this index alone (a large one has tens of thousands).
Index("ix_authorships_institution_members", Authorship.institution_id, Authorship.researcher_id, Authorship.paper_id)


class InstitutionPaper(SQLModel, table=True):
    """Each paper an institution has (one of its authorships there), with the paper's date, year and primary category
    beside it, so an institution's page is read from one range of an index: its papers newest first, a page deep,
    and its fields counted, without looking up each of its papers (tens of thousands at a large one, each a read
    from disk on a cold cache). Derived from the authorships and papers, kept as they are written
    (`retrieval.scholarly.counts`), rebuilt by `Catalog.recount`."""

    __tablename__ = "institution_papers"

    institution_id: int = Field(primary_key=True)
    paper_id: str = Field(primary_key=True, max_length=200, index=True)
    published: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))  # as the paper's
    year: int | None = None
    primary_category: str | None = Field(default=None, max_length=200)


# An institution's papers newest first (as `paging.newest_first` orders papers), and within one primary category.
INSTITUTION_NEWEST = (InstitutionPaper.published.is_(None), InstitutionPaper.published.desc(),
                      InstitutionPaper.year.desc(), InstitutionPaper.paper_id)  # fmt: skip
Index("ix_institution_papers_newest", InstitutionPaper.institution_id, *INSTITUTION_NEWEST)
Index("ix_institution_papers_category", InstitutionPaper.institution_id, InstitutionPaper.primary_category,
      *INSTITUTION_NEWEST)  # fmt: skip


class Citation(SQLModel, table=True):
    __tablename__ = "citations"
    # A paper that arrives finds the edges waiting for it by each of its ids and its title key, from an index each
    __table_args__ = (
        UniqueConstraint("citing_id", "cited_key"),
        Index("ix_citations_cited", "cited_id"),
        Index("ix_citations_cited_arxiv", "cited_arxiv_id", "cited_id"),
        Index("ix_citations_cited_doi", "cited_doi", "cited_id"),
        Index("ix_citations_cited_title_key", "cited_title_key", "cited_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    citing_id: str = Field(foreign_key="papers.id", index=True)
    cited_key: str = Field(description="openalex:W.., doi:.., or arxiv:..; the cited work may be outside the corpus")
    cited_id: str | None = Field(
        default=None, foreign_key="papers.id", description="set when the cited work is in the corpus"
    )
    cited_openalex_id: str | None = Field(default=None, index=True)
    cited_doi: str | None = Field(default=None, description="lower case, as DOIs are compared")
    cited_arxiv_id: str | None = None
    cited_title: str | None = None
    cited_title_key: str | None = Field(default=None, description="`title_key(cited_title)`")
    cited_title_source: str | None = Field(default=None, description="whose title it is: openalex, s2, pdf (the "
                                           "citing paper's own list), or another record's source")  # fmt: skip
    # As the citing paper's own reference list gives the work (`ingest.references`), when it was read from its PDF
    cited_authors: str | None = Field(default=None, description="the names, '; ' between them")
    cited_year: int | None = None
    cited_venue: str | None = None
    reference: str | None = Field(default=None, description="the list's entry as printed")


class LedgerEntry(SQLModel, table=True):
    """What an ingest step has done with one record, so reruns skip or resume."""

    __tablename__ = "ingest_ledger"

    stage: str = Field(primary_key=True, description="e.g. catalog:arxiv_atom, index")
    key: str = Field(primary_key=True, description="the record's key within the stage")
    content_hash: str
    at: datetime = Field(default_factory=utcnow)


# What was indexed since a moment (`Catalog.ledger_since`: the saved questions' runs look at those papers only).
Index("ix_ingest_ledger_stage_at", LedgerEntry.stage, LedgerEntry.at)


class HarvestCursor(SQLModel, table=True):
    """Where a paged harvest stands (an offset, a resumption token, a cursor, a last datestamp), committed
    together with the records of the page it follows, so an interrupted run resumes at the right page."""

    __tablename__ = "harvest_cursors"

    name: str = Field(primary_key=True, max_length=300, description="e.g. arxiv_api:<query hash>, oai_last:cs")
    state: dict = Field(default_factory=empty_dict, sa_column=Column(JSON, nullable=False))
    at: datetime = Field(default_factory=utcnow)
