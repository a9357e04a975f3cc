"""Researchers in the catalog: their profile (what their page and the agent's tools show) and finding them."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

from sqlalchemy import func
from sqlmodel import Session, select

from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Authorship, Institution, Paper, Researcher
from retrieval.scholarly.paging import PER_PAGE, PaperList, fields_of, newest_first, page_of_papers
from retrieval.scholarly.records import whole_number
from retrieval.scholarly.terms import holding, other_name, word
from retrieval.scholarly.upsert import normalise_name

_OPENALEX_AUTHOR = re.compile(r"^(?:https?://openalex\.org/)?(A\d+)$", re.IGNORECASE)
_ORCID = re.compile(r"^(?:https?://orcid\.org/)?(\d{4}-\d{4}-\d{4}-\d{3}[\dX])$", re.IGNORECASE)


@dataclass(frozen=True)
class Coauthor:
    researcher_id: int
    name: str
    shared: int


@dataclass(frozen=True)
class Affiliation:
    institution_id: int
    name: str
    first_year: int | None
    last_year: int | None
    papers: int


@dataclass(frozen=True)
class ResearcherProfile:
    researcher: Researcher
    paper_count: int
    papers: PaperList
    positions: dict[str, int]  # first, middle, last, sole; across fully matched papers only
    matched_papers: int
    fields: list[tuple[str, int]]  # primary categories with counts
    coauthors: list[Coauthor]
    institutions: list[Affiliation]  # newest first
    years: tuple[int | None, int | None]
    coauthor_links: list[tuple[int, int, int]] = field(default_factory=list)  # the first co-authors who wrote together

    def external_ids(self) -> dict[str, str]:
        r = self.researcher
        return {k: v for k, v in (("OpenAlex", r.openalex_id), ("ORCID", r.orcid), ("Semantic Scholar", r.s2_id)) if v}


def _position(index: int, count: int) -> str:
    if count == 1:
        return "sole"
    return "first" if index == 0 else "last" if index == count - 1 else "middle"


def researcher_profile(
    catalog: Catalog, researcher_id: int, page: int = 1, category: str | None = None, per_page: int | None = None,
    linked: int = 20,
) -> ResearcherProfile | None:
    """`linked`: how many of the first co-authors (most shared papers first) are looked at for who among them wrote
    together (`ResearcherProfile.coauthor_links`: the page's network)."""
    per_page = per_page or PER_PAGE
    with catalog.session() as session:
        researcher = session.get(Researcher, researcher_id)
        if researcher is None:
            return None
        own = select(Authorship.paper_id).where(Authorship.researcher_id == researcher_id)
        papers = page_of_papers(session, own, page, per_page, category)
        paper_count = session.exec(
            select(func.count(func.distinct(Authorship.paper_id))).where(Authorship.researcher_id == researcher_id)
        ).one()
        counts = dict(
            session.exec(
                select(Authorship.paper_id, func.count())
                .where(Authorship.paper_id.in_(own))
                .group_by(Authorship.paper_id)
            ).all()
        )
        positions = Counter({"first": 0, "middle": 0, "last": 0, "sole": 0})
        matched = 0
        rows = session.exec(
            select(Authorship.paper_id, Authorship.position, Paper.all_authors_matched)
            .join(Paper, Paper.id == Authorship.paper_id)
            .where(Authorship.researcher_id == researcher_id)
        ).all()
        for paper_id, position, fully_matched in {r[0]: r for r in rows}.values():
            if fully_matched:
                matched += 1
                positions[_position(position, counts[paper_id])] += 1
        shared = session.exec(
            select(Authorship.researcher_id, Researcher.name, func.count(func.distinct(Authorship.paper_id)))
            .join(Researcher, Researcher.id == Authorship.researcher_id)
            .where(Authorship.paper_id.in_(own), Authorship.researcher_id != researcher_id)
            .group_by(Authorship.researcher_id, Researcher.name)
        ).all()
        coauthors = sorted((Coauthor(i, n, c) for i, n, c in shared), key=lambda c: (-c.shared, c.name))
        links = _wrote_together(session, own, [c.researcher_id for c in coauthors[:linked]])
        places = session.exec(
            select(Institution.id, Institution.name, func.min(Paper.year), func.max(Paper.year), func.count())
            .join(Authorship, Authorship.institution_id == Institution.id)
            .join(Paper, Paper.id == Authorship.paper_id)
            .where(Authorship.researcher_id == researcher_id)
            .group_by(Institution.id, Institution.name)
        ).all()
        institutions = sorted(
            (Affiliation(*row) for row in places), key=lambda a: (-(a.last_year or 0), -a.papers, a.name)
        )
        years = session.exec(select(func.min(Paper.year), func.max(Paper.year)).where(Paper.id.in_(own))).one()
        return ResearcherProfile(
            researcher, paper_count, papers, dict(positions), matched, fields_of(session, own), coauthors, institutions,
            tuple(years), links,
        )  # fmt: skip


def _wrote_together(session: Session, own, people: list[int]) -> list[tuple[int, int, int]]:
    """(one, other, papers) for each pair of `people` who are authors together of the researcher's papers (`own`):
    read as the authorships of these people on those papers (their shared papers' worth, not the archive's)."""
    if len(people) < 2:
        return []
    rows = session.exec(select(Authorship.paper_id, Authorship.researcher_id)
                        .where(Authorship.researcher_id.in_(people), Authorship.paper_id.in_(own))).all()  # fmt: skip
    on_paper: dict[str, set[int]] = {}
    for paper_id, person in rows:
        on_paper.setdefault(paper_id, set()).add(person)
    pairs = Counter(pair for together in on_paper.values() for pair in combinations(sorted(together), 2))
    return [(one, other, count) for (one, other), count in sorted(pairs.items())]


@dataclass(frozen=True)
class ResearcherCandidate:
    """A researcher who may be the one asked about, with what tells them apart."""

    researcher: Researcher
    paper_count: int
    years: tuple[int | None, int | None]
    fields: list[tuple[str, int]]
    institutions: list[str]
    coauthors: list[str]


def find_researchers(catalog: Catalog, text: str, limit: int = 10, partial: bool = True) -> list[ResearcherCandidate]:
    """Researchers by an id (ours, OpenAlex, ORCID, Semantic Scholar), a full name (accents and
    punctuation ignored), or (`partial`) every word of a partial name or an alternative name; most papers first.
    Everything is read from indexes: the partial names' words and the other names from the researchers' terms
    (`retrieval.scholarly.terms`)."""
    text = (text or "").strip()[:300]
    key = normalise_name(text)
    if not key:
        return []
    most = (Researcher.paper_count.desc(), Researcher.name, Researcher.id)  # the kept counts: only `limit` are read

    def named(*conditions) -> list[Researcher]:
        return list(session.exec(select(Researcher).where(*conditions).order_by(*most).limit(limit)).all())

    def having(*terms: str) -> list[Researcher]:  # from the terms' (term, papers) index: ties in papers by id
        ranked = session.exec(holding(session, list(terms)).limit(limit)).all()
        return [r for i, _ in ranked if (r := session.get(Researcher, i)) is not None]

    with catalog.session() as session:
        found: list[Researcher] = []
        if (number := whole_number(text)) is not None and (r := session.get(Researcher, number)):
            found = [r]
        for pattern, column in ((_OPENALEX_AUTHOR, Researcher.openalex_id), (_ORCID, Researcher.orcid)):
            if not found and (m := pattern.match(text)):
                found = list(session.exec(select(Researcher).where(column == m.group(1).upper())).all())
        if not found and text.lower().startswith("s2:"):
            found = list(session.exec(select(Researcher).where(Researcher.s2_id == text[3:].strip())).all())
        if not found:
            found = named(Researcher.name_key == key)
        if not found and partial:
            found = having(*(word(w) for w in key.split()[:6]))
        if not found and partial:
            found = having(other_name(text[:100]))
        candidates = [_candidate(session, r) for r in found[:200]]
    candidates.sort(key=lambda c: (-c.paper_count, c.researcher.name, c.researcher.id))
    return candidates[:limit]


def candidates_by_ids(catalog: Catalog, ids: tuple[int, ...]) -> list[ResearcherCandidate]:
    """These researchers with what tells them apart (namesakes: their fields, places and co-authors), in order."""
    with catalog.session() as session:
        return [_candidate(session, r) for i in ids if (r := session.get(Researcher, i)) is not None]


def _candidate(session: Session, researcher: Researcher) -> ResearcherCandidate:
    own = select(Authorship.paper_id).where(Authorship.researcher_id == researcher.id)
    count, first, last = session.exec(
        select(func.count(), func.min(Paper.year), func.max(Paper.year)).where(Paper.id.in_(own))
    ).one()
    places = session.exec(
        select(Institution.name, func.count())
        .join(Authorship, Authorship.institution_id == Institution.id)
        .where(Authorship.researcher_id == researcher.id)
        .group_by(Institution.name)
        .order_by(func.count().desc())
        .limit(2)
    ).all()
    partners = session.exec(
        select(Researcher.name, func.count())
        .join(Authorship, Authorship.researcher_id == Researcher.id)
        .where(Authorship.paper_id.in_(own), Authorship.researcher_id != researcher.id)
        .group_by(Researcher.name)
        .order_by(func.count().desc(), Researcher.name)
        .limit(3)
    ).all()
    return ResearcherCandidate(
        researcher, count, (first, last), fields_of(session, own)[:3], [p[0] for p in places], [p[0] for p in partners]
    )


def researchers_by_ids(catalog: Catalog, ids: list[int]) -> dict[int, Researcher]:
    if not ids:
        return {}
    with catalog.session() as session:
        return {r.id: r for r in session.exec(select(Researcher).where(Researcher.id.in_(ids)))}


def paper_counts(catalog: Catalog, researcher_ids: list[int]) -> dict[int, int]:
    """How many papers each of these researchers has in the catalog (one query; 0 for none)."""
    if not researcher_ids:
        return {}
    with catalog.session() as session:
        rows = session.exec(
            select(Authorship.researcher_id, func.count(func.distinct(Authorship.paper_id)))
            .where(Authorship.researcher_id.in_(researcher_ids))
            .group_by(Authorship.researcher_id)
        ).all()
    return {rid: 0 for rid in researcher_ids} | dict(rows)


def newest_papers_of(catalog: Catalog, researcher_ids: list[int], limit: int = 50) -> list[Paper]:
    """The newest papers by any of these researchers (a personal feed)."""
    if not researcher_ids:
        return []
    with catalog.session() as session:
        own = select(Authorship.paper_id).where(Authorship.researcher_id.in_(researcher_ids))
        return list(session.exec(select(Paper).where(Paper.id.in_(own)).order_by(*newest_first()).limit(limit)).all())
