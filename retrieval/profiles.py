"""Researcher and institution profiles from the catalog: what their pages and the agent's tools show."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from sqlalchemy import String, cast, func
from sqlmodel import Session, select

from retrieval.affiliations import AffiliationResolver, Match
from retrieval.catalog import Catalog
from retrieval.models import Authorship, Citation, Institution, Paper, Researcher
from retrieval.records import whole_number
from retrieval.upsert import normalise_name

PER_PAGE = 24
AFFILIATION_THRESHOLD = 0.75  # below it the resolver's best guess is shown as a candidate, not an answer
_ROR = re.compile(r"^(?:https?://)?(?:www\.)?(?:ror\.org/)?(0[a-z0-9]{6}\d{2})/?$", re.IGNORECASE)
_OPENALEX_INSTITUTION = re.compile(r"^(?:https?://openalex\.org/)?(I\d+)$", re.IGNORECASE)
_OPENALEX_AUTHOR = re.compile(r"^(?:https?://openalex\.org/)?(A\d+)$", re.IGNORECASE)
_ORCID = re.compile(r"^(?:https?://orcid\.org/)?(\d{4}-\d{4}-\d{4}-\d{3}[\dX])$", re.IGNORECASE)


def _newest_first():
    return (Paper.published.is_(None), Paper.published.desc(), Paper.year.desc(), Paper.id)


@dataclass(frozen=True)
class PaperList:
    """One page of a profile's papers, newest first, maybe filtered by primary category."""

    papers: list[Paper]
    total: int
    page: int
    pages: int
    category: str | None


def _paper_page(session: Session, ids_query, page: int, per_page: int, category: str | None) -> PaperList:
    query = select(Paper).where(Paper.id.in_(ids_query))
    if category:
        query = query.where(Paper.primary_category == category)
    total = session.exec(select(func.count()).select_from(query.subquery())).one()
    pages = max(1, math.ceil(total / per_page))
    page = min(max(1, page), pages)
    rows = session.exec(query.order_by(*_newest_first()).offset((page - 1) * per_page).limit(per_page)).all()
    return PaperList(list(rows), total, page, pages, category)


def _fields(session: Session, ids_query) -> list[tuple[str, int]]:
    rows = session.exec(
        select(Paper.primary_category, func.count())
        .where(Paper.id.in_(ids_query), Paper.primary_category.is_not(None))
        .group_by(Paper.primary_category)
    ).all()
    return sorted(rows, key=lambda r: (-r[1], r[0]))


# --- researchers ----------------------------------------------------------------------------------
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

    def external_ids(self) -> dict[str, str]:
        r = self.researcher
        return {k: v for k, v in (("OpenAlex", r.openalex_id), ("ORCID", r.orcid), ("Semantic Scholar", r.s2_id)) if v}


def _position(index: int, count: int) -> str:
    if count == 1:
        return "sole"
    return "first" if index == 0 else "last" if index == count - 1 else "middle"


def researcher_profile(
    catalog: Catalog, researcher_id: int, page: int = 1, category: str | None = None, per_page: int = PER_PAGE
) -> ResearcherProfile | None:
    with catalog.session() as session:
        researcher = session.get(Researcher, researcher_id)
        if researcher is None:
            return None
        own = select(Authorship.paper_id).where(Authorship.researcher_id == researcher_id)
        papers = _paper_page(session, own, page, per_page, category)
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
            researcher, paper_count, papers, dict(positions), matched, _fields(session, own), coauthors, institutions,
            tuple(years),
        )  # fmt: skip


@dataclass(frozen=True)
class ResearcherCandidate:
    """A researcher who may be the one asked about, with what tells them apart."""

    researcher: Researcher
    paper_count: int
    years: tuple[int | None, int | None]
    fields: list[tuple[str, int]]
    institutions: list[str]
    coauthors: list[str]


def find_researchers(catalog: Catalog, text: str, limit: int = 10) -> list[ResearcherCandidate]:
    """Researchers by an id (ours, OpenAlex, ORCID, Semantic Scholar), a full name (accents and
    punctuation ignored, alternative names included), or every word of a partial name; most papers first."""
    text = (text or "").strip()[:300]
    key = normalise_name(text)
    if not key:
        return []
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
            found = list(session.exec(select(Researcher).where(Researcher.name_key == key)).all())
        if not found:
            words = key.split()[:6]
            query = select(Researcher).where(*(Researcher.name_key.contains(w) for w in words)).limit(200)
            found = [r for r in session.exec(query).all() if set(words) <= set((r.name_key or "").split())]
        if not found:
            alias = f'%"{text[:100]}"%'
            found = list(session.exec(select(Researcher).where(cast(Researcher.aliases, String).like(alias))).all())
        candidates = [_candidate(session, r) for r in found[:200]]
    candidates.sort(key=lambda c: (-c.paper_count, c.researcher.name, c.researcher.id))
    return candidates[:limit]


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
        researcher, count, (first, last), _fields(session, own)[:3], [p[0] for p in places], [p[0] for p in partners]
    )


# --- institutions ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Member:
    researcher_id: int
    name: str
    papers: int


@dataclass(frozen=True)
class InstitutionProfile:
    institution: Institution
    parents: list[Institution]
    children: list[Institution]
    paper_count: int
    papers: PaperList
    fields: list[tuple[str, int]]
    researchers: list[Member]
    researcher_count: int


