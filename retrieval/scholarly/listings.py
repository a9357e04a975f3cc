"""Whole-archive listings: what the sitemap, the feeds and the /researchers and /institutions lists read."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from sqlalchemy import String, cast, func
from sqlmodel import select

from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.counts import category_key, read_counts
from retrieval.scholarly.models import Authorship, Institution, Paper, Researcher, normalise_name
from retrieval.scholarly.paging import Pages, PaperList, paper_page

Kind = Literal["papers", "researchers", "institutions"]
People = Literal["researchers", "institutions"]
Listed = tuple[int | str, str, datetime | None]  # (id, name or title, last modified)


def _people(kind: People):
    """The table of a kind of profile and the authorship column that links papers to it."""
    return (Researcher, Authorship.researcher_id) if kind == "researchers" else (Institution, Authorship.institution_id)


def indexable_count(catalog: Catalog, kind: Kind) -> int:
    """Every paper, and the researchers and institutions that have papers here (kept counts: nothing is counted)."""
    name = "papers" if kind == "papers" else f"{kind}_with_papers"
    with catalog.session() as session:
        return read_counts(session, name).get(name, 0)


def indexable_slice(catalog: Catalog, kind: Kind, offset: int, limit: int) -> list[Listed]:
    """One slice of what `indexable_count` counts: (id, name or title, last modified). Papers by id; researchers and
    institutions most papers first (the order of the index that lists them, which holds every field this needs).
    The slice's place is found in an index alone, whatever `offset`; only its own rows are read."""
    with catalog.session() as session:
        if kind == "papers":
            ids = list(session.exec(select(Paper.id).order_by(Paper.id).offset(offset).limit(limit)).all())
            if not ids:
                return []
            rows = session.exec(
                select(Paper.id, Paper.title, Paper.updated, Paper.published)
                .where(Paper.id >= ids[0], Paper.id <= ids[-1]).order_by(Paper.id)
            ).all()  # fmt: skip
            return [(i, title, updated or published) for i, title, updated, published in rows]
        model, _column = _people(kind)
        rows = session.exec(
            select(model.id, model.name).where(model.paper_count > 0)
            .order_by(model.paper_count.desc(), model.name).offset(offset).limit(limit)
        ).all()  # fmt: skip
        return [(i, n, None) for i, n in rows]


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
    model, _column = _people(kind)
    statement = select(model.id, model.name, model.paper_count).where(model.paper_count > 0)
    if words:
        field = Researcher.name_key if kind == "researchers" else Institution.search_key
        statement = statement.where(*(field.contains(w) for w in normalise_name(words).split()[:6]))
    with catalog.session() as session:
        if words:  # a search among the names: counted
            total = session.exec(select(func.count()).select_from(statement.subquery())).one()
        else:  # everyone with papers: a kept count, and the page read from the (papers, name) index
            total = read_counts(session, f"{kind}_with_papers").get(f"{kind}_with_papers", 0)
        at = Pages.of(total, page, per_page)
        order = (model.paper_count.desc(), model.name)
        rows = session.exec(statement.order_by(*order).offset(at.offset).limit(per_page)).all()
    return [tuple(row) for row in rows], total, at


def categories(catalog: Catalog, limit: int | None = None) -> list[tuple[str, int]]:
    """Primary arXiv categories with how many papers each holds, most first (kept counts)."""
    with catalog.session() as session:
        kept = read_counts(session, category_key(""))
    found = sorted(((name.removeprefix(category_key("")), n) for name, n in kept.items() if n > 0),
                   key=lambda c: (-c[1], c[0]))  # fmt: skip
    return found[:limit] if limit else found


def all_papers(catalog: Catalog, category: str | None, page: int, per_page: int) -> PaperList:
    """One page of every paper here, newest first, maybe only those of one primary category (counted by the kept
    counts)."""
    name = category_key(category) if category else "papers"
    with catalog.session() as session:
        total = read_counts(session, name).get(name, 0)
        return paper_page(session, None, page, per_page, category, total=total)
