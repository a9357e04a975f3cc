"""Writing normalised records into the catalog, merging what several sources say about one thing."""

from __future__ import annotations

import re
import unicodedata

from sqlmodel import Session, select

from retrieval.models import Authorship, Citation, Institution, Paper, Researcher
from retrieval.records import AuthorRecord, InstitutionRecord, PaperRecord, ResearcherRecord

_MERGED_SCALARS = (
    "arxiv_id", "openalex_id", "doi", "title", "abstract", "primary_category", "published", "updated", "year",
    "version", "landing_url", "pdf_url", "journal_ref", "comments", "license", "venue", "cited_by_count",
)  # fmt: skip


def normalise_name(name: str) -> str:
    """Lower case, accents and punctuation removed, spaces collapsed: 'Joseph E. Gonzalez' -> 'joseph e gonzalez'."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = re.sub(r"[^\w\s]", " ", text.lower())
    return re.sub(r"\s+", " ", text).strip()


def _find_paper(session: Session, record: PaperRecord) -> Paper | None:
    paper = session.get(Paper, record.id)
    if paper is None and record.arxiv_id:
        paper = session.exec(select(Paper).where(Paper.arxiv_id == record.arxiv_id)).first()
    if paper is None and record.openalex_id:
        paper = session.exec(select(Paper).where(Paper.openalex_id == record.openalex_id)).first()
    return paper


# arXiv is the authority for a paper's bibliographic facts; other sources fill gaps and own a few fields.
_OWNED = {"openalex": {"openalex_id", "cited_by_count"}}


def _authoritative(source: str, field: str) -> bool:
    return source.startswith("arxiv") or field in _OWNED.get(source, ())


def upsert_paper(session: Session, record: PaperRecord) -> Paper:
    """Insert or merge a paper: an authoritative source overwrites, the others only fill gaps."""
    paper = _find_paper(session, record)
    if paper is None:
        paper = Paper(id=record.id, title=record.title)
    for name in _MERGED_SCALARS:
        value = getattr(record, name)
        if value not in (None, "") and (getattr(paper, name) in (None, "") or _authoritative(record.source, name)):
            setattr(paper, name, value)
    if record.categories and (not paper.categories or _authoritative(record.source, "categories")):
        paper.categories = list(record.categories)
    if record.source not in paper.sources:
        paper.sources = [*paper.sources, record.source]
    session.add(paper)
    session.flush()
    if record.authors:
        _replace_authorships(session, paper, record.authors)
    for ref in record.references:
        _upsert_citation(session, paper.id, ref.openalex_id, ref.doi, ref.arxiv_id, ref.title)
    return paper


def _has_identity(authors: list[AuthorRecord]) -> bool:
    return any(a.openalex_id or a.orcid or a.s2_id for a in authors)


def _replace_authorships(session: Session, paper: Paper, authors: list[AuthorRecord]) -> None:
    existing = session.exec(select(Authorship).where(Authorship.paper_id == paper.id)).all()
    # A name-only author list never replaces one that carries external identities.
    if existing and not _has_identity(authors) and any(a.match_method != "name" for a in existing):
        return
    for row in existing:
        session.delete(row)
    session.flush()
    matched = True
    for position, author in enumerate(authors):
        researcher, method, confidence = _resolve_researcher(session, author)
        affiliation = author.affiliations[0] if author.affiliations else None
        institution = _resolve_institution(session, affiliation) if affiliation else None
        session.add(
            Authorship(
                paper_id=paper.id,
                position=position,
                raw_name=author.name,
                researcher_id=researcher.id,
                match_method=method,
                match_confidence=confidence,
                raw_affiliation=affiliation.raw if affiliation else None,
                institution_id=institution.id if institution else None,
            )
        )
        matched = matched and researcher.id is not None
    paper.all_authors_matched = matched
    session.add(paper)


def _resolve_researcher(session: Session, author: AuthorRecord) -> tuple[Researcher, str, float]:
    """External ids first; a name alone gives a low-confidence match (refined by the entities work)."""
    for column, value, method, confidence in (
        (Researcher.openalex_id, author.openalex_id, "openalex", 1.0),
        (Researcher.orcid, author.orcid, "orcid", 1.0),
        (Researcher.s2_id, author.s2_id, "s2", 1.0),
    ):
        if value:
            found = session.exec(select(Researcher).where(column == value)).first()
            if found:
                return found, method, confidence
    if author.openalex_id:
        key, method, confidence = f"openalex:{author.openalex_id}", "openalex", 1.0
    elif author.orcid:
        key, method, confidence = f"orcid:{author.orcid}", "orcid", 1.0
    else:
        key, method, confidence = f"name:{normalise_name(author.name)}", "name", 0.5
    researcher = session.exec(select(Researcher).where(Researcher.identity_key == key)).first()
    if researcher is None:
        researcher = Researcher(identity_key=key, name=author.name)
    researcher.openalex_id = researcher.openalex_id or author.openalex_id
    researcher.orcid = researcher.orcid or author.orcid
    researcher.s2_id = researcher.s2_id or author.s2_id
    session.add(researcher)
    session.flush()
    return researcher, method, confidence


def _resolve_institution(session: Session, affiliation) -> Institution | None:
    found = None
    if affiliation.ror_id:
        found = session.exec(select(Institution).where(Institution.ror_id == affiliation.ror_id)).first()
    if found is None and affiliation.institution_openalex_id:
        found = session.exec(
            select(Institution).where(Institution.openalex_id == affiliation.institution_openalex_id)
        ).first()
    if found is None and affiliation.name and (affiliation.ror_id or affiliation.institution_openalex_id):
        found = Institution(
            name=affiliation.name,
            ror_id=affiliation.ror_id,
            openalex_id=affiliation.institution_openalex_id,
            country_code=affiliation.country_code,
        )
    if found is not None:
        found.openalex_id = found.openalex_id or affiliation.institution_openalex_id
        session.add(found)
        session.flush()
    return found


def _upsert_citation(session: Session, citing_id: str, openalex_id, doi, arxiv_id, title) -> None:
    key = f"openalex:{openalex_id}" if openalex_id else f"arxiv:{arxiv_id}" if arxiv_id else f"doi:{doi}"
    row = session.exec(select(Citation).where(Citation.citing_id == citing_id, Citation.cited_key == key)).first()
    if row is None:
        row = Citation(citing_id=citing_id, cited_key=key)
    row.cited_openalex_id = row.cited_openalex_id or openalex_id
    row.cited_doi = row.cited_doi or doi
    row.cited_arxiv_id = row.cited_arxiv_id or arxiv_id
    row.cited_title = row.cited_title or title
    session.add(row)


def link_citations(session: Session) -> int:
    """Point citation edges at papers now in the corpus; returns how many edges changed."""
    changed = 0
    by_openalex = dict(session.exec(select(Paper.openalex_id, Paper.id).where(Paper.openalex_id.is_not(None))).all())
    by_arxiv = dict(session.exec(select(Paper.arxiv_id, Paper.id).where(Paper.arxiv_id.is_not(None))).all())
    for row in session.exec(select(Citation).where(Citation.cited_id.is_(None))).all():
        target = by_openalex.get(row.cited_openalex_id) or by_arxiv.get(row.cited_arxiv_id)
        if target and target != row.citing_id:
            row.cited_id = target
            session.add(row)
            changed += 1
    return changed


def upsert_institution(session: Session, record: InstitutionRecord) -> Institution:
    found = None
    if record.ror_id:
        found = session.exec(select(Institution).where(Institution.ror_id == record.ror_id)).first()
    if found is None and record.openalex_id:
        found = session.exec(select(Institution).where(Institution.openalex_id == record.openalex_id)).first()
    if found is None:
        found = Institution(name=record.name)
    for name in ("name", "ror_id", "openalex_id", "country_code", "country_name", "city", "established", "website"):
        value = getattr(record, name)
        if value not in (None, ""):
            setattr(found, name, value)
    for name in ("aliases", "acronyms", "types", "parent_rors", "child_rors"):
        merged = list(dict.fromkeys([*getattr(found, name), *getattr(record, name)]))
        setattr(found, name, merged)
    session.add(found)
    session.flush()
    return found


def upsert_researcher(session: Session, record: ResearcherRecord) -> Researcher:
    author = AuthorRecord(name=record.name, openalex_id=record.openalex_id, orcid=record.orcid, s2_id=record.s2_id)
    researcher, _method, _confidence = _resolve_researcher(session, author)
    researcher.name = record.name
    researcher.aliases = list(dict.fromkeys([*researcher.aliases, *record.aliases]))
    session.add(researcher)
    return researcher
