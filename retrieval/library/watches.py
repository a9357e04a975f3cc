"""Saved questions: a question a user keeps, re-run after the archive changes (`jobs.watches`), and the changes each
run found (new papers that clear the relevance floor for it, with the sentences that matched).

A question keeps its query, its scope (the whole archive, one arXiv category, or the user's own papers) and the
papers that answered it so far (`seen`), so a run reports only what is new; each change is a row of its own, read
or not. Every read takes the owner: another user's question is the same None as a missing one.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import smtplib
from datetime import datetime, timedelta, timezone
from urllib.parse import urlencode

from sqlalchemy import Column, delete, func, update
from sqlalchemy.engine import Engine
from sqlmodel import JSON, Field, Session, SQLModel, select

from retrieval.scholarly.models import empty_list, shown, utc

log = logging.getLogger(__name__)

MAX_QUESTIONS = 25  # saved per user
JUDGED_A_DAY = 20  # changes a day the model writes its sentence for, per user (LLM mode: each is one model call)
MAX_QUERY = 300
RELATIONS = ("supports", "extends", "contradicts")  # what new evidence does to the earlier answer (LLM mode)
CITED = re.compile(r"\[(\d{1,2})\]")  # a judgement's citation of a numbered text: "[3]"


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


def describe(papers: list[dict]) -> str:
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


PERIODS = {"day": timedelta(days=1), "week": timedelta(days=7)}


class DigestSubscription(SQLModel, table=True):
    """A user's e-mail digest of what their saved questions found: where, how often, when last sent; `nonce` is in
    the unsubscribe link (a new one each time they subscribe: older links stop working)."""

    __tablename__ = "digest_subscriptions"

    id: int | None = Field(default=None, primary_key=True)
    owner: str = Field(unique=True, index=True, max_length=200)
    email: str = Field(max_length=254)
    every: str = Field(default="day", max_length=10)  # day or week
    nonce: str = Field(max_length=32)
    created_at: datetime = Field(default_factory=_now)
    last_sent_at: datetime | None = None


class Digests:
    """The subscriptions, and the changes a digest carries."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def subscribe(self, owner: str, email: str, every: str) -> DigestSubscription:
        with Session(self.engine, expire_on_commit=False) as session:
            row = session.exec(select(DigestSubscription).where(DigestSubscription.owner == owner)).first()
            row = row or DigestSubscription(owner=owner, email=email, nonce="")
            row.email, row.every, row.nonce = email, every, secrets.token_hex(16)
            session.add(row)
            session.commit()
            return row

    def of(self, owner: str) -> DigestSubscription | None:
        with Session(self.engine, expire_on_commit=False) as session:
            return session.exec(select(DigestSubscription).where(DigestSubscription.owner == owner)).first()

    def unsubscribe(self, owner: str, nonce: str) -> bool:
        """Ends the subscription this link (its nonce) was sent for; False when it is already over (used before,
        or replaced by a newer subscription)."""
        with Session(self.engine) as session:
            gone = session.execute(delete(DigestSubscription).where(
                DigestSubscription.owner == owner, DigestSubscription.nonce == nonce)).rowcount  # fmt: skip
            session.commit()
            return bool(gone)

    def stop(self, owner: str) -> None:
        with Session(self.engine) as session:
            session.execute(delete(DigestSubscription).where(DigestSubscription.owner == owner))
            session.commit()

    def due(self, now: datetime) -> list[DigestSubscription]:
        with Session(self.engine, expire_on_commit=False) as session:
            rows = list(session.exec(select(DigestSubscription)))
        return [r for r in rows if r.last_sent_at is None or now - utc(r.last_sent_at) >= PERIODS[r.every]]

    def news(self, owner: str, since: datetime) -> list[tuple[QuestionChange, SavedQuestion]]:
        return [(c, q) for c, q in Watches(self.engine).changes(owner, limit=200) if utc(c.at) > since]

    def sent(self, subscription_id: int, now: datetime) -> None:
        with Session(self.engine) as session:
            session.execute(update(DigestSubscription).where(DigestSubscription.id == subscription_id)
                            .values(last_sent_at=now))  # fmt: skip
            session.commit()


class DigestPost:
    """Writes and mails the digests that are due, each with a signed unsubscribe link (no sign-in needed)."""

    def __init__(self, mailer, base_url: str, secret: str) -> None:
        self.mailer, self.base_url = mailer, base_url.rstrip("/")
        self.key = hmac.new(secret.encode(), b"scholarloom digest unsubscribe", hashlib.sha256).digest()

    def signature(self, owner: str, nonce: str) -> str:
        return hmac.new(self.key, f"{owner}\n{nonce}".encode(), hashlib.sha256).hexdigest()[:32]

    def genuine(self, owner: str, nonce: str, signature: str) -> bool:
        return hmac.compare_digest(self.signature(owner, nonce), signature or "")

    def link(self, row: DigestSubscription) -> str:
        query = urlencode({"u": row.owner, "n": row.nonce, "s": self.signature(row.owner, row.nonce)})
        return f"{self.base_url}/unsubscribe?{query}"

    def address(self, paper_id: str) -> str:
        where = f"/me/library/{paper_id.split(':', 1)[1]}" if paper_id.startswith("upload:") else f"/papers/{paper_id}"
        return self.base_url + where

    def text(self, row: DigestSubscription, news: list[tuple[QuestionChange, SavedQuestion]]) -> tuple[str, str]:
        subject = f"ScholarLoom: {describe([p for c, _ in news for p in c.papers])} for your saved questions"
        lines = [subject, ""]
        for change, question in news:
            when = shown(change.at)
            lines += [f"{describe(change.papers)} on \"{question.query}\" ({when})", ""]
            if (said := judgement_parts(change.judgement)) is not None:  # each [n] with its paper's address
                numbers = {words: pid for words, pid in said[1] if pid}
                lines += [f"The new evidence {said[0]} the earlier answer: {''.join(w for w, _ in said[1])}"]
                lines += [f"  {n} {self.address(pid)}" for n, pid in numbers.items()]
                lines.append("")
            for paper in change.papers:
                title, quotes = shown_lines(paper)
                lines += [f"- {title}", f"  {self.address(str(paper.get('id', '')))}"]
                lines += [f"  > {quote}" for quote in quotes]
            lines.append("")
        lines += [f"Your saved questions: {self.base_url}/me/watching",
                  f"Stop these e-mails: {self.link(row)}"]  # fmt: skip
        return subject, "\n".join(lines) + "\n"

    def deliver(self, digests: Digests, now: datetime | None = None) -> int:
        """Every due digest with news, mailed; a failure is logged and tried again next time. How many were sent."""
        now, sent = now or _now(), 0
        for row in digests.due(now):
            news = digests.news(row.owner, utc(row.last_sent_at or row.created_at))
            if not news:
                continue
            subject, text = self.text(row, news)
            link = self.link(row)
            try:
                self.mailer.send(row.email, subject, text, {"List-Unsubscribe": f"<{link}>",
                                                            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"})
            except (OSError, smtplib.SMTPException) as exc:
                log.warning("the digest for %s was not sent: %s", row.owner, exc)
                continue
            digests.sent(row.id, now)
            sent += 1
        return sent
