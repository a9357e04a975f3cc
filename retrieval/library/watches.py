"""Saved questions: a question a user keeps, re-run after the archive changes (`jobs.watches`), and the changes each
run found (new papers that clear the relevance floor for it, with the sentences that matched).

A question keeps its query, its scope (the whole archive, one arXiv category, or the user's own papers) and the
papers that answered it so far (`seen`), so a run reports only what is new; each change is a row of its own, read
or not. Every read takes the owner: another user's question is the same None as a missing one.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from sqlalchemy import Column, delete, func, update
from sqlalchemy.engine import Engine
from sqlmodel import JSON, Field, Session, SQLModel, select

from retrieval.scholarly.models import empty_list
from retrieval.upkeep.database import hold_lock

MAX_QUESTIONS = 25  # saved per user
JUDGED_A_DAY = 20  # changes a day the model writes its sentence for, per user (LLM mode: each is one model call)
MAX_QUERY = 300
RELATIONS = ("supports", "extends", "contradicts")  # what new evidence does to the earlier answer (LLM mode)
# A judgement's citation of a numbered text, "[3]" or "[3, p. 7]": the grammar of the composer's reader
# (`assistant.composer.CITATION`, which the judge is checked with), so every number it accepted is linked when shown.
CITED = re.compile(r"\[(\d{1,3})(?:,?\s*pp?\.\s*\d{1,4}(?:\s*[-–]\s*\d{1,4})?)?\](?!\()")


def _now() -> datetime:
    return datetime.now(timezone.utc)


class SavedQuestion(SQLModel, table=True):
    __tablename__ = "saved_questions"

    id: int | None = Field(default=None, primary_key=True)
    owner: str = Field(index=True, max_length=200)
    query: str = Field(max_length=MAX_QUERY)
    scope: str = Field(default="all", max_length=60)  # all, mine, or category:<arXiv category>
    seen: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    # paper id -> {"version": the arXiv version it answered in, "quotes": what matched, "page": where, "text":
    # whether its full text was here}: a new version is noted, and what it was quoted for checked again; full text
    # that comes later is searched once for passages that answer the question
    cited: dict = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=_now)
    last_run_at: datetime | None = None
    # The best dense cosine a search of the whole scope gave it: a run that searches only the papers that came since
    # weighs them against it, as the relevance floor weighs a list against its best paper
    best: float | None = None


def describe_change(papers: list[dict]) -> str:
    """What a change brought, in words: "2 new papers", "1 paper it cited with new passages", "1 new version of a
    paper it cited", or several of these."""
    kinds = [p.get("kind", "paper") for p in papers]
    new, texts, versions = kinds.count("paper"), kinds.count("passages"), kinds.count("version")
    parts = [f"{new} new paper{'s' if new != 1 else ''}"] if new else []
    parts += [f"{texts} paper{'s' if texts != 1 else ''} it cited with new passages"] if texts else []
    parts += [f"{versions} new version{'s' if versions != 1 else ''} of {'a paper' if versions == 1 else 'papers'} "
              "it cited"] if versions else []  # fmt: skip
    return " and ".join(parts) or "nothing"


def shown_lines(paper: dict) -> tuple[str, list[str]]:
    """A change's paper as it is shown: its title (and, for a new version, which; for new passages, their pages),
    and its quotes (for a new version, what it was quoted for and whether the new text keeps it)."""
    if paper.get("kind") == "version":
        checked = [f"{c.get('state')}: {c.get('text')}" for c in paper.get("checked") or []]
        return f"{paper.get('title')} (version {paper.get('version')}, was {paper.get('was')})", checked
    if paper.get("kind") == "passages":
        pages = sorted({int(n) for n in paper.get("pages") or [] if isinstance(n, int)})
        where = f" (full text, p. {', '.join(map(str, pages))})" if pages else " (full text)"
        return f"{paper.get('title')}{where}", [str(q) for q in paper.get("quotes") or []][:2]
    return str(paper.get("title", "")), [str(q) for q in paper.get("quotes") or []][:2]


def citing(found: list[dict]) -> dict:
    """What a question keeps of the papers that answered it (`cited`)."""
    return {p["id"]: {"version": p.get("version"), "quotes": list(p.get("quotes") or [])[:2], "page": p.get("page"),
                      "text": bool(p.get("text", True))} for p in found}  # fmt: skip


