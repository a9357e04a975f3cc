"""Whole-archive listings: what the sitemap, the feeds and the /researchers and /institutions lists read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import String, cast, func
from sqlmodel import select

from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.counts import PEOPLE_BLOCK, block_key, category_key, read_counts
from retrieval.scholarly.models import Authorship, Institution, Paper, Researcher, normalise_name
from retrieval.scholarly.paging import Pages, PaperList, listing_page
from retrieval.scholarly.terms import holding, word

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


@dataclass(frozen=True)
class SitemapPart:
    """One part of the sitemap's pages of a kind: a run of whole blocks of ids (`offset` 0, every indexable page in
    them), or, of a block holding more than a part may, `size` pages from `offset`."""

    blocks: tuple[str, ...] | tuple[int, ...]
    offset: int = 0
    size: int | None = None


def sitemap_parts(catalog: Catalog, kind: Kind, limit: int) -> list[SitemapPart]:
    """The parts of a kind's indexable pages in order, at most about `limit` pages each: consecutive blocks of ids
    together while they fit, a larger block cut into pages. Read from the blocks' kept counts, never the tables."""
    prefix = block_key(kind, "")
    with catalog.session() as session:
        counts = read_counts(session, prefix)
    as_block = str if kind == "papers" else int
    blocks = sorted((as_block(name.removeprefix(prefix)), n) for name, n in counts.items() if n > 0)
    parts: list[SitemapPart] = []
    run: list = []
    held = 0
    for block, n in blocks:
        if run and (held + n > limit or n > limit):
            parts.append(SitemapPart(tuple(run)))
            run, held = [], 0
        if n > limit:
            parts += [SitemapPart((block,), start, limit) for start in range(0, n, limit)]
        else:
            run.append(block)
            held += n
    return parts + ([SitemapPart(tuple(run))] if run else [])


def sitemap_entries(catalog: Catalog, kind: Kind, part: SitemapPart) -> list[Listed]:
    """The pages of one part: (id, name or title, last modified), by id within each block. A paper's block is
    found in the (id_block, id) index, a person's in the primary key's range: nothing is skipped through."""
    if kind == "papers":
        query = (
            select(Paper.id, Paper.title, Paper.updated, Paper.published)
            .where(Paper.id_block.in_(part.blocks)).order_by(Paper.id_block, Paper.id)
        )  # fmt: skip
    else:
        model, _column = _people(kind)
        query = (
            select(model.id, model.name)
            .where(model.id >= min(part.blocks) * PEOPLE_BLOCK, model.id < (max(part.blocks) + 1) * PEOPLE_BLOCK,
                   model.paper_count > 0).order_by(model.id)
        )  # fmt: skip
    if part.size is not None:
        query = query.offset(part.offset).limit(part.size)
    with catalog.session() as session:
        rows = session.exec(query).all()
    if kind == "papers":
        return [(key, title, updated or published) for key, title, updated, published in rows]
    return [(key, name, None) for key, name in rows]


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
    institution, alias or acronym) holds every word: one page of (id, name, papers), the total, and the page. A
    researcher's words are whole words of the name, read from its terms' index (`retrieval.scholarly.terms`: three
    million names are not read one by one; ties in papers by id); an institution's may be parts of words (tens of
    thousands of rows)."""
    model, _column = _people(kind)
    asked = normalise_name(words).split()[:6]
    if asked and kind == "researchers":
        return _researchers_named(catalog, asked, page, per_page)
    statement = select(model.id, model.name, model.paper_count).where(model.paper_count > 0)
    if asked:
        statement = statement.where(*(Institution.search_key.contains(w) for w in asked))
    with catalog.session() as session:
        if asked:  # a search among the names: counted
            total = session.exec(select(func.count()).select_from(statement.subquery())).one()
        else:  # everyone with papers: a kept count, and the page read from the (papers, name) index
            total = read_counts(session, f"{kind}_with_papers").get(f"{kind}_with_papers", 0)
        at = Pages.of(total, page, per_page)
        order = (model.paper_count.desc(), model.name)
        rows = session.exec(statement.order_by(*order).offset(at.offset).limit(per_page)).all()
    return [tuple(row) for row in rows], total, at


def _researchers_named(catalog: Catalog, asked: list[str], page: int, per_page: int):
    """Researchers with papers whose name has every word: counted and paged in the terms' (term, papers) index,
    then the page's names read by id."""
    with catalog.session() as session:
        found = holding(session, [word(w) for w in asked], with_papers=True)
        total = session.exec(select(func.count()).select_from(found.order_by(None).subquery())).one()
        at = Pages.of(total, page, per_page)
        ranked = session.exec(found.offset(at.offset).limit(per_page)).all()
        ids = [i for i, _ in ranked]
        names = dict(session.exec(select(Researcher.id, Researcher.name).where(Researcher.id.in_(ids))).all())
    return [(i, names[i], papers) for i, papers in ranked if i in names], total, at


def categories(catalog: Catalog, limit: int | None = None) -> list[tuple[str, int]]:
    """Primary arXiv categories with how many papers each holds, most first (kept counts)."""
    with catalog.session() as session:
        kept = read_counts(session, category_key(""))
    found = sorted(((name.removeprefix(category_key("")), n) for name, n in kept.items() if n > 0),
                   key=lambda c: (-c[1], c[0]))  # fmt: skip
    return found[:limit] if limit else found


def all_papers(
    catalog: Catalog, category: str | None, page: int, per_page: int, after: str | None = None,
    before: str | None = None,
) -> PaperList:  # fmt: skip
    """One page of every paper here, newest first, maybe only those of one primary category (counted by the kept
    counts): by its number, or next to a cursor's paper (`paging.listing_page`)."""
    name = category_key(category) if category else "papers"
    with catalog.session() as session:
        total = read_counts(session, name).get(name, 0)
        return listing_page(session, category, per_page, total, after, before, page)
