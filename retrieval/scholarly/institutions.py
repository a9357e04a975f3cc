"""Institutions in the catalog: their profile, and resolving what people write about one (ids, names, aliases,
acronyms, raw affiliation strings) with the affiliation resolver, kept per catalog until institutions change."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import String, cast, func
from sqlmodel import select

from retrieval.scholarly.affiliations import AffiliationResolver, Match, MatchedBy
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Authorship, Institution, Researcher
from retrieval.scholarly.paging import PER_PAGE, PaperList, fields_of, paper_page
from retrieval.scholarly.records import whole_number

AFFILIATION_THRESHOLD = 0.75  # below it the resolver's best guess is shown as a candidate, not an answer
_ROR = re.compile(r"^(?:https?://)?(?:www\.)?(?:ror\.org/)?(0[a-z0-9]{6}\d{2})/?$", re.IGNORECASE)
_OPENALEX_INSTITUTION = re.compile(r"^(?:https?://openalex\.org/)?(I\d+)$", re.IGNORECASE)


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
    catalog: Catalog, institution_id: int, page: int = 1, category: str | None = None, per_page: int | None = None
) -> InstitutionProfile | None:
    per_page = per_page or PER_PAGE
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
        papers = paper_page(session, own, page, per_page, category)
        # the 50 members with the most papers here, ordered and cut by the database (a large institution has tens of
        # thousands), and how many there are
        papers_here = func.count(func.distinct(Authorship.paper_id)).label("papers")
        members = session.exec(
            select(Researcher.id, Researcher.name, papers_here)
            .join(Authorship, Authorship.researcher_id == Researcher.id)
            .where(Authorship.institution_id == institution_id)
            .group_by(Researcher.id, Researcher.name)
            .order_by(papers_here.desc(), Researcher.name)
            .limit(50)
        ).all()
        member_count = session.exec(
            select(func.count(func.distinct(Authorship.researcher_id)))
            .where(Authorship.institution_id == institution_id)
        ).one()
        return InstitutionProfile(
            institution,
            by_ror(institution.parent_rors),
            children,
            institution.paper_count,  # kept as the catalog is written (`retrieval.scholarly.counts`)
            papers,
            fields_of(session, own),
            [Member(*m) for m in members],
            member_count,
        )


@dataclass(frozen=True)
class InstitutionLookup:
    """The institution a text names, or None with the closest candidates (and their scores)."""

    institution: Institution | None
    how: MatchedBy
    candidates: list[tuple[Institution, float]]


def affiliation_resolver(catalog: Catalog) -> AffiliationResolver:
    """The resolver over the catalog's institutions, built again after any write to them (a new institution, an
    alias or acronym merged in), in this process or another: `Catalog.version("institutions")` counts them."""
    return catalog.cached(
        "institutions", lambda session: AffiliationResolver.from_records(session.exec(select(Institution)).all())
    )


def find_institution(catalog: Catalog, text: str, threshold: float | None = None) -> InstitutionLookup:
    """By our id, a ROR id or URL, an OpenAlex id or URL, or any name, alias, acronym or affiliation string."""
    threshold = AFFILIATION_THRESHOLD if threshold is None else threshold
    text = (text or "").strip()[:1000]
    if not text:
        return InstitutionLookup(None, MatchedBy.EMPTY, [])
    with catalog.session() as session:
        found = None
        how: MatchedBy | None = None
        if (number := whole_number(text)) is not None:
            found, how = session.get(Institution, number), MatchedBy.ID
        elif m := _ROR.match(text):
            found = session.exec(select(Institution).where(Institution.ror_id == m.group(1).lower())).first()
            how = MatchedBy.ROR
        elif m := _OPENALEX_INSTITUTION.match(text):
            found = session.exec(select(Institution).where(Institution.openalex_id == m.group(1).upper())).first()
            how = MatchedBy.OPENALEX
        if how is not None:
            return InstitutionLookup(found, how if found else MatchedBy.NOT_FOUND, [])
    resolver = affiliation_resolver(catalog)
    matches: list[Match] = resolver.resolve(text, limit=5) or resolver.closest(text, limit=5)
    with catalog.session() as session:
        rows = {i.id: i for i in session.exec(select(Institution).where(Institution.id.in_([m.id for m in matches])))}
    candidates = [(rows[m.id], m.score) for m in matches if m.id in rows]
    if candidates and candidates[0][1] >= threshold:
        return InstitutionLookup(candidates[0][0], matches[0].evidence, candidates)
    return InstitutionLookup(None, MatchedBy.NOT_FOUND, candidates)