def judgement_parts(judgement: dict | None) -> tuple[str, list[tuple[str, str | None]]] | None:
    """A change's judgement (LLM mode) as it is shown: its relation, and its text cut at each cited number into
    (words, None) and ("[n]", the id of the paper n named): the model's words are shown as text, never as markup,
    and the only links are to the papers it was given."""
    if not judgement or judgement.get("relation") not in RELATIONS:
        return None
    sources, parts, at = judgement.get("sources") or {}, [], 0
    text = str(judgement.get("text", ""))
    for match in CITED.finditer(text):
        parts += [(text[at : match.start()], None), (match.group(0), sources.get(match.group(1)))]
        at = match.end()
    parts.append((text[at:], None))
    if isinstance(checked := judgement.get("checked"), dict) and checked.get("sentences"):
        missed = [f"“{m}”" for m in checked.get("missed") or [] if isinstance(m, str)]
        many = "s" if checked["sentences"] != 1 else ""
        parts.append((f" ({checked.get('found', 0)} of {checked['sentences']} cited sentence{many} found in the texts "
                      f"they cite{'; not found: ' + ' '.join(missed) if missed else ''})", None))
    return judgement["relation"], [(words, pid) for words, pid in parts if words]


class QuestionChange(SQLModel, table=True):
    __tablename__ = "question_changes"

    id: int | None = Field(default=None, primary_key=True)
    question_id: int = Field(index=True)
    owner: str = Field(index=True, max_length=200)
    at: datetime = Field(default_factory=_now)
    papers: list = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))  # [{id, title, quotes}]
    read: bool = False
    # LLM mode: {relation (RELATIONS), text (cited [n]), sources {n: paper id}}; None without a model
    judgement: dict | None = Field(default=None, sa_column=Column(JSON, nullable=True))


class Watches:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(self, owner: str, query: str, scope: str, found: list[dict], best: float | None = None) -> SavedQuestion:
        """A new saved question, with the papers that answer it now (`jobs.watches.answers`: they are not news).
        ValueError past the quota."""
        with Session(self.engine, expire_on_commit=False) as session:
            hold_lock(session, f"user:{owner}")  # two saves at once would both find room for one
            held = session.exec(select(func.count()).select_from(SavedQuestion)
                                .where(SavedQuestion.owner == owner)).one()  # fmt: skip
            if held >= MAX_QUESTIONS:
                raise ValueError(f"You keep {held} questions, the most one account may: delete one first.")
            row = SavedQuestion(owner=owner, query=query[:MAX_QUERY], scope=scope, seen=[p["id"] for p in found],
                                cited=citing(found), last_run_at=_now(), best=best)  # fmt: skip
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

    def record(self, question: SavedQuestion, new: list[dict], revised: list[dict] = (), judgement: dict | None = None,
               read_text: list[str] = (), best: float | None = None,
               ran_at: datetime | None = None) -> QuestionChange | None:  # fmt: skip
        """A run of `question`: its time, the papers now seen, and a change when `new` holds any (new papers, or
        cited papers with new passages: `"kind": "passages"`) or a cited paper came in a new version (`revised`:
        `"kind": "version"`). `read_text`: cited papers whose new full text was searched (not again); `best`: the
        run's best dense cosine (the question keeps the highest); `ran_at`: when the run began (what came after it is
        looked at by the next run)."""
        with Session(self.engine, expire_on_commit=False) as session:
            row = session.get(SavedQuestion, question.id)
            if row is None:  # deleted while it ran
                return None
            papers = [p for p in new if p.get("kind") != "passages"]
            row.seen = [*row.seen, *(p["id"] for p in papers if p["id"] not in row.seen)]
            cited = {**row.cited, **citing(papers)}
            for paper in revised:
                cited[paper["id"]] = {**cited.get(paper["id"], {}), "version": paper["version"]}
            for pid in read_text:
                cited[pid] = {**cited.get(pid, {}), "text": True}
            for paper in new:
                if paper.get("kind") == "passages":
                    cited[paper["id"]] |= {"quotes": paper["quotes"][:2], "page": paper.get("page")}
            row.cited, row.last_run_at = cited, ran_at or _now()
            row.best = max((b for b in (row.best, best) if b is not None), default=None)
            session.add(row)
            found = [*new, *revised]
            change = QuestionChange(question_id=row.id, owner=row.owner, papers=found,
                                    judgement=judgement) if found else None  # fmt: skip
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

    def judged_today(self, owner: str) -> int:
        """The owner's changes of the last 24 hours that carry the model's sentence (`JUDGED_A_DAY` at most)."""
        since = _now() - timedelta(days=1)
        with Session(self.engine) as session:
            rows = session.exec(select(QuestionChange.judgement).where(QuestionChange.owner == owner,
                                                                      QuestionChange.at > since))  # fmt: skip
            return sum(1 for judgement in rows if judgement)

    def unread(self, owner: str) -> int:
        with Session(self.engine) as session:
            return session.exec(select(func.count()).select_from(QuestionChange).where(
                QuestionChange.owner == owner, QuestionChange.read.is_(False))).one()  # fmt: skip

    def mark_read(self, owner: str) -> None:
        with Session(self.engine) as session:
            session.execute(update(QuestionChange).where(QuestionChange.owner == owner).values(read=True))
            session.commit()
