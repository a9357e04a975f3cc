"""Lists of papers a page at a time, newest first: the one way profiles, lists and feeds cut and count pages."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from sqlalchemy import and_, false, func, or_, true
from sqlmodel import Session, select

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
    page: int  # 0 on a page reached by a cursor (`listing_page`): its number is not counted
    pages: int
    category: str | None
    newer: str | None = None  # cursors for the pages either side (`listing_page`), None at either end
    older: str | None = None


def page_of_papers(
    session: Session, ids_query, page: int, per_page: int, category: str | None, total: int | None = None
) -> PaperList:
    """One page of the papers whose ids `ids_query` selects (None: every paper), maybe only those of one primary
    category; `total`: how many there are, when the caller knows (a kept count), else counted."""
    if total is None:
        query = select(Paper) if ids_query is None else select(Paper).where(Paper.id.in_(ids_query))
        if category:
            query = query.where(Paper.primary_category == category)
        total = session.exec(select(func.count()).select_from(query.subquery())).one()
    # The page's ids first, from the newest-first index alone (a deep page skips index entries, not rows), then
    # their papers.
    ids = select(Paper.id) if ids_query is None else select(Paper.id).where(Paper.id.in_(ids_query))
    if category:
        ids = ids.where(Paper.primary_category == category)
    return ordered_page(session, ids.order_by(*newest_first()), total, page, per_page, category)


def ordered_page(session: Session, ordered_ids, total: int, page: int, per_page: int, category: str | None
                 ) -> PaperList:  # fmt: skip
    """Page `page` of the `total` paper ids `ordered_ids` selects in the order shown, with their papers."""
    at = Pages.of(total, page, per_page)
    wanted = list(session.exec(ordered_ids.offset(at.offset).limit(per_page)).all())
    found = {p.id: p for p in session.exec(select(Paper).where(Paper.id.in_(wanted))).all()} if wanted else {}
    return PaperList([found[i] for i in wanted if i in found], total, at.page, at.pages, category)


def listing_page(
    session: Session, category: str | None, per_page: int, total: int, after: str | None = None,
    before: str | None = None, page: int = 1,
) -> PaperList:  # fmt: skip
    """One page of every paper (maybe of one primary category), newest first, with cursors to the pages either side:
    the page just past the paper `after` (older), or just before the paper `before` (newer), read by seeking the
    newest-first index to that paper's place (a keyset: a page a million papers deep costs what the first does).
    Without a cursor, page `page` by its number (the index walked from the top: for the first pages, and old links).
    A cursor that names no paper here gives the first page."""
    boundary = session.get(Paper, after or before) if (after or before) else None
    if boundary is None:
        at = Pages.of(total, page, per_page)
        ids = select(Paper.id).order_by(*newest_first()).offset(at.offset).limit(per_page + 1)
        ids = ids.where(Paper.primary_category == category) if category else ids
        wanted = list(session.exec(ids).all())
        newer = wanted[0] if wanted and at.page > 1 else None
        return _listed(session, wanted, per_page, total, at, category, newer, more=len(wanted) > per_page)
    older = after is not None
    wanted = _beyond(session, boundary, category, per_page + 1, older)
    if older:  # the newer side begins with this page's first paper (the boundary is on it)
        newer = wanted[0] if wanted else None
        return _listed(session, wanted, per_page, total, None, category, newer, more=len(wanted) > per_page)
    if not wanted:  # nothing is newer than the boundary: the first page
        return listing_page(session, category, per_page, total)
    more_newer = len(wanted) > per_page
    wanted = wanted[:per_page][::-1]
    listed = _listed(session, wanted, per_page, total, None, category, None, more=True)
    return replace(listed, newer=wanted[0] if more_newer else None)


def _listed(session, wanted, per_page, total, at, category, newer, more) -> PaperList:
    shown = wanted[:per_page]
    found = {p.id: p for p in session.exec(select(Paper).where(Paper.id.in_(shown))).all()} if shown else {}
    page, pages = (at.page, at.pages) if at else (0, max(1, math.ceil(total / per_page)))
    older = shown[-1] if more and shown else None
    return PaperList([found[i] for i in shown if i in found], total, page, pages, category, newer, older)


def _beyond(session: Session, boundary: Paper, category: str | None, limit: int, older: bool) -> list[str]:
    """Up to `limit` ids of the papers next to `boundary` in newest-first order, older ones (after it) or newer ones
    (before it, nearest first). Papers with a date come before those without, so each side is read in two parts,
    each a range of the newest-first index: the dated ones from the boundary's date, then the undated ones."""
    dialect = session.get_bind().dialect.name
    nulls_first = dialect != "sqlite"  # where `year DESC` puts a missing year: PostgreSQL first, SQLite last
    parts = [False, True] if older else [True, False]  # (undated?) in the order they are met
    found: list[str] = []
    for undated in parts:
        if boundary.published is None and not undated and older:
            continue  # past an undated paper nothing dated remains
        if boundary.published is not None and undated and not older:
            continue  # before a dated paper nothing undated stands
        query = select(Paper.id).where(Paper.published.is_(None) == (true() if undated else false()))
        query = query.where(Paper.primary_category == category) if category else query
        if (boundary.published is None) == undated:  # the boundary's own part: from its place on
            query = query.where(_past(boundary, older, nulls_first))
            if not undated:
                date = Paper.published <= boundary.published if older else Paper.published >= boundary.published
                query = query.where(date)
        found += session.exec(query.order_by(*_order(dialect, older)).limit(limit - len(found))).all()
        if len(found) >= limit:
            break
    return found


def _order(dialect: str, older: bool):
    """The newest-first order within one part (dated or not), as each database reads it off the index: SQLite only
    without the part's constant first term, PostgreSQL only with it; reversed to read newer papers nearest first."""
    terms = newest_first() if older else (Paper.published.is_(None).desc(), Paper.published.asc(), Paper.year.asc(),
                                            Paper.id.desc())  # fmt: skip
    return terms[1:] if dialect == "sqlite" else terms


def _past(boundary: Paper, older: bool, nulls_first: bool):
    """Papers strictly past `boundary` (older) or strictly before it (newer) within its own part: by date, then
    year (where the database puts a missing year), then id."""
    year, pid = boundary.year, boundary.id
    if older:
        same_year = and_(Paper.year == year, Paper.id > pid) if year is not None else and_(Paper.year.is_(None),
                                                                                           Paper.id > pid)
        if year is None:
            by_year = or_(same_year, Paper.year.is_not(None)) if nulls_first else same_year
        else:
            by_year = or_(Paper.year < year, same_year, *([] if nulls_first else [Paper.year.is_(None)]))
    else:
        same_year = and_(Paper.year == year, Paper.id < pid) if year is not None else and_(Paper.year.is_(None),
                                                                                           Paper.id < pid)
        if year is None:
            by_year = same_year if nulls_first else or_(same_year, Paper.year.is_not(None))
        else:
            by_year = or_(Paper.year > year, same_year, *([Paper.year.is_(None)] if nulls_first else []))
    if boundary.published is None:
        return by_year
    nearer = Paper.published < boundary.published if older else Paper.published > boundary.published
    return or_(nearer, and_(Paper.published == boundary.published, by_year))


def fields_of(session: Session, ids_query) -> list[tuple[str, int]]:
    """Primary categories of the selected papers with their counts, most first."""
    rows = session.exec(
        select(Paper.primary_category, func.count())
        .where(Paper.id.in_(ids_query), Paper.primary_category.is_not(None))
        .group_by(Paper.primary_category)
    ).all()
    return sorted(rows, key=lambda r: (-r[1], r[0]))
