"""Writing normalised records into the catalog, merging what several sources say about one thing."""

from __future__ import annotations

from sqlmodel import Session, select

from retrieval.models import Authorship, Citation, Institution, Paper, Researcher, normalise_name
from retrieval.records import AuthorRecord, InstitutionRecord, PaperRecord, ResearcherRecord

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
        _replace_authorships(session, paper, record.authors, record.source)
    for ref in record.references:
        _upsert_citation(session, paper.id, ref.openalex_id, ref.doi, ref.arxiv_id, ref.title)
    return paper


MATCHED = 0.5  # an authorship linked at or above this confidence counts as matched
_ID_FIELDS = (("openalex_id", "openalex"), ("orcid", "orcid"), ("s2_id", "s2"))


def _surname_and_initial(name: str) -> tuple[str, str]:
    tokens = normalise_name(name).split()
    return (tokens[-1], tokens[0][:1]) if tokens else ("", "")


def same_person_name(a: str, b: str) -> bool:
    """Could two spellings name one person? Same surname and same first initial ('E. Duflo', 'Esther Duflo')."""
    surname_a, initial_a = _surname_and_initial(a)
    surname_b, initial_b = _surname_and_initial(b)
    return bool(surname_a) and surname_a == surname_b and initial_a == initial_b


def _identity(record) -> tuple[str, str, float] | None:
    for field, method in _ID_FIELDS:
        if getattr(record, field):
            return f"{method}:{getattr(record, field)}", method, 1.0
    return None


def _by_external_id(session: Session, author: AuthorRecord) -> tuple[Researcher, str] | None:
    for field, method in _ID_FIELDS:
        value = getattr(author, field)
        if value:
            found = session.exec(select(Researcher).where(getattr(Researcher, field) == value)).first()
            if found:
                return found, method
    return None


def _new_researcher(session: Session, key: str, author: AuthorRecord) -> Researcher:
    researcher = Researcher(identity_key=key, name=author.name, name_key=normalise_name(author.name))
    _add_ids(session, researcher, author)
    session.add(researcher)
    session.flush()
    return researcher


def _add_ids(session: Session, researcher: Researcher, author: AuthorRecord) -> None:
    """Give a researcher the external ids it lacks, unless another researcher already holds them."""
    for field, _method in _ID_FIELDS:
        value = getattr(author, field)
        if value and not getattr(researcher, field):
            taken = session.exec(select(Researcher.id).where(getattr(Researcher, field) == value)).first()
            if taken is None or taken == researcher.id:
                setattr(researcher, field, value)
    researcher.name_key = researcher.name_key or normalise_name(researcher.name)


def _coauthor_keys(session: Session, researcher_id: int) -> set[str]:
    papers = select(Authorship.paper_id).where(Authorship.researcher_id == researcher_id)
    names = session.exec(
        select(Authorship.raw_name).where(Authorship.paper_id.in_(papers), Authorship.researcher_id != researcher_id)
    ).all()
    return {normalise_name(n) for n in names}


def _institutions_of(session: Session, researcher_id: int) -> set[int]:
    rows = session.exec(
        select(Authorship.institution_id).where(
            Authorship.researcher_id == researcher_id, Authorship.institution_id.is_not(None)
        )
    ).all()
    return set(rows)


def match_by_name(
    session: Session, name: str, coauthors: set[str], institution_id: int | None, exclude: int | None = None
) -> tuple[Researcher | None, str, float]:
    """The researcher a name-only author most likely is, with the evidence and a confidence.

    Candidates share the normalised name. Shared co-authors (0.9) or a shared institution (0.8) pick one;
    a single candidate without evidence is taken at 0.6; several candidates without evidence leave the author
    unmatched (None, 'name?', 0.3) rather than guess between namesakes.
    """
    key = normalise_name(name)
    candidates = [
        r for r in session.exec(select(Researcher).where(Researcher.name_key == key)).all() if r.id != exclude
    ]
    if not candidates:
        return None, "name", 0.6
    scored = []
    for candidate in candidates:
        shared = len(_coauthor_keys(session, candidate.id) & coauthors)
        same_place = institution_id is not None and institution_id in _institutions_of(session, candidate.id)
        scored.append((shared, same_place, candidate))
    scored.sort(key=lambda item: (item[0], item[1], _identity(item[2]) is not None), reverse=True)
    best_shared, best_place, best = scored[0]
    runner_up = scored[1][:2] if len(scored) > 1 else (0, False)
    if best_shared and (best_shared, best_place) > runner_up:
        return best, "name+coauthors", 0.9
    if best_place and not runner_up[1]:
        return best, "name+affiliation", 0.8
    if len(candidates) == 1:
        return best, "name", 0.6
    return None, "name?", 0.3


def _resolve(
    session: Session, author: AuthorRecord, coauthors: set[str], institution_id: int | None
) -> tuple[Researcher, str, float]:
    """External ids first (creating the researcher they name), then the name with co-author and affiliation
    evidence; an author nobody matches gets a researcher of their own, keyed by name."""
    found = _by_external_id(session, author)
    if found:
        researcher, method = found
        _add_ids(session, researcher, author)
        return researcher, method, 1.0
    identity = _identity(author)
    if identity:
        return _new_researcher(session, identity[0], author), identity[1], 1.0
    researcher, method, confidence = match_by_name(session, author.name, coauthors, institution_id)
    if researcher is not None:
        return researcher, method, confidence
    key = f"name:{normalise_name(author.name)}"
    if method == "name?":  # namesakes we cannot tell apart: a researcher for this paper's author alone
        key = f"{key}#{len(coauthors)}-{'-'.join(sorted(coauthors))[:120]}"
    existing = session.exec(select(Researcher).where(Researcher.identity_key == key)).first()
    return (existing or _new_researcher(session, key, author)), method, confidence


