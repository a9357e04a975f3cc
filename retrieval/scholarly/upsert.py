"""Writing normalised records into the catalog, merging what several sources say about one thing: papers, their
authorships (whose researchers `retrieval.scholarly.identity` finds), institutions and citations."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import and_, or_
from sqlmodel import Session, func, select

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
    Citation,
    Institution,
    Paper,
    Researcher,
    normalise_name,
    title_key,
)
from retrieval.scholarly.records import AuthorRecord, InstitutionRecord, PaperRecord

MAX_TITLE_CHARS = 500  # what an edge keeps of the cited work's title, and of a reference list's entry
MAX_AUTHORS_CHARS = 1000
MAX_VENUE_CHARS = 300
MAX_REFERENCE_CHARS = 2000
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
            _upsert_citation(session, paper.id, ref.openalex_id, ref.doi, ref.arxiv_id, ref.title, edges,
                             source=record.source)  # fmt: skip
        session.flush()
        link_citations(session, [paper.id])
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


def add_citation(
    session: Session,
    citing_id: str,
    arxiv_id: str | None = None,
    doi: str | None = None,
    edges: dict | None = None,
    title: str | None = None,
    entry: ListedWork | None = None,
) -> None:
    """A citation edge found in a paper's own reference list: by arXiv id or DOI, or, for an entry with neither,
    by what the entry says (key `ref:`, `reference_key`). The title and what `entry` gives (a value already stored
    is kept); `edges` as `edges_of` reads them, so a reference list costs one query rather than one per entry."""
    key = None if arxiv_id or doi else reference_key(title, entry)
    if key is None and not (arxiv_id or doi):
        return  # an entry with no id and nothing to tell it by
    _upsert_citation(session, citing_id, None, doi, arxiv_id, title, edges, entry, key, source=PDF_LIST)


@dataclass(frozen=True)
class ListedWork:
    """What a reference list's entry says of a work besides its title and ids (each cut to a sane length)."""

    authors: list[str]
    year: int | None
    venue: str | None
    reference: str


def reference_key(title: str | None, entry: ListedWork | None) -> str | None:
    """The key of an edge to a work listed with no id: its title and year folded ("ref:" and 20 hex digits), or
    its printed entry when it has no title; None when there is neither."""
    said = f"{title}|{entry.year if entry else ''}" if title else (entry.reference if entry else "")
    folded = "".join(c for c in said.lower() if c.isalnum() or c == "|")
    return f"ref:{hashlib.sha1(folded.encode()).hexdigest()[:20]}" if folded.strip("|") else None


def edges_of(session: Session, citing_id: str) -> dict[str, Citation]:
    """A paper's stored citation edges by key."""
    return {row.cited_key: row for row in session.exec(select(Citation).where(Citation.citing_id == citing_id))}


# Whose title of a cited work is kept: a bibliographic source's over what a PDF's list was read to say (its
# authors, year, venue and the entry as printed come from the list alone). A source not named here ranks as "record".
PDF_LIST = "pdf"
TITLE_RANK = {"openalex": 3, "s2": 2, "record": 2, PDF_LIST: 1}


def _title_rank(source: str | None) -> int:
    return TITLE_RANK.get(source or "", TITLE_RANK["record"] if source else 0)


