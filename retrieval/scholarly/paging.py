"""Lists of papers a page at a time, newest first: the one way profiles, lists and feeds cut and count pages."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlalchemy import func
from sqlmodel import Session, select

from retrieval.scholarly.counts import category_key, read_counts
from retrieval.scholarly.models import Paper

PER_PAGE = 24


@dataclass(frozen=True)
class Pages:
    """Where one page sits among all of them."""

    page: int  # from 1, clamped to the pages there are
    pages: int  # at least 1, even with nothing to show
    offset: int

    @classmethod
    def of(cls, total: int, page: int, per_page: int = PER_PAGE) -> "Pages":
        pages = max(1, math.ceil(total / per_page))
        page = min(max(1, page), pages)
        return cls(page, pages, (page - 1) * per_page)


def newest_first():
    return (Paper.published.is_(None), Paper.published.desc(), Paper.year.desc(), Paper.id)


@dataclass(frozen=True)
class PaperList:
    """One page of a profile's papers, newest first, maybe filtered by primary category."""

    papers: list[Paper]
    total: int
    page: int
    pages: int
    category: str | None


def paper_page(
    session: Session,
    ids_query,
    page: int,
    per_page: int,
    category: str | None,
    total: int | None = None,
    member=None,
) -> PaperList:
    """One page of the papers whose ids `ids_query` selects (None: every paper), maybe only those of one primary
    category; `total`: how many there are, when the caller knows (a kept count), else counted. `member`: the same
    selection as a condition on one paper (an EXISTS), for a selection so large that walking the newest-first index
    from the top meets the page sooner than gathering and sorting all its ids would (`_walk_is_shorter`)."""
    if total is None:
        query = select(Paper) if ids_query is None else select(Paper).where(Paper.id.in_(ids_query))
        if category:
            query = query.where(Paper.primary_category == category)
        total = session.exec(select(func.count()).select_from(query.subquery())).one()
    at = Pages.of(total, page, per_page)
    # The page's ids first, from the newest-first index alone (a deep page skips index entries, not rows), then
    # their papers.
    if ids_query is None:
        ids = select(Paper.id)
    elif member is not None and _walk_is_shorter(session, total, at.offset + per_page, category):
        ids = select(Paper.id).where(member)
    else:
        ids = select(Paper.id).where(Paper.id.in_(ids_query))
    if category:
        ids = ids.where(Paper.primary_category == category)
    wanted = list(session.exec(ids.order_by(*newest_first()).offset(at.offset).limit(per_page)).all())
    found = {p.id: p for p in session.exec(select(Paper).where(Paper.id.in_(wanted))).all()}
    return PaperList([found[i] for i in wanted if i in found], total, at.page, at.pages, category)


def _walk_is_shorter(session: Session, total: int, through: int, category: str | None) -> bool:
    """Whether the index entries walked to reach the `through`-th of `total` selected papers (newest first; the
    selection spread evenly among the archive's or the category's papers, as the kept counts say) are fewer than
    the `total` ids the other way gathers and sorts."""
    scope = category_key(category) if category else "papers"
    archive = read_counts(session, scope).get(scope, 0)
    return total > 0 and through * archive / total < total


def fields_of(session: Session, ids_query) -> list[tuple[str, int]]:
    """Primary categories of the selected papers with their counts, most first."""
    rows = session.exec(
        select(Paper.primary_category, func.count())
        .where(Paper.id.in_(ids_query), Paper.primary_category.is_not(None))
        .group_by(Paper.primary_category)
    ).all()
    return sorted(rows, key=lambda r: (-r[1], r[0]))
