"""The catalog database: engine, sessions and the read queries everything else shares."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from sqlalchemy import event, func, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from retrieval.scholarly import counts as kept_counts
from retrieval.scholarly import terms as researcher_terms
from retrieval.scholarly.models import (
    VERSIONED,
    Authorship,
    CatalogVersion,
    Citation,
    HarvestCursor,
    Institution,
    LedgerEntry,
    Paper,
    Researcher,
    title_key,
    utc,
    utcnow,
)
from retrieval.scholarly.records import is_arxiv_id, split_arxiv_version
from retrieval.upkeep.database import make_engine, private_database
from retrieval.upkeep.schema import migrate

T = TypeVar("T")
_IN_CHUNK = 500  # keys in one IN (...): well under the bound parameters SQLite and PostgreSQL allow


@event.listens_for(Session, "after_flush")
def _bump_versions(session: Session, _context) -> None:
    """Every flush that writes a versioned kind of row bumps its version in the same transaction."""
    changed = [*session.new, *session.deleted, *(o for o in session.dirty if session.is_modified(o))]
    for subject in {VERSIONED[type(o)] for o in changed if type(o) in VERSIONED}:
        statement = update(CatalogVersion).where(CatalogVersion.subject == subject)
        session.connection().execute(statement.values(version=CatalogVersion.version + 1))


@dataclass(frozen=True)
class AuthorView:
    position: int
    name: str
    researcher_id: int | None
    institution: str | None


@dataclass(frozen=True)
class PaperView:
    """A paper with its ordered authors: what pages and tools read."""

    paper: Paper
    authors: list[AuthorView]


class Catalog:
    """Papers, researchers, institutions, authorships, citations and the ingest ledger."""

    def __init__(self, url: str) -> None:
        if url.startswith("sqlite:///"):
            private_database(Path(url.removeprefix("sqlite:///")))
        self.url = url
        self.engine = make_engine(url)
        migrate(self.engine)
        kept_counts.listen_for_counts()
        researcher_terms.listen_for_terms()
        self._fill_search_keys()
        self._cached: dict[str, tuple[int, object]] = {}
        with self.session() as session:  # every versioned subject has its row, so a bump is one UPDATE
            for subject in set(VERSIONED.values()) - {v.subject for v in session.exec(select(CatalogVersion))}:
                session.add(CatalogVersion(subject=subject))
            try:
                session.commit()
            except IntegrityError:  # another process made them first
                session.rollback()

    def cached(self, subject: str, build: Callable[[Session], T]) -> T:
        """A value built from the rows of a versioned subject, kept until a write to them (from any process)."""
        with self.session() as session:
            version = session.get(CatalogVersion, subject).version
            kept = self._cached.get(subject)
            if kept is not None and kept[0] == version:
                return kept[1]
            value = build(session)
        self._cached[subject] = (version, value)
        return value

    def _fill_search_keys(self) -> None:
        """Institutions stored before `search_key` existed get theirs (once; later writes keep it up to date)."""
        with self.session() as session:
            missing = session.exec(select(Institution).where(Institution.search_key.is_(None))).all()
            for institution in missing:
                institution.search_key = institution.searchable()
                session.add(institution)
            if missing:
                session.commit()

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def session(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as session:
            yield session

    # --- papers ---------------------------------------------------------------
    def resolve_paper_id(self, raw: str) -> str | None:
        """Map an arXiv id (any version, URL or old style), an OpenAlex id or a catalog id to a paper id."""
        text = raw.strip()
        if not text or len(text) > 300:
            return None
        with self.session() as session:
            if session.get(Paper, text):
                return text
            arxiv_id, _version = split_arxiv_version(text)
            if is_arxiv_id(arxiv_id):
                found = session.exec(select(Paper.id).where(Paper.arxiv_id == arxiv_id)).first()
                if found:
                    return found
            openalex = text.removeprefix("https://openalex.org/").removeprefix("openalex:")
            return session.exec(select(Paper.id).where(Paper.openalex_id == openalex)).first()

    def paper_by_doi(self, doi: str) -> str | None:
        with self.session() as session:
            return session.exec(select(Paper.id).where(func.lower(Paper.doi) == doi.strip().lower())).first()

    def paper_by_title(self, title: str) -> str | None:
        """The one paper with this title (case, accents and punctuation aside: `title_key`, read from its index); None
        when none or several have it, or the title is too short to tell one work from another."""
        key = title_key(title)
        if key is None:
            return None
        with self.session() as session:
            ids = list(session.exec(select(Paper.id).where(Paper.title_key == key).limit(2)))
        return ids[0] if len(ids) == 1 else None

    def paper_view(self, paper_id: str) -> PaperView | None:
        with self.session() as session:
            paper = session.get(Paper, paper_id)
            if paper is None:
                return None
            rows = session.exec(
                select(Authorship, Institution.name)
                .join(Institution, Authorship.institution_id == Institution.id, isouter=True)
                .where(Authorship.paper_id == paper_id)
                .order_by(Authorship.position)
            ).all()
            authors = [AuthorView(a.position, a.raw_name, a.researcher_id, inst) for a, inst in rows]
            return PaperView(paper, authors)

    def papers(self, ids: list[str]) -> dict[str, Paper]:
        """Public papers by id (with a viewer's own uploads among them: `retrieval.library.visible.visible_papers`)."""
        if not ids:
            return {}
        with self.session() as session:
            return self.papers_in(session, ids)

    @staticmethod
    def papers_in(session: Session, ids: list[str]) -> dict[str, Paper]:
        return {p.id: p for p in session.exec(select(Paper).where(Paper.id.in_(ids))).all()}

    def author_names(self, ids: list[str]) -> dict[str, list[str]]:
        """Ordered author names of several papers at once."""
        names: dict[str, list[str]] = {}
        if not ids:
            return names
        with self.session() as session:
            rows = session.exec(
                select(Authorship.paper_id, Authorship.raw_name)
                .where(Authorship.paper_id.in_(ids))
                .order_by(Authorship.paper_id, Authorship.position)
            )
            for paper_id, name in rows:
                names.setdefault(paper_id, []).append(name)
        return names

    def all_author_names(self) -> dict[str, list[str]]:
        """Every paper's ordered author names, as written on the paper (one query; what BM25 indexes)."""
        names: dict[str, list[str]] = {}
        with self.session() as session:
            rows = session.exec(
                select(Authorship.paper_id, Authorship.raw_name).order_by(Authorship.paper_id, Authorship.position)
            )
            for paper_id, name in rows:
                names.setdefault(paper_id, []).append(name)
        return names

    def iter_papers(self, batch: int = 500) -> Iterator[Paper]:
        with self.session() as session:
            offset = 0
            while True:
                rows = session.exec(select(Paper).order_by(Paper.id).offset(offset).limit(batch)).all()
                if not rows:
                    return
                yield from rows
                offset += batch

    def paper_people(self) -> dict[str, tuple[list[int], list[int]]]:
        """Per paper, its matched researcher ids and institution ids (for index filters)."""
        people: dict[str, tuple[list[int], list[int]]] = {}
        with self.session() as session:
            rows = session.exec(
                select(Authorship.paper_id, Authorship.researcher_id, Authorship.institution_id).order_by(
                    Authorship.paper_id, Authorship.position
                )
            )
            for paper_id, researcher_id, institution_id in rows:
                researchers, institutions = people.setdefault(paper_id, ([], []))
                if researcher_id is not None and researcher_id not in researchers:
                    researchers.append(researcher_id)
                if institution_id is not None and institution_id not in institutions:
                    institutions.append(institution_id)
        return people

    def counts(self) -> dict[str, int]:
        """How many papers, researchers, institutions, authorships and citations there are (kept as they are
        written, never counted here: `retrieval.scholarly.counts`)."""
        with self.session() as session:
            kept = kept_counts.read_counts(session)
        return {model.__tablename__: kept.get(model.__tablename__, 0)
                for model in (Paper, Researcher, Institution, Authorship, Citation)}  # fmt: skip

    def recount(self) -> None:
        """Every kept count, and every researcher's search terms, from the rows (after rows were written around the
        catalog: a bulk load, a repair)."""
        with self.engine.begin() as connection:
            kept_counts.recount_all(connection)
            researcher_terms.fill_all(connection)

    def references(self, paper_id: str) -> list[Citation]:
        with self.session() as session:
            return list(
                session.exec(select(Citation).where(Citation.citing_id == paper_id).order_by(Citation.id)).all()
            )

    # --- ledger ---------------------------------------------------------------
    def ledger_hashes(self, stage: str, keys: Collection[str] | None = None) -> dict[str, str]:
        """The stage's digests by key; only those of `keys` when given (a batch of a large load need not read a
        stage of millions)."""
        query = select(LedgerEntry.key, LedgerEntry.content_hash).where(LedgerEntry.stage == stage)
        with self.session() as session:
            if keys is None:
                return dict(session.exec(query).all())
            wanted, found = list(keys), {}
            for start in range(0, len(wanted), _IN_CHUNK):
                found.update(session.exec(query.where(LedgerEntry.key.in_(wanted[start : start + _IN_CHUNK]))).all())
            return found

    def ledger_since(self, stages: Collection[str], since: datetime,
                     limit: int) -> tuple[dict[str, datetime], datetime]:  # fmt: skip
        """The keys these stages recorded (or recorded again) after `since`, each with its latest time (UTC), the
        newest `limit` entries at most; and the moment from which that is all of them (`since`, or the oldest entry
        read when there were more). Read from the (stage, at) index: it costs what came since, not the ledger's size."""
        query = (select(LedgerEntry.key, LedgerEntry.at)
                 .where(LedgerEntry.stage.in_(list(stages)), LedgerEntry.at > utc(since))
                 .order_by(LedgerEntry.at.desc()).limit(limit + 1))  # fmt: skip
        with self.session() as session:
            rows = [(key, utc(at)) for key, at in session.exec(query)]
        complete_since = utc(since) if len(rows) <= limit else rows[limit - 1][1]
        found: dict[str, datetime] = {}
        for key, at in rows[:limit]:
            found.setdefault(key, at)  # (newest first: a key's latest time)
        return found, complete_since

    @staticmethod
    def mark(session: Session, stage: str, key: str, content_hash: str, new: bool = False) -> None:
        """Record a step in the ledger inside the caller's transaction, with the records it produced (`new`: the
        caller read the ledger and the key is not in it, so there is no entry to look up)."""
        entry = None if new else session.get(LedgerEntry, (stage, key))
        if entry is None:
            session.add(LedgerEntry(stage=stage, key=key, content_hash=content_hash))
        else:
            entry.content_hash = content_hash
            entry.at = utcnow()
            session.add(entry)

    def mark_all(self, stage: str, marks: dict[str, str]) -> None:
        """Record several steps of one stage in a transaction of their own (when no records go with them)."""
        if not marks:
            return
        with self.session() as session:
            for key, content_hash in marks.items():
                Catalog.mark(session, stage, key, content_hash)
            session.commit()

    # --- harvest cursors ------------------------------------------------------
    def cursor(self, name: str) -> dict | None:
        with self.session() as session:
            row = session.get(HarvestCursor, name)
            return dict(row.state) if row else None

    @staticmethod
    def save_cursor(session: Session, name: str, state: dict | None) -> None:
        """Record (or, with None, forget) where a harvest stands, inside the caller's transaction."""
        row = session.get(HarvestCursor, name)
        if state is None:
            if row is not None:
                session.delete(row)
            return
        if row is None:
            row = HarvestCursor(name=name, state=state)
        row.state = dict(state)
        row.at = utcnow()
        session.add(row)
