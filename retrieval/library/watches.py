"""Saved questions: a question a user keeps, re-run after the archive changes (`jobs.watches`), and the changes each
run found (new papers that clear the relevance floor for it, with the sentences that matched).

A question keeps its query, its scope (the whole archive, one arXiv category, or the user's own papers) and the
papers that answered it so far (`seen`), so a run reports only what is new; each change is a row of its own, read
or not. Every read takes the owner: another user's question is the same None as a missing one.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import Column, delete, func, update
from sqlalchemy.engine import Engine
from sqlmodel import JSON, Field, Session, SQLModel, select

from retrieval.scholarly.models import empty_list

MAX_QUESTIONS = 25  # saved per user
MAX_QUERY = 300


def _now() -> datetime:
    return datetime.now(timezone.utc)


class SavedQuestion(SQLModel, table=True):
    __tablename__ = "saved_questions"

    id: int | None = Field(default=None, primary_key=True)
    owner: str = Field(index=True, max_length=200)
    query: str = Field(max_length=MAX_QUERY)
    scope: str = Field(default="all", max_length=60)  # all, mine, or category:<arXiv category>
    seen: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=_now)
    last_run_at: datetime | None = None


class QuestionChange(SQLModel, table=True):
    __tablename__ = "question_changes"

    id: int | None = Field(default=None, primary_key=True)
    question_id: int = Field(index=True)
    owner: str = Field(index=True, max_length=200)
    at: datetime = Field(default_factory=_now)
    papers: list = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))  # [{id, title, quotes}]
    read: bool = False


class Watches:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(self, owner: str, query: str, scope: str, seen: list[str]) -> SavedQuestion:
        """A new saved question, with the papers that answer it now (they are not news). ValueError past the quota."""
        with Session(self.engine, expire_on_commit=False) as session:
            held = session.exec(select(func.count()).select_from(SavedQuestion)
                                .where(SavedQuestion.owner == owner)).one()  # fmt: skip
            if held >= MAX_QUESTIONS:
                raise ValueError(f"You keep {held} questions, the most one account may: delete one first.")
            row = SavedQuestion(owner=owner, query=query[:MAX_QUERY], scope=scope, seen=list(seen), last_run_at=_now())
            session.add(row)
            session.commit()
            return row

    def of(self, owner: str) -> list[SavedQuestion]:
        with Session(self.engine, expire_on_commit=False) as session:
            query = select(SavedQuestion).where(SavedQuestion.owner == owner).order_by(SavedQuestion.id.desc())
            return list(session.exec(query))

    def every(self) -> list[SavedQuestion]:
        with Session(self.engine, expire_on_commit=False) as session:
            return list(session.exec(select(SavedQuestion).order_by(SavedQuestion.id)))

    def get(self, owner: str | None, question_id: int) -> SavedQuestion | None:
        if not owner or not 0 < question_id < 2**62:
            return None
        with Session(self.engine, expire_on_commit=False) as session:
            row = session.get(SavedQuestion, question_id)
            return row if row is not None and row.owner == owner else None

    def forget(self, owner: str, question_id: int) -> bool:
        row = self.get(owner, question_id)
        if row is None:
            return False
        with Session(self.engine) as session:
            session.execute(delete(QuestionChange).where(QuestionChange.question_id == question_id))
            session.execute(delete(SavedQuestion).where(SavedQuestion.id == question_id))
            session.commit()
        return True

    def record(self, question: SavedQuestion, new: list[dict]) -> QuestionChange | None:
        """A run of `question`: its time, the papers now seen, and a change when `new` holds any."""
        with Session(self.engine, expire_on_commit=False) as session:
            row = session.get(SavedQuestion, question.id)
            if row is None:  # deleted while it ran
                return None
            row.seen = [*row.seen, *(p["id"] for p in new if p["id"] not in row.seen)]
            row.last_run_at = _now()
            session.add(row)
            change = QuestionChange(question_id=row.id, owner=row.owner, papers=new) if new else None
            if change is not None:
                session.add(change)
            session.commit()
            return change

    def changes(self, owner: str, limit: int = 50) -> list[tuple[QuestionChange, SavedQuestion]]:
        """The owner's changes, newest first, each with its question."""
        with Session(self.engine, expire_on_commit=False) as session:
            rows = session.exec(select(QuestionChange, SavedQuestion)
                                .join(SavedQuestion, SavedQuestion.id == QuestionChange.question_id)
                                .where(QuestionChange.owner == owner)
                                .order_by(QuestionChange.id.desc()).limit(limit))  # fmt: skip
            return [(c, q) for c, q in rows]

    def unread(self, owner: str) -> int:
        with Session(self.engine) as session:
            return session.exec(select(func.count()).select_from(QuestionChange).where(
                QuestionChange.owner == owner, QuestionChange.read.is_(False))).one()  # fmt: skip

    def mark_read(self, owner: str) -> None:
        with Session(self.engine) as session:
            session.execute(update(QuestionChange).where(QuestionChange.owner == owner).values(read=True))
            session.commit()
