"""Who wrote a paper: researchers found by their external ids first (OpenAlex, ORCID, Semantic Scholar), then by
name with co-author and affiliation evidence and a confidence; namesakes without evidence are not guessed."""

from __future__ import annotations

from sqlmodel import Session, select

from retrieval.scholarly.models import Authorship, Researcher, normalise_name
from retrieval.scholarly.records import AuthorRecord, ResearcherRecord

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
    # Every change waits for the one flush below: an earlier flush would take SQLite's write lock and hold it
    # through the loop's reads, and every other writer (the chat's history) would wait that long.
    with session.no_autoflush:
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
