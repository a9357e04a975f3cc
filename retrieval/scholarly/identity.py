"""Who wrote a paper: researchers found by their external ids first (OpenAlex, ORCID, Semantic Scholar), then by
name with co-author and affiliation evidence and a confidence; namesakes without evidence are not guessed.

A batch of records (`ingest.pipeline.load_records`) reads what name matching needs about every name it holds at
once (`KnownNames`: a few queries a batch, not several a name) and keeps it current as it writes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from dataclasses import field as _field

from sqlalchemy import or_
from sqlalchemy.orm import aliased
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


def _new_researcher(session: Session, key: str, author: AuthorRecord, known: KnownNames | None = None) -> Researcher:
    researcher = Researcher(identity_key=key, name=author.name, name_key=normalise_name(author.name))
    _add_ids(session, researcher, author)
    session.add(researcher)
    session.flush()
    if known is not None:
        known.track(researcher)
    return researcher


def _namesake_key(key: str, coauthors: set[str]) -> str:
    """The identity key of an author whose namesakes cannot be told apart: this paper's author alone."""
    return f"name:{key}#{len(coauthors)}-{'-'.join(sorted(coauthors))[:120]}"


def _chunks(values: list, size: int = 500) -> Iterator[list]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


@dataclass
class KnownNames:
    """What name matching reads about the researchers a batch of author lists may name, read for the whole batch at
    once: the researchers by normalised name (`candidates`), each one's co-authors' names and institutions (as
    counts, so a paper's rows replaced take theirs back), and researchers by the identity keys the batch may use
    (`keyed`: None when there is none). Kept current as the batch writes (`track`, `joined`, `removed`). A write it
    cannot follow (another source relinking rows, a record rolled back) ends it (`valid`): matching then queries."""

    candidates: dict[str, list[Researcher]] = _field(default_factory=dict)
    coauthors: dict[int, Counter] = _field(default_factory=dict)
    places: dict[int, Counter] = _field(default_factory=dict)
    keyed: dict[str, Researcher | None] = _field(default_factory=dict)
    valid: bool = True

    @classmethod
    def read(cls, session: Session, author_lists: Iterable[list[str]]) -> KnownNames:
        """One query for the candidates of every name, one each for their co-authors and places, one for the
        identity keys (in chunks of 500)."""
        names, keys = set(), set()
        for authors in author_lists:
            normal = [normalise_name(a) for a in authors]
            for n, name in enumerate(normal):
                names.add(name)
                keys |= {f"name:{name}", _namesake_key(name, set(normal[:n] + normal[n + 1 :]))}
        known = cls(candidates={name: [] for name in names}, keyed=dict.fromkeys(keys))
        for chunk in _chunks(sorted(names)):
            for researcher in session.exec(select(Researcher).where(Researcher.name_key.in_(chunk))):
                known.candidates[researcher.name_key].append(researcher)
        ids = sorted({r.id for found in known.candidates.values() for r in found})
        known.coauthors = {i: Counter() for i in ids}
        known.places = {i: Counter() for i in ids}
        own, other = aliased(Authorship), aliased(Authorship)
        for chunk in _chunks(ids):
            shared = (select(own.researcher_id, other.raw_name).join(other, other.paper_id == own.paper_id)
                      .where(own.researcher_id.in_(chunk), other.researcher_id != own.researcher_id))  # fmt: skip
            for researcher_id, name in session.exec(shared):
                known.coauthors[researcher_id][normalise_name(name)] += 1
            places = select(Authorship.researcher_id, Authorship.institution_id).where(
                Authorship.researcher_id.in_(chunk), Authorship.institution_id.is_not(None))
            for researcher_id, institution_id in session.exec(places):
                known.places[researcher_id][institution_id] += 1
        for chunk in _chunks(sorted(keys)):
            for researcher in session.exec(select(Researcher).where(Researcher.identity_key.in_(chunk))):
                known.keyed[researcher.identity_key] = researcher
        return known

    def holds(self, name_key: str) -> bool:
        return self.valid and name_key in self.candidates

    def track(self, researcher: Researcher) -> None:
        """A researcher the batch made: a candidate for its name from now on."""
        self.candidates.setdefault(researcher.name_key, []).append(researcher)
        self.coauthors[researcher.id], self.places[researcher.id] = Counter(), Counter()
        self.keyed[researcher.identity_key] = researcher

    def joined(self, row: Authorship, others: list[Authorship]) -> None:
        """`row` was written beside `others` (the paper's rows written before it)."""
        self._count(row, others, 1)

    def removed(self, rows: list[Authorship]) -> None:
        """A paper's rows were deleted: each takes back what it counted for the others."""
        for n, row in enumerate(rows):
            self._count(row, rows[:n], -1)

    def _count(self, row: Authorship, others: list[Authorship], step: int) -> None:
        mine = row.researcher_id
        if mine in self.places and row.institution_id is not None:
            self.places[mine][row.institution_id] += step
        for other in others:
            theirs = other.researcher_id
            if theirs is None or mine is None or theirs == mine:
                continue
            if mine in self.coauthors:
                self.coauthors[mine][normalise_name(other.raw_name)] += step
            if theirs in self.coauthors:
                self.coauthors[theirs][normalise_name(row.raw_name)] += step


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
    session: Session, name: str, coauthors: set[str], institution_id: int | None, exclude: int | None = None,
    known: KnownNames | None = None,
) -> tuple[Researcher | None, str, float]:  # fmt: skip
    """The researcher a name-only author most likely is, with the evidence and a confidence (read from `known`
    when it holds the name, else queried).

    Candidates share the normalised name. Shared co-authors (0.9) or a shared institution (0.8) pick one;
    a single candidate without evidence is taken at 0.6; several candidates without evidence leave the author
    unmatched (None, 'name?', 0.3) rather than guess between namesakes.
    """
    key = normalise_name(name)
    held = known is not None and known.holds(key)
    found = known.candidates[key] if held else session.exec(select(Researcher).where(Researcher.name_key == key))
    candidates = [r for r in found if r.id != exclude]
    if not candidates:
        return None, "name", 0.6
    scored = []
    for candidate in candidates:
        if held:  # this author's co-authors looked up among the candidate's (which may number thousands)
            counted = known.coauthors[candidate.id]
            shared = sum(1 for name in coauthors if counted[name] > 0)
            same_place = institution_id is not None and known.places[candidate.id][institution_id] > 0
        else:
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
    session: Session, author: AuthorRecord, coauthors: set[str], institution_id: int | None,
    known: KnownNames | None = None,
) -> tuple[Researcher, str, float]:  # fmt: skip
    """External ids first (creating the researcher they name), then the name with co-author and affiliation
    evidence; an author nobody matches gets a researcher of their own, keyed by name. `known`: what the batch
    read about its names (`KnownNames`), kept current with the researchers made here."""
    found = _by_external_id(session, author)
    if found:
        researcher, method = found
        _add_ids(session, researcher, author)
        return researcher, method, 1.0
    identity = _identity(author)
    if identity:
        return _new_researcher(session, identity[0], author, known), identity[1], 1.0
    researcher, method, confidence = match_by_name(session, author.name, coauthors, institution_id, known=known)
    if researcher is not None:
        return researcher, method, confidence
    name = normalise_name(author.name)
    # namesakes we cannot tell apart: a researcher for this paper's author alone
    key = _namesake_key(name, coauthors) if method == "name?" else f"name:{name}"
    if known is not None and known.valid and key in known.keyed:
        existing = known.keyed[key]
    else:
        existing = session.exec(select(Researcher).where(Researcher.identity_key == key)).first()
    return (existing or _new_researcher(session, key, author, known)), method, confidence