def _upsert_citation(session: Session, citing_id: str, openalex_id, doi, arxiv_id, title, edges=None, entry=None,
                     key=None, source: str | None = None) -> None:  # fmt: skip
    """One edge, merged into the stored one for the same work: the one with the same key, or else one that shares
    an id or the title (`same_work`: OpenAlex's list and the PDF's name the same works under different keys);
    `edges` (key -> row) holds the citing paper's edges when the caller read them all at once. Each field keeps the
    value it has, but the title, which the better source replaces (`TITLE_RANK`; `cited_title_source` says whose)."""
    key = key or (f"openalex:{openalex_id}" if openalex_id else f"arxiv:{arxiv_id}" if arxiv_id else f"doi:{doi}")
    if edges is None:
        edges = edges_of(session, citing_id)
    year = entry.year if entry else None
    row = edges.get(key) or same_work(edges.values(), openalex_id, doi, arxiv_id, title_key(title), year)
    if row is None:
        row = Citation(citing_id=citing_id, cited_key=key)
        edges[key] = row
    describe_cited(row, openalex_id=openalex_id, doi=doi, arxiv_id=arxiv_id, title=title, source=source)
    if entry is not None:
        row.cited_authors = row.cited_authors or ("; ".join(entry.authors)[:MAX_AUTHORS_CHARS] or None)
        row.cited_year = row.cited_year or entry.year
        row.cited_venue = row.cited_venue or (entry.venue or "")[:MAX_VENUE_CHARS] or None
        row.reference = row.reference or entry.reference[:MAX_REFERENCE_CHARS] or None
    session.add(row)


def same_work(rows, openalex_id, doi, arxiv_id, key: str | None, year: int | None = None) -> Citation | None:
    """The edge among `rows` (one citing paper's) to the work these ids or this title key name: by any id they
    share; by the title when neither side's arXiv id, DOI or year says it is another work."""
    doi = (doi or "").lower() or None
    for row in rows:
        if ((openalex_id and row.cited_openalex_id == openalex_id) or (arxiv_id and row.cited_arxiv_id == arxiv_id)
                or (doi and row.cited_doi == doi)):  # fmt: skip
            return row
    if key is None:
        return None
    for row in rows:
        if (row.cited_title_key == key and not (arxiv_id and row.cited_arxiv_id) and not (doi and row.cited_doi)
                and not (year and row.cited_year and year != row.cited_year)):  # fmt: skip
            return row
    return None


def describe_cited(row: Citation, *, openalex_id=None, doi=None, arxiv_id=None, title=None, source=None) -> None:
    """What a source says of a cited work, merged into its edge (the caller adds the row): ids fill gaps, DOIs in
    lower case; the title is replaced by a better source's (`TITLE_RANK`), its key with it."""
    row.cited_openalex_id = row.cited_openalex_id or openalex_id
    row.cited_doi = row.cited_doi or (doi or "").lower() or None
    row.cited_arxiv_id = row.cited_arxiv_id or arxiv_id
    title = (title or "").strip()[:MAX_TITLE_CHARS]
    if title and (not row.cited_title or _title_rank(source) > _title_rank(row.cited_title_source)):
        row.cited_title, row.cited_title_source = title, source
        row.cited_title_key = title_key(title)


def link_citations(session: Session, citing_ids: Collection[str] | None = None) -> int:
    """Point citation edges at papers now in the corpus (only the edges of `citing_ids` when given, e.g. the
    reference lists a PDF job just read); returns how many edges changed. By the cited work's ids first; an edge
    with no arXiv id (one known by DOI or by its title alone) then by its title and year (`year_fits`)."""
    query = select(Citation).where(Citation.cited_id.is_(None))
    if citing_ids is not None:
        query = query.where(Citation.citing_id.in_(list(citing_ids)))
    rows = session.exec(query).all()
    if not rows:
        return 0
    by_openalex = _paper_ids(session, Paper.openalex_id, {r.cited_openalex_id for r in rows} - {None})
    by_arxiv = _paper_ids(session, Paper.arxiv_id, {r.cited_arxiv_id for r in rows} - {None})
    by_doi = _paper_ids(session, func.lower(Paper.doi), {(r.cited_doi or "").lower() for r in rows} - {""})
    by_title = _papers_by_title(session, {r.cited_title_key for r in rows if not r.cited_arxiv_id} - {None})
    changed = 0
    for row in rows:
        target = (
            by_openalex.get(row.cited_openalex_id)
            or by_arxiv.get(row.cited_arxiv_id)
            or by_doi.get((row.cited_doi or "").lower() or None)
            or _by_title(row, by_title)
        )
        if target and target != row.citing_id:
            row.cited_id = target
            session.add(row)
            changed += 1
    return changed


