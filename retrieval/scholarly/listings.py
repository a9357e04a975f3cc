"""Whole-archive listings: what the sitemap, the feeds and the /researchers and /institutions lists read."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from sqlalchemy import String, cast, func
from sqlmodel import select

from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Authorship, Institution, Paper, Researcher, normalise_name
from retrieval.scholarly.paging import Pages, PaperList, paper_page

Kind = Literal["papers", "researchers", "institutions"]
People = Literal["researchers", "institutions"]


def _people(kind: People):
    """The table of a kind of profile and the authorship column that links papers to it."""
    return (Researcher, Authorship.researcher_id) if kind == "researchers" else (Institution, Authorship.institution_id)


def indexable_count(catalog: Catalog, kind: Kind) -> int:
    """Every paper, and the researchers and institutions that have papers here."""
    with catalog.session() as session:
        if kind == "papers":
            return session.exec(select(func.count()).select_from(Paper)).one()
        _model, column = _people(kind)
        return session.exec(select(func.count(func.distinct(column)))).one()


def indexable_slice(
    catalog: Catalog, kind: Kind, offset: int, limit: int
) -> list[tuple[int | str, str, datetime | None, Paper | None]]:
    """One slice (by id) of what `indexable_count` counts: (id, name or title, last modified, the paper)."""
    with catalog.session() as session:
        if kind == "papers":
            rows = session.exec(select(Paper).order_by(Paper.id).offset(offset).limit(limit)).all()
            return [(p.id, p.title, p.updated or p.published, p) for p in rows]
        model, column = _people(kind)
        has = select(column).where(column.is_not(None))
        rows = session.exec(
            select(model.id, model.name).where(model.id.in_(has)).order_by(model.id).offset(offset).limit(limit)
        ).all()
        return [(i, n, None, None) for i, n in rows]


def newest_papers(catalog: Catalog, category: str | None = None, limit: int = 50) -> list[Paper]:
    """The newest papers with a date, maybe only those listed in one arXiv category."""
    with catalog.session() as session:
        query = select(Paper).where(Paper.published.is_not(None))
        if category:
            query = query.where(cast(Paper.categories, String).like(f'%"{category}"%'))
        return list(session.exec(query.order_by(Paper.published.desc(), Paper.id).limit(limit)).all())


def most_papers(
    catalog: Catalog, kind: People, page: int, per_page: int, words: str = ""
) -> tuple[list[tuple[int, str, int]], int, Pages]:
    """Researchers or institutions with papers here, most papers first, maybe only those whose name (or, for an
    institution, alias or acronym) holds every word: one page of (id, name, papers), the total, and the page."""
    model, column = _people(kind)
    papers = func.count(func.distinct(Authorship.paper_id)).label("papers")
    statement = select(model.id, model.name, papers).join(Authorship, column == model.id).group_by(model.id, model.name)
    if words:
        field = Researcher.name_key if kind == "researchers" else Institution.search_key
        statement = statement.where(*(field.contains(w) for w in normalise_name(words).split()[:6]))
    with catalog.session() as session:
        total = session.exec(select(func.count()).select_from(statement.subquery())).one()
        at = Pages.of(total, page, per_page)
        rows = session.exec(statement.order_by(papers.desc(), model.name).offset(at.offset).limit(per_page)).all()
    return [tuple(row) for row in rows], total, at


def categories(catalog: Catalog, limit: int | None = None) -> list[tuple[str, int]]:
    """Primary arXiv categories with how many papers each holds, most first."""
    papers = func.count().label("papers")
    statement = (
        select(Paper.primary_category, papers)
        .where(Paper.primary_category.is_not(None))
        .group_by(Paper.primary_category)
        .order_by(papers.desc(), Paper.primary_category)
    )
    with catalog.session() as session:
        return [tuple(row) for row in session.exec(statement.limit(limit) if limit else statement).all()]


def all_papers(catalog: Catalog, category: str | None, page: int, per_page: int) -> PaperList:
    """One page of every paper here, newest first, maybe only those of one primary category."""
    with catalog.session() as session:
        return paper_page(session, select(Paper.id), page, per_page, category)
