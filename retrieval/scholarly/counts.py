"""Counts kept as the catalog is written, so no page counts a table of a million rows: how many papers,
researchers, institutions, authorships and citations there are, papers per primary category, each researcher's
and institution's papers (`paper_count`, which orders the "most papers" lists from an index), each institution's
papers with their dates and categories (`InstitutionPaper`: an institution's page is read from one index range), and
how many of the pages the sitemap lists fall in each block of ids (`block_key`: the sitemap's parts are cut by these
blocks, so a part is read from its own range of an index, never from an OFFSET into millions of rows).

Every write goes through an ORM session. Each flush notes what it added, deleted or changed in the transaction's
journal (`_note`; a SAVEPOINT rolled back takes its part of the journal back, as the ingest's one bad record does).
Before the transaction commits, the people whose authorships changed are counted again (one UPDATE per 500 of
them, each count read from the authorships' index), the institutions' papers of the papers whose authorships or
dates changed are written again (`hold`), and the totals move by what changed (`_settle`), in the same
transaction: a count is never ahead of or behind the rows it counts. `recount_all` counts everything from the
rows (the migration that brought these counts, a bulk load that wrote rows directly, a repair).
"""

from __future__ import annotations

from collections import Counter

from sqlalchemy import case, delete, func, insert, inspect, select, update
from sqlalchemy.engine import Connection
from sqlmodel import Session

from retrieval.scholarly.models import (
    Authorship,
    CatalogCount,
    Citation,
    Institution,
    InstitutionPaper,
    Paper,
    Researcher,
    paper_block,
)
from retrieval.scholarly.terms import set_papers

_TOTALS = {Paper: "papers", Researcher: "researchers", Institution: "institutions", Authorship: "authorships",
           Citation: "citations"}  # fmt: skip
_PEOPLE = {Researcher: Authorship.researcher_id, Institution: Authorship.institution_id}
_CHUNK = 500
_HELD = ("published", "year", "primary_category")  # a paper's columns `InstitutionPaper` keeps beside it
PEOPLE_BLOCK = 10_000  # researchers and institutions: ids [n * PEOPLE_BLOCK, (n + 1) * PEOPLE_BLOCK) form block n
_NOTES = "scholarloom.counts"  # session.info: the transaction's journal of changes
_MARKS = "scholarloom.counts.savepoints"  # session.info: where the journal stood when each SAVEPOINT began (`_journal`)


def category_key(category: str) -> str:
    return f"category:{category}"


def with_papers_key(model) -> str:
    return f"{_TOTALS[model]}_with_papers"


def block_key(kind: str, block: str | int) -> str:
    """The kept count of the sitemap's pages of a kind ("papers", "researchers", "institutions") in one block."""
    return f"block:{kind}:{block}"


def _old(row, field: str):
    """What `field` held before this flush changed it (its value when unchanged)."""
    history = inspect(row).attrs[field].history
    return history.deleted[0] if history.deleted else getattr(row, field)


def _note(session: Session, _context) -> None:
    """After a flush: what it added and deleted, and whose authorships and which categories it changed, appended to
    the transaction's journal ((count name, change) and (kind of people, id) entries)."""
    journal = _journal(session)
    for rows, sign in ((session.new, 1), (session.deleted, -1)):
        for row in rows:
            if (name := _TOTALS.get(type(row))) is not None:
                journal.append((name, sign))
            if isinstance(row, Paper):
                journal.append((block_key("papers", paper_block(row.id)), sign))
                if row.primary_category:
                    journal.append((category_key(row.primary_category), sign))
                if sign < 0:
                    journal.append((InstitutionPaper, row.id))
            if isinstance(row, Authorship):
                journal += [(model, v) for model, column in _PEOPLE.items() if (v := getattr(row, column.key))]
                if row.institution_id is not None:
                    journal.append((InstitutionPaper, row.paper_id))
    for row in session.dirty:
        if isinstance(row, Paper) and (old := _old(row, "primary_category")) != row.primary_category:
            journal += [(category_key(old), -1)] if old else []
            journal += [(category_key(row.primary_category), 1)] if row.primary_category else []
        if isinstance(row, Paper) and any(inspect(row).attrs[f].history.has_changes() for f in _HELD):
            journal.append((InstitutionPaper, row.id))
        if isinstance(row, Authorship):
            for model, column in _PEOPLE.items():
                journal += [(model, v) for v in (_old(row, column.key), getattr(row, column.key)) if v is not None]
            if _old(row, "institution_id") is not None or row.institution_id is not None:
                journal += [(InstitutionPaper, p) for p in {_old(row, "paper_id"), row.paper_id}]