def _by_title(row: Citation, by_title: dict[str, list[tuple[str, int | None]]]) -> str | None:
    """The one paper whose title key is the edge's and whose year fits; None for none, or for two with that title."""
    if row.cited_arxiv_id or not row.cited_title_key:
        return None  # an arXiv id names its paper: never another by title
    found = by_title.get(row.cited_title_key, [])
    return found[0][0] if len(found) == 1 and year_fits(row.cited_year, found[0][1]) else None


def year_fits(listed: int | None, paper: int | None) -> bool:
    """A reference's year against the held paper's: a preprint is cited as published a year or three later (TripPy,
    arXiv 2020, is "SIGDIAL 2020"; others appear as the journal's year), and a citing list may print the year before
    the arXiv version's. Either unknown: the title alone decides."""
    return listed is None or paper is None or -1 <= listed - paper <= 3


def _papers_by_title(session: Session, keys: set[str], chunk: int = 500) -> dict[str, list[tuple[str, int | None]]]:
    """title key -> [(paper id, year)] of every paper with that key (more than one: the title is ambiguous)."""
    found: dict[str, list[tuple[str, int | None]]] = {}
    ordered = sorted(keys)
    for start in range(0, len(ordered), chunk):
        part = ordered[start : start + chunk]
        for key, paper_id, year in session.exec(select(Paper.title_key, Paper.id, Paper.year)
                                                .where(Paper.title_key.in_(part))):  # fmt: skip
            found.setdefault(key, []).append((paper_id, year))
    return found


def link_cited(session: Session, paper: Paper) -> int:
    """Point the edges waiting for this paper at it, whichever paper cited it first: by its arXiv id, OpenAlex id or
    DOI, and an edge with no arXiv id by its title and year when no other paper here has that title. One query on
    the edges' indexes, so a paper's arrival costs the same in a million-paper archive. Returns the edges linked."""
    ids = []
    if paper.arxiv_id:
        ids.append(Citation.cited_arxiv_id == paper.arxiv_id)
    if paper.openalex_id:
        ids.append(Citation.cited_openalex_id == paper.openalex_id)
    if paper.doi:
        ids.append(Citation.cited_doi == paper.doi.lower())
    if paper.title_key:
        ids.append(Citation.cited_title_key == paper.title_key)
    if not ids:
        return 0
    # "unlinked" inside each term: SQLite then reads one index per term; outside, it walks every unlinked edge
    unlinked = Citation.cited_id.is_(None)
    waiting = session.exec(select(Citation).where(or_(*(and_(term, unlinked) for term in ids)),
                                                  Citation.citing_id != paper.id)).all()  # fmt: skip
    changed, unique = 0, None  # (whether no other paper has its title: asked only when a title would decide)
    for row in waiting:
        by_id = (
            (paper.arxiv_id and row.cited_arxiv_id == paper.arxiv_id)
            or (paper.openalex_id and row.cited_openalex_id == paper.openalex_id)
            or (paper.doi and row.cited_doi == paper.doi.lower())
        )
        if not by_id and not row.cited_arxiv_id and year_fits(row.cited_year, paper.year):
            unique = _title_is_unique(session, paper) if unique is None else unique
            by_title = unique and row.cited_title_key == paper.title_key
        else:
            by_title = False
        if by_id or by_title:
            row.cited_id = paper.id
            session.add(row)
            changed += 1
    return changed


def _title_is_unique(session: Session, paper: Paper) -> bool:
    others = select(func.count()).select_from(Paper).where(Paper.title_key == paper.title_key, Paper.id != paper.id)
    return session.exec(others).one() == 0


def _paper_ids(session: Session, column, values: set[str], chunk: int = 500) -> dict[str, str]:
    """value of `column` -> paper id, for these values only (read in chunks under SQLite's parameter limit)."""
    found: dict[str, str] = {}
    ordered = sorted(values)
    for start in range(0, len(ordered), chunk):
        part = ordered[start : start + chunk]
        found.update(session.exec(select(column, Paper.id).where(column.in_(part))).all())
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