def refine_researchers(session: Session) -> tuple[int, int]:
    """After a load: relink name-only authorships to a researcher with external ids when the name and the
    evidence (co-authors, institution) point there, and delete name-keyed researchers left without papers.
    Returns (authorships relinked, researchers removed).

    Only names some researcher with external ids also has can move (a few queries, in chunks, read them and
    their papers' authors); a researcher can be left without papers only by having none counted
    (`paper_count`, kept as rows are written: an index range) or by losing its rows here."""
    identified = or_(Researcher.openalex_id.is_not(None), Researcher.orcid.is_not(None), Researcher.s2_id.is_not(None))
    names = sorted(set(session.exec(select(Researcher.name_key).where(identified, Researcher.name_key.is_not(None)))))
    rows: list[tuple[Authorship, Researcher]] = []
    for chunk in _chunks(names):
        rows += session.exec(
            select(Authorship, Researcher)
            .join(Researcher, Authorship.researcher_id == Researcher.id)
            .where(Researcher.name_key.in_(chunk), Researcher.identity_key.like("name:%"))
        ).all()
    authors: dict[str, list[tuple[int, str]]] = {}
    for chunk in _chunks(sorted({row.paper_id for row, _ in rows})):
        for paper_id, row_id, raw_name in session.exec(
            select(Authorship.paper_id, Authorship.id, Authorship.raw_name).where(Authorship.paper_id.in_(chunk))
        ):
            authors.setdefault(paper_id, []).append((row_id, raw_name))
    # Every decision reads the catalog as it was before this refinement (as one flush at the end leaves it); every
    # change waits for that flush: an earlier one would take SQLite's write lock and hold it through the loop.
    known = KnownNames.read(session, ([row.raw_name] for row, _ in rows))
    relinked, left = 0, set()
    with session.no_autoflush:
        for row, current in rows:
            coauthors = {normalise_name(n) for i, n in authors.get(row.paper_id, []) if i != row.id}
            found, method, confidence = match_by_name(session, row.raw_name, coauthors, row.institution_id,
                                                      current.id, known)  # fmt: skip
            if found is not None and _identity(found) and method != "name":
                left.add(row.researcher_id)
                row.researcher_id, row.match_method, row.match_confidence = found.id, method, confidence
                session.add(row)
                relinked += 1
    session.flush()
    unmatched = Researcher.identity_key.like("name:%")
    maybe = set(session.exec(select(Researcher.id).where(Researcher.paper_count == 0, unmatched))) | left
    orphans = []
    for chunk in _chunks(sorted(maybe)):
        with_papers = select(Authorship.researcher_id).where(Authorship.researcher_id.in_(chunk))
        orphans += session.exec(
            select(Researcher).where(Researcher.id.in_(chunk), unmatched, Researcher.id.not_in(with_papers))
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