def _replace_authorships(session: Session, paper: Paper, authors: list[AuthorRecord], source: str = "arxiv") -> None:
    """Merge an author list into a paper's authorships.

    The first list creates the rows. Later lists from other sources only add what they know (external ids,
    affiliations) to the rows whose names they match; arXiv, the authority on author lists, replaces rows
    when its list changed, keeping the researcher of each name it still lists.
    """
    existing = list(
        session.exec(select(Authorship).where(Authorship.paper_id == paper.id).order_by(Authorship.position))
    )
    if existing and not _authoritative(source, "authors"):
        _enrich_rows(session, existing, authors)
    elif existing and [r.raw_name for r in existing] == [a.name for a in authors]:
        _enrich_rows(session, existing, authors)
    else:
        kept = {normalise_name(r.raw_name): r for r in existing}
        for row in existing:
            session.delete(row)
        session.flush()
        keys = [normalise_name(a.name) for a in authors]
        for position, author in enumerate(authors):
            old = kept.get(keys[position])
            affiliation = author.affiliations[0] if author.affiliations else None
            institution = _resolve_institution(session, affiliation) if affiliation else None
            institution_id = institution.id if institution else (old.institution_id if old else None)
            if old is not None and old.researcher_id is not None and not _identity(author):
                researcher_id, method, confidence = old.researcher_id, old.match_method, old.match_confidence
            else:
                coauthors = set(keys[:position] + keys[position + 1 :])
                researcher, method, confidence = _resolve(session, author, coauthors, institution_id)
                researcher_id = researcher.id
            session.add(
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
        session.flush()
    _mark_matched(session, paper)


def _enrich_rows(session: Session, rows: list[Authorship], authors: list[AuthorRecord]) -> None:
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
                researcher, method, confidence = _resolve(session, author, set(), row.institution_id)
                row.researcher_id, row.match_method, row.match_confidence = researcher.id, method, confidence
        session.add(row)
    session.flush()


def _mark_matched(session: Session, paper: Paper) -> None:
    confidences = session.exec(select(Authorship.match_confidence).where(Authorship.paper_id == paper.id)).all()
    paper.all_authors_matched = bool(confidences) and all((c or 0) >= MATCHED for c in confidences)
    session.add(paper)


def refine_researchers(session: Session) -> tuple[int, int]:
    """After a load: relink name-only authorships to a researcher with external ids when the name and the
    evidence (co-authors, institution) point there, and delete name-keyed researchers left without papers.
    Returns (authorships relinked, researchers removed)."""
    relinked = 0
    rows = session.exec(
        select(Authorship, Researcher)
        .join(Researcher, Authorship.researcher_id == Researcher.id)
        .where(Researcher.identity_key.like("name:%"))
    ).all()
    for row, current in rows:
        names = session.exec(
            select(Authorship.raw_name).where(Authorship.paper_id == row.paper_id, Authorship.id != row.id)
        ).all()
        coauthors = {normalise_name(n) for n in names}
        found, method, confidence = match_by_name(session, row.raw_name, coauthors, row.institution_id, current.id)
        if found is not None and _identity(found) and method != "name":
            row.researcher_id, row.match_method, row.match_confidence = found.id, method, confidence
            session.add(row)
            relinked += 1
    session.flush()
    orphans = session.exec(
        select(Researcher).where(
            Researcher.identity_key.like("name:%"),
            Researcher.id.not_in(select(Authorship.researcher_id).where(Authorship.researcher_id.is_not(None))),
        )
    ).all()
    for researcher in orphans:
        session.delete(researcher)
    return relinked, len(orphans)


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


def add_citation(session: Session, citing_id: str, arxiv_id: str | None = None, doi: str | None = None) -> None:
    """A citation edge found in a paper's own reference list (by arXiv id or DOI)."""
    _upsert_citation(session, citing_id, None, doi, arxiv_id, None)


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
    by_doi = dict(session.exec(select(Paper.doi, Paper.id).where(Paper.doi.is_not(None))).all())
    for row in session.exec(select(Citation).where(Citation.cited_id.is_(None))).all():
        target = (
            by_openalex.get(row.cited_openalex_id)
            or by_arxiv.get(row.cited_arxiv_id)
            or by_doi.get((row.cited_doi or "").lower() or None)
        )
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
    found = _by_external_id(session, author)
    if found:
        researcher = found[0]
        _add_ids(session, researcher, author)
    else:
        identity = _identity(author)
        key = identity[0] if identity else f"name:{normalise_name(record.name)}"
        researcher = session.exec(select(Researcher).where(Researcher.identity_key == key)).first()
        researcher = researcher or _new_researcher(session, key, author)
    researcher.name = record.name
    researcher.name_key = normalise_name(record.name)
    researcher.aliases = list(dict.fromkeys([*researcher.aliases, *record.aliases]))
    session.add(researcher)
    return researcher