def _note_deleted(session: Session, _context, _instances) -> None:
    """Before a flush deletes researchers or institutions: those that were counted as having papers (their stored
    count, read now, before the rows go) leave that count; `_recount` cannot see them once they are gone."""
    journal = _journal(session)
    for model in _PEOPLE:
        ids = [row.id for row in session.deleted if isinstance(row, model) and row.id is not None]
        for start in range(0, len(ids), _CHUNK):
            counted = session.connection().execute(
                select(model.id).where(model.id.in_(ids[start : start + _CHUNK]), model.paper_count > 0)
            ).scalars()
            for counted_id in counted:
                journal += [(with_papers_key(model), -1), (_people_block_key(model, counted_id), -1)]


def _journal(session: Session) -> list:
    """The transaction's journal, about to be written: each SAVEPOINT open now is first marked where the journal
    stands, unless it was marked already, so that rolling it back takes back what was noted inside it. Nothing is
    noted inside a SAVEPOINT before its first flush, so the journal stands then where it stood when the SAVEPOINT
    began; a session that only reads never flushes and is never marked."""
    journal = session.info.setdefault(_NOTES, [])
    marks = session.info.setdefault(_MARKS, {})
    transaction = session.get_nested_transaction()
    while transaction is not None and transaction.nested:
        marks.setdefault(transaction, len(journal))
        transaction = transaction.parent
    return journal


def _rolled_back(session: Session, previous) -> None:
    """A rollback: a SAVEPOINT's cuts the journal back to where it began; the whole transaction's empties it."""
    mark = session.info.get(_MARKS, {}).pop(previous, None)
    if previous.nested and mark is not None:
        del session.info.get(_NOTES, [])[mark:]
    elif not previous.nested:
        _forget(session)


def _settle(session: Session) -> None:
    """Before the commit: the noted people counted again, the totals moved, in this transaction. A SAVEPOINT's
    release (which SQLAlchemy also calls a commit) leaves its notes for the transaction's own commit, so a batch of
    records settles once, not once a record."""
    if session.in_nested_transaction():
        return
    if session.new or session.deleted or session.dirty:
        session.flush()  # the commit's own flush comes after this hook: make it now, so its rows are counted
    journal = session.info.pop(_NOTES, None)
    session.info.pop(_MARKS, None)
    if not journal:
        return
    totals: Counter = Counter()
    people: dict = {Researcher: set(), Institution: set(), InstitutionPaper: set()}
    for key, value in journal:
        if key in people:
            people[key].add(value)
        else:
            totals[key] += value
    connection = session.connection()
    held = people.pop(InstitutionPaper)
    for model, ids in people.items():
        totals.update(_recount(connection, model, sorted(ids)))
    hold(connection, sorted(held))
    _add(connection, {name: change for name, change in totals.items() if change})


def _forget(session: Session, *_args) -> None:
    session.info.pop(_NOTES, None)
    session.info.pop(_MARKS, None)


