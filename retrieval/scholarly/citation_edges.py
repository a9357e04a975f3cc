"""Citation edges: what a reference list or a bibliographic source says of a cited work, merged into one edge per
work, and the edges pointed at the papers of the archive once either side arrives."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import and_, or_
from sqlmodel import Session, func, select

from retrieval.scholarly.models import Citation, Paper, title_key

MAX_TITLE_CHARS = 500  # what an edge keeps of the cited work's title, and of a reference list's entry
MAX_AUTHORS_CHARS = 1000
MAX_VENUE_CHARS = 300
MAX_REFERENCE_CHARS = 2000


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
    upsert_citation(session, citing_id, None, doi, arxiv_id, title, edges, entry, key, source=PDF_LIST)


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


def upsert_citation(session: Session, citing_id: str, openalex_id, doi, arxiv_id, title, edges=None, entry=None,
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


def resolve_citation_edges(session: Session, citing_ids: Collection[str] | None = None) -> int:
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
