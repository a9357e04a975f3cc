"""Institutions in the catalog: their profile, and resolving what people write about one (ids, names, aliases,
acronyms, raw affiliation strings) with the affiliation resolver, kept per catalog until institutions change."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import String, cast, func
from sqlmodel import select

from retrieval.scholarly.affiliations import AffiliationResolver, Match, MatchedBy
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import INSTITUTION_NEWEST, Authorship, Institution, InstitutionPaper, Researcher
from retrieval.scholarly.paging import PER_PAGE, PaperList, ordered_page
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
        papers = _papers_here(session, institution, page, per_page, category)
        members = _most_papers_here(session, institution_id, 50)
        member_count = session.exec(
            select(func.count(func.distinct(Authorship.researcher_id)))
            .where(Authorship.institution_id == institution_id)
        ).one()
        return InstitutionProfile(
            institution,
            by_ror(institution.parent_rors),
            children,
            institution.paper_count,
            papers,
            _fields_here(session, institution_id),
            [Member(*m) for m in members],
            member_count,
        )


def _papers_here(session, institution: Institution, page: int, per_page: int, category: str | None) -> PaperList:
    """A page of the institution's papers, newest first, maybe of one primary category: from one range of the
    institution's papers' newest-first index (`InstitutionPaper`), whatever the institution's size."""
    held = select(InstitutionPaper.paper_id).where(InstitutionPaper.institution_id == institution.id)
    total = institution.paper_count  # kept as the catalog is written
    if category:
        held = held.where(InstitutionPaper.primary_category == category)
        total = session.exec(select(func.count()).select_from(held.subquery())).one()
    return ordered_page(session, held.order_by(*INSTITUTION_NEWEST), total, page, per_page, category)


def _fields_here(session, institution_id: int) -> list[tuple[str, int]]:
    """The primary categories of the institution's papers with their counts, most first (then by name)."""
    rows = session.exec(
        select(InstitutionPaper.primary_category, func.count())
        .where(InstitutionPaper.institution_id == institution_id, InstitutionPaper.primary_category.is_not(None))
        .group_by(InstitutionPaper.primary_category)
    ).all()  # fmt: skip
    return sorted(rows, key=lambda r: (-r[1], r[0]))


def _most_papers_here(session, institution_id: int, limit: int) -> list[tuple[int, str, int]]:
    """The `limit` members with the most papers here, ties by researcher id (the first known first): (id, name,
    papers). A large institution has tens of thousands: their counts come from the (institution, researcher, paper)
    index alone, and only the `limit` shown are joined to their names. (Ties by name read the name of every member
    tied at the cutoff, often all those with one paper here: 233 ms for one institution from a cold cache at a
    million papers, BENCHMARKS.md.)"""
    counts = (
        select(Authorship.researcher_id.label("researcher_id"),
               func.count(func.distinct(Authorship.paper_id)).label("papers"))
        .where(Authorship.institution_id == institution_id, Authorship.researcher_id.is_not(None))
        .group_by(Authorship.researcher_id)
        .order_by(func.count(func.distinct(Authorship.paper_id)).desc(), Authorship.researcher_id)
        .limit(limit)
        .subquery("counts")
    )  # fmt: skip
    return list(session.exec(
        select(Researcher.id, Researcher.name, counts.c.papers)
        .join(counts, counts.c.researcher_id == Researcher.id)
        .order_by(counts.c.papers.desc(), Researcher.id)
    ).all())  # fmt: skip


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


def look_up_institution(catalog: Catalog, text: str, threshold: float | None = None) -> InstitutionLookup:
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