def _people_block_key(model, person_id: int) -> str:
    return block_key(_TOTALS[model], person_id // PEOPLE_BLOCK)


def _recount(connection: Connection, model, ids: list[int]) -> Counter:
    """`ids`' paper counts from their authorships; returns how many more of them have papers than before, in all
    and in each block."""
    column, change = _PEOPLE[model], Counter()
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        before = dict(connection.execute(select(model.id, model.paper_count).where(model.id.in_(chunk))).all())
        papers = select(func.count(func.distinct(Authorship.paper_id))).where(column == model.id).scalar_subquery()
        connection.execute(update(model).where(model.id.in_(chunk)).values(paper_count=papers))
        after = dict(connection.execute(select(model.id, model.paper_count).where(model.id.in_(chunk))).all())
        if model is Researcher:  # the count beside the researcher's search terms moves with it
            set_papers(connection, [i for i in after if after[i] != before.get(i)])
        for i in set(before) | set(after):
            if moved := (after.get(i, 0) > 0) - (before.get(i, 0) > 0):
                change[with_papers_key(model)] += moved
                change[_people_block_key(model, i)] += moved
    return change


def _held_rows(papers=None):
    """(institution, paper, the paper's date, year and primary category) for each institution an authorship of
    the paper names: of `papers` (a statement or list of ids), or of every paper."""
    rows = (
        select(Authorship.institution_id, Paper.id, Paper.published, Paper.year, Paper.primary_category)
        .join(Paper, Paper.id == Authorship.paper_id)
        .where(Authorship.institution_id.is_not(None))
        .distinct()
    )  # fmt: skip
    return rows if papers is None else rows.where(Authorship.paper_id.in_(papers))


_HELD_COLUMNS = ["institution_id", "paper_id", *_HELD]


def hold(connection: Connection, papers: list[str]) -> None:
    """`InstitutionPaper` written again for `papers` from their authorships and rows (none for a paper gone)."""
    for start in range(0, len(papers), _CHUNK):
        chunk = papers[start : start + _CHUNK]
        connection.execute(delete(InstitutionPaper).where(InstitutionPaper.paper_id.in_(chunk)))
        connection.execute(insert(InstitutionPaper).from_select(_HELD_COLUMNS, _held_rows(chunk)))


def _add(connection: Connection, changes: dict[str, int]) -> None:
    """Move each named count by its change (a count not kept yet starts from 0)."""
    if not changes:
        return
    table = CatalogCount.__table__
    present = set(connection.execute(select(table.c.name).where(table.c.name.in_(list(changes)))).scalars())
    missing = [{"name": name, "value": 0} for name in changes if name not in present]
    if missing:
        connection.execute(table.insert(), missing)
    for name, change in changes.items():
        connection.execute(update(table).where(table.c.name == name).values(value=table.c.value + change))


def recount_all(connection: Connection) -> None:
    """Every count from the rows: each researcher's and institution's papers, the totals, the categories, the
    sitemap's blocks (papers written in SQL, past the ORM, get their `id_block` first)."""
    short = func.length(Paper.id) <= 4
    block = case((short, ""), else_=func.substr(Paper.id, 1, func.length(Paper.id) - 4))
    connection.execute(update(Paper).where(Paper.id_block.is_(None)).values(id_block=block))
    for model, column in _PEOPLE.items():
        papers = (
            select(func.count(func.distinct(Authorship.paper_id))).where(column == model.id).scalar_subquery()
        )
        connection.execute(update(model).values(paper_count=papers))
    connection.execute(delete(InstitutionPaper))
    connection.execute(insert(InstitutionPaper).from_select(_HELD_COLUMNS, _held_rows()))
    counts = {name: connection.execute(select(func.count()).select_from(model)).scalar_one()
              for model, name in _TOTALS.items()}  # fmt: skip
    for model in _PEOPLE:
        counts[with_papers_key(model)] = connection.execute(
            select(func.count()).select_from(model).where(model.paper_count > 0)
        ).scalar_one()
    rows = connection.execute(
        select(Paper.primary_category, func.count()).where(Paper.primary_category.is_not(None))
        .group_by(Paper.primary_category)
    ).all()  # fmt: skip
    counts.update({category_key(category): n for category, n in rows})
    counts.update(_block_counts(connection))
    table = CatalogCount.__table__
    connection.execute(table.delete())
    connection.execute(table.insert(), [{"name": name, "value": value} for name, value in counts.items()])


def _block_counts(connection: Connection) -> dict[str, int]:
    """The sitemap's blocks counted from the rows."""
    rows = connection.execute(select(Paper.id_block, func.count()).group_by(Paper.id_block)).all()
    counts = {block_key("papers", b): n for b, n in rows}
    for model in _PEOPLE:
        number = model.id // PEOPLE_BLOCK
        rows = connection.execute(select(number, func.count()).where(model.paper_count > 0).group_by(number)).all()
        counts.update({block_key(_TOTALS[model], int(b)): n for b, n in rows})
    return counts


def read_counts(session: Session, prefix: str = "") -> dict[str, int]:
    """The kept counts, or those whose names start with `prefix`."""
    query = select(CatalogCount.name, CatalogCount.value)
    if prefix:
        query = query.where(CatalogCount.name.startswith(prefix))
    return dict(session.execute(query).all())


def listen_for_counts() -> None:
    """Keep the counts on every session's writes (called once by `Catalog`)."""
    from sqlalchemy import event

    if not event.contains(Session, "after_flush", _note):
        event.listen(Session, "before_flush", _note_deleted)
        event.listen(Session, "after_flush", _note)
        event.listen(Session, "after_soft_rollback", _rolled_back)
        event.listen(Session, "before_commit", _settle)
