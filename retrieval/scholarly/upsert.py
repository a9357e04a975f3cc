"""Writing normalised records into the catalog, merging what several sources say about one thing: papers, their
authorships (whose researchers `retrieval.scholarly.identity` finds) and institutions. A record's references become
citation edges through `retrieval.scholarly.citation_edges`."""

from __future__ import annotations

from sqlmodel import Session, select

from retrieval.scholarly.citation_edges import edges_of, link_cited, resolve_citation_edges, upsert_citation
from retrieval.scholarly.identity import (
    MATCHED,
    KnownNames,
    _add_ids,
    _by_external_id,
    _identity,
    _resolve,
    same_person_name,
)
from retrieval.scholarly.models import (
    Authorship,
    Institution,
    Paper,
    Researcher,
    normalise_name,
    title_key,
)
from retrieval.scholarly.records import AuthorRecord, InstitutionRecord, PaperRecord


_MERGED_SCALARS = (
    "arxiv_id", "openalex_id", "doi", "title", "abstract", "primary_category", "published", "updated", "year",
    "version", "landing_url", "pdf_url", "journal_ref", "comments", "license", "venue", "cited_by_count",
)  # fmt: skip


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


def upsert_paper(session: Session, record: PaperRecord, known: KnownNames | None = None) -> Paper:
    """Insert or merge a paper: an authoritative source overwrites, the others only fill gaps. `known`: what the
    batch read about the names it holds (`identity.KnownNames`), so its authors are matched without a query each."""
    paper = _find_paper(session, record)
    fresh = paper is None
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
    paper.title_key = title_key(paper.title)
    session.add(paper)
    session.flush()
    if record.authors:
        _replace_authorships(session, paper, record.authors, record.source, fresh, known)
    if record.references:  # the paper's edges read once (not a query per reference: lists run to hundreds)
        edges = edges_of(session, paper.id)
        for ref in record.references:
            upsert_citation(session, paper.id, ref.openalex_id, ref.doi, ref.arxiv_id, ref.title, edges,
                            source=record.source)  # fmt: skip
        session.flush()
        resolve_citation_edges(session, [paper.id])
    link_cited(session, paper)
    return paper


def _replace_authorships(
    session: Session, paper: Paper, authors: list[AuthorRecord], source: str = "arxiv", fresh: bool = False,
    known: KnownNames | None = None,
) -> None:  # fmt: skip
    """Merge an author list into a paper's authorships (`fresh`: the paper was just made, so it has none yet).

    The first list creates the rows. Later lists from other sources only add what they know (external ids,
    affiliations) to the rows whose names they match; arXiv, the authority on author lists, replaces rows
    when its list changed, keeping the researcher of each name it still lists.
    """
    existing = [] if fresh else list(
        session.exec(select(Authorship).where(Authorship.paper_id == paper.id).order_by(Authorship.position))
    )  # fmt: skip
    unchanged = [r.raw_name for r in existing] == [a.name for a in authors]
    if existing and (not _authoritative(source, "authors") or unchanged):  # other sources only add to the rows
        if known is not None:  # the rows may change researcher or place: counted again once they have
            known.removed(existing)
        _enrich_rows(session, existing, authors, known)
        for n, row in enumerate(existing if known is not None else []):
            known.joined(row, existing[:n])
        rows = existing
    else:
        kept = {normalise_name(r.raw_name): r for r in existing}
        if known is not None:
            known.removed(existing)
        for row in existing:
            session.delete(row)
        session.flush()
        keys = [normalise_name(a.name) for a in authors]
        rows = []
        for position, author in enumerate(authors):
            old = kept.get(keys[position])
            affiliation = author.affiliations[0] if author.affiliations else None
            institution = _resolve_institution(session, affiliation) if affiliation else None
            institution_id = institution.id if institution else (old.institution_id if old else None)
            if old is not None and old.researcher_id is not None and not _identity(author):
                researcher_id, method, confidence = old.researcher_id, old.match_method, old.match_confidence
            else:
                coauthors = set(keys[:position] + keys[position + 1 :])
                researcher, method, confidence = _resolve(session, author, coauthors, institution_id, known)
                researcher_id = researcher.id
            rows.append(
                Authorship(
                    paper_id=paper.id,
                    position=position,
                    raw_name=author.name,
                    researcher_id=researcher_id,
                    match_method=method,
                    match_confidence=confidence,
                    raw_affiliation=affiliation.raw if affiliation else (old.raw_affiliation if old else None),
                    institution_id=institution_id,
                )
            )
            session.add(rows[-1])
            if known is not None:
                known.joined(rows[-1], rows[:-1])
        session.flush()
    _mark_matched(session, paper, rows)


def _enrich_rows(
    session: Session, rows: list[Authorship], authors: list[AuthorRecord], known: KnownNames | None = None
) -> None:
    """Attach another source's ids and affiliations to the rows whose names match (by position first)."""
    unused = list(range(len(authors)))
    for position, row in enumerate(rows):
        pick = None
        if position in unused and same_person_name(row.raw_name, authors[position].name):
            pick = position
        else:
            pick = next((i for i in unused if same_person_name(row.raw_name, authors[i].name)), None)
        if pick is None:
            continue
        unused.remove(pick)
        author = authors[pick]
        if len(row.raw_name) > len(author.name):  # 'Esther Duflo' names the person better than 'E. Duflo'
            author = author.model_copy(update={"name": row.raw_name})
        if row.institution_id is None and author.affiliations:
            institution = _resolve_institution(session, author.affiliations[0])
            row.institution_id = institution.id if institution else None
            row.raw_affiliation = row.raw_affiliation or author.affiliations[0].raw
        if _identity(author):
            current = session.get(Researcher, row.researcher_id) if row.researcher_id else None
            found = _by_external_id(session, author)
            if current is not None and _identity(current) and (found is None or found[0].id == current.id):
                _add_ids(session, current, author)  # the same person, now known to one more source
                row.match_method, row.match_confidence = _identity(current)[1], 1.0
            else:
                researcher, method, confidence = _resolve(session, author, set(), row.institution_id, known)
                row.researcher_id, row.match_method, row.match_confidence = researcher.id, method, confidence
        session.add(row)
    session.flush()


def _mark_matched(session: Session, paper: Paper, rows: list[Authorship]) -> None:
    """Whether every authorship of the paper (`rows`, all of them) is linked at a confidence that counts."""
    paper.all_authors_matched = bool(rows) and all((row.match_confidence or 0) >= MATCHED for row in rows)
    session.add(paper)


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


