"""The terms that find a researcher (`ResearcherTerm`), kept as researchers are written: at three million
researchers, a partial name or another name is looked up in an index instead of read from every row (BENCHMARKS.md,
"Session 27"). Each term carries its researcher's paper count, so the researchers with a word come most papers
first from one range of the (term, papers) index (`holding`), however common the word.

Each flush that adds, renames or deletes researchers writes their terms again in the same transaction
(`_sync`; a SAVEPOINT rolled back takes them back with the rest), their paper counts read from the rows;
`retrieval.scholarly.counts` moves a term's count where it moves the researcher's (`set_papers`). Rows written
around the ORM (a bulk load) get theirs from `fill_all`, which `Catalog.recount` runs.
"""

from __future__ import annotations

from sqlalchemy import Select, delete, event, exists, func, insert, inspect, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import aliased
from sqlmodel import Session

from retrieval.scholarly.models import Researcher, ResearcherTerm, normalise_name

WORD, OTHER_NAME = "w:", "a:"
_CHUNK = 500
LONGEST = 250


def word(text: str) -> str:
    return WORD + text


def other_name(text: str) -> str:
    return OTHER_NAME + normalise_name(text)


def holding(session: Session, terms: list[str], with_papers: bool = False) -> Select:
    """(researcher id, papers) of the researchers that have every one of `terms` (and papers, if `with_papers`),
    most papers first, then by id: read in the order of the (term, papers) index from the term the fewest have,
    each other term looked up by its key for the researchers found, so a page of them reads that page's rows."""
    counted = {t: session.exec(select(func.count()).where(ResearcherTerm.term == t)).one() for t in set(terms)}
    first, *others = sorted(counted, key=lambda t: (counted[t], t))
    statement = select(ResearcherTerm.researcher_id, ResearcherTerm.papers).where(ResearcherTerm.term == first)
    if with_papers:
        statement = statement.where(ResearcherTerm.papers > 0)
    for term in others:
        other = aliased(ResearcherTerm)
        statement = statement.where(exists().where(other.term == term,
                                                   other.researcher_id == ResearcherTerm.researcher_id))  # fmt: skip
    return statement.order_by(ResearcherTerm.papers.desc(), ResearcherTerm.researcher_id)


def terms_of(name_key: str | None, aliases: list[str] | None) -> set[str]:
    """The terms of one researcher: its name's words and its other names."""
    found = {word(w) for w in (name_key or "").split()}
    found |= {other_name(a) for a in aliases or [] if normalise_name(a)}
    return {t for t in found if len(t) <= LONGEST}


def _sync(session: Session, _context) -> None:
    """After a flush: the terms of every researcher it added, renamed (name or other names) or deleted."""
    fresh, gone, papers = {}, [], {}
    for row in session.new:
        if isinstance(row, Researcher):
            fresh[row.id] = terms_of(row.name_key, row.aliases)
            papers[row.id] = row.paper_count or 0  # as just inserted (its papers are counted at the commit)
    for row in session.dirty:
        if isinstance(row, Researcher) and any(inspect(row).attrs[f].history.has_changes()
                                               for f in ("name_key", "aliases")):  # fmt: skip
            gone.append(row.id)
            fresh[row.id] = terms_of(row.name_key, row.aliases)
    gone += [row.id for row in session.deleted if isinstance(row, Researcher) and row.id is not None]
    if not fresh and not gone:
        return
    connection = session.connection()
    _write(connection, gone, fresh, papers)


def _write(connection: Connection, gone: list[int], fresh: dict[int, set[str]], papers: dict[int, int]) -> None:
    """Delete the terms of `gone`, write those of `fresh`, each with its researcher's paper count: from `papers`,
    or, for a researcher not in it, as its row holds it now."""
    for start in range(0, len(gone), _CHUNK):
        connection.execute(delete(ResearcherTerm).where(ResearcherTerm.researcher_id.in_(gone[start : start + _CHUNK])))
    rows = [{"term": t, "researcher_id": i, "papers": papers.get(i, 0)}
            for i, terms in fresh.items() for t in sorted(terms)]  # fmt: skip
    for start in range(0, len(rows), 10_000):
        connection.execute(insert(ResearcherTerm), rows[start : start + 10_000])
    if unknown := [i for i in fresh if i not in papers]:
        set_papers(connection, unknown)


def set_papers(connection: Connection, researcher_ids: list[int]) -> None:
    """These researchers' terms take the paper count their rows hold now."""
    kept = select(Researcher.paper_count).where(Researcher.id == ResearcherTerm.researcher_id).scalar_subquery()
    for start in range(0, len(researcher_ids), _CHUNK):
        chunk = researcher_ids[start : start + _CHUNK]
        connection.execute(update(ResearcherTerm).where(ResearcherTerm.researcher_id.in_(chunk)).values(papers=kept))


def fill_all(connection: Connection, batch: int = 50_000) -> int:
    """Every researcher's terms from its row (after researchers were written around the ORM); how many terms."""
    connection.execute(delete(ResearcherTerm))
    written, last = 0, 0
    while True:
        rows = connection.execute(select(Researcher.id, Researcher.name_key, Researcher.aliases, Researcher.paper_count)
                                  .where(Researcher.id > last).order_by(Researcher.id).limit(batch)).all()  # fmt: skip
        if not rows:
            return written
        fresh = {i: terms_of(key, aliases) for i, key, aliases, _ in rows}
        _write(connection, [], fresh, {i: papers for i, *_, papers in rows})
        written += sum(map(len, fresh.values()))
        last = rows[-1][0]


def listen_for_terms() -> None:
    """Keep the terms from now on (every session); once per process."""
    if not event.contains(Session, "after_flush", _sync):
        event.listen(Session, "after_flush", _sync)