def institution_profile(
    catalog: Catalog, institution_id: int, page: int = 1, category: str | None = None, per_page: int = PER_PAGE
) -> InstitutionProfile | None:
    with catalog.session() as session:
        institution = session.get(Institution, institution_id)
        if institution is None:
            return None

        def by_ror(rors: list[str]) -> list[Institution]:
            if not rors:
                return []
            return sorted(
                session.exec(select(Institution).where(Institution.ror_id.in_(rors))).all(), key=lambda i: i.name
            )

        children = by_ror(institution.child_rors)
        if institution.ror_id:  # children that name this one as their parent, too
            known = {c.id for c in children}
            more = session.exec(
                select(Institution).where(cast(Institution.parent_rors, String).like(f'%"{institution.ror_id}"%'))
            ).all()
            children += sorted((c for c in more if c.id not in known), key=lambda i: i.name)
        own = select(Authorship.paper_id).where(Authorship.institution_id == institution_id)
        papers = _paper_page(session, own, page, per_page, category)
        paper_count = session.exec(
            select(func.count(func.distinct(Authorship.paper_id))).where(Authorship.institution_id == institution_id)
        ).one()
        members = session.exec(
            select(Researcher.id, Researcher.name, func.count(func.distinct(Authorship.paper_id)))
            .join(Authorship, Authorship.researcher_id == Researcher.id)
            .where(Authorship.institution_id == institution_id)
            .group_by(Researcher.id, Researcher.name)
        ).all()
        researchers = sorted((Member(*m) for m in members), key=lambda m: (-m.papers, m.name))
        return InstitutionProfile(
            institution,
            by_ror(institution.parent_rors),
            children,
            paper_count,
            papers,
            _fields(session, own),
            researchers[:50],
            len(researchers),
        )


@dataclass(frozen=True)
class InstitutionLookup:
    """The institution a text names, or None with the closest candidates (and their scores)."""

    institution: Institution | None
    how: str
    candidates: list[tuple[Institution, float]]


_resolvers: dict[str, tuple[tuple, AffiliationResolver]] = {}


def affiliation_resolver(catalog: Catalog) -> AffiliationResolver:
    """The resolver over the catalog's institutions, rebuilt when institutions were added."""
    with catalog.session() as session:
        stamp = tuple(session.exec(select(func.count(), func.max(Institution.id))).one())
        cached = _resolvers.get(catalog.url)
        if cached and cached[0] == stamp:
            return cached[1]
        resolver = AffiliationResolver.from_records(session.exec(select(Institution)).all())
    _resolvers[catalog.url] = (stamp, resolver)
    return resolver


def find_institution(catalog: Catalog, text: str, threshold: float = AFFILIATION_THRESHOLD) -> InstitutionLookup:
    """By our id, a ROR id or URL, an OpenAlex id or URL, or any name, alias, acronym or affiliation string."""
    text = (text or "").strip()[:1000]
    if not text:
        return InstitutionLookup(None, "empty", [])
    with catalog.session() as session:
        found = None
        how = ""
        if (number := whole_number(text)) is not None:
            found, how = session.get(Institution, number), "id"
        elif m := _ROR.match(text):
            found = session.exec(select(Institution).where(Institution.ror_id == m.group(1).lower())).first()
            how = "ROR id"
        elif m := _OPENALEX_INSTITUTION.match(text):
            found = session.exec(select(Institution).where(Institution.openalex_id == m.group(1).upper())).first()
            how = "OpenAlex id"
        if found is not None or how:
            return InstitutionLookup(found, how if found else "not found", [])
    resolver = affiliation_resolver(catalog)
    matches: list[Match] = resolver.resolve(text, limit=5) or resolver.closest(text, limit=5)
    with catalog.session() as session:
        rows = {i.id: i for i in session.exec(select(Institution).where(Institution.id.in_([m.id for m in matches])))}
    candidates = [(rows[m.id], m.score) for m in matches if m.id in rows]
    if candidates and candidates[0][1] >= threshold:
        return InstitutionLookup(candidates[0][0], matches[0].evidence, candidates)
    return InstitutionLookup(None, "not found", candidates)


# --- citations ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CitedBy:
    papers: list[Paper]
    total: int
    outside_count: int | None  # cited_by_count from OpenAlex/S2, covering papers outside this archive


def cited_by(catalog: Catalog, paper_id: str, limit: int = 50) -> CitedBy:
    """Papers of the archive that cite this one (newest first), and the wider count the sources give."""
    with catalog.session() as session:
        citing = select(Citation.citing_id).where(Citation.cited_id == paper_id)
        total = session.exec(
            select(func.count(func.distinct(Citation.citing_id))).where(Citation.cited_id == paper_id)
        ).one()
        papers = session.exec(select(Paper).where(Paper.id.in_(citing)).order_by(*_newest_first()).limit(limit)).all()
        paper = session.get(Paper, paper_id)
    return CitedBy(list(papers), total, paper.cited_by_count if paper else None)


def institutions_named(catalog: Catalog, ids: list[int]) -> dict[int, str]:
    if not ids:
        return {}
    with catalog.session() as session:
        return dict(session.exec(select(Institution.id, Institution.name).where(Institution.id.in_(ids))).all())


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
        return list(session.exec(select(Paper).where(Paper.id.in_(own)).order_by(*_newest_first()).limit(limit)).all())
