"""E-mail digests of what a user's saved questions found (`retrieval.library.watches`): where each user wants them,
how often, whether the address confirmed it wants them, and when one was last sent. The mail itself and its signed
links are `jobs.digests`.

An address is stored only as `common.mail.checked_address` gives it, and gets digests only once a signed link mailed
to it was followed (double opt-in): until then anyone could have typed it.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sqlalchemy import delete, update
from sqlalchemy.engine import Engine
from sqlmodel import Field, Session, SQLModel, select

from common.mail import checked_address  # (the pages check an address through here: they import no `common`)
from retrieval.library.watches import QuestionChange, SavedQuestion, Watches
from retrieval.scholarly.models import utc

PERIODS = {"day": timedelta(days=1), "week": timedelta(days=7)}


def _now() -> datetime:
    return datetime.now(timezone.utc)


class DigestSubscription(SQLModel, table=True):
    """A user's e-mail digest: where, how often, when last sent; `nonce` is in its signed links (a new one each time
    they subscribe: older links stop working); digests go out only once `confirmed_at` is set. `notice`: why the
    digests were switched off without the user asking (shown on their page; such a row gets no digest)."""

    __tablename__ = "digest_subscriptions"

    id: int | None = Field(default=None, primary_key=True)
    owner: str = Field(unique=True, index=True, max_length=200)
    email: str = Field(max_length=254)
    every: str = Field(default="day", max_length=10)  # day or week
    nonce: str = Field(max_length=32)
    created_at: datetime = Field(default_factory=_now)  # when this address was given (its first digest: news since)
    last_sent_at: datetime | None = None
    confirmed_at: datetime | None = None
    notice: str | None = Field(default=None, max_length=300)


class Digests:
    """The subscriptions, and the changes a digest carries."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def subscribe(self, owner: str, email: str, every: str, nonce: str | None = None) -> DigestSubscription:
        """The owner's digest to `email` every `every`. With `nonce` (new, in the link the caller mailed to it), the
        address waits for its confirmation; without, it must be the owner's confirmed address (only how often
        changes). ValueError for an address `checked_address` refuses, a period not in PERIODS, or a new address
        without a nonce."""
        email = checked_address(email)
        if every not in PERIODS:
            raise ValueError("A digest comes every day or every week.")
        with Session(self.engine, expire_on_commit=False) as session:
            row = session.exec(select(DigestSubscription).where(DigestSubscription.owner == owner)).first()
            if nonce is None and (row is None or row.confirmed_at is None or row.email != email):
                raise ValueError("A new address is confirmed by the link mailed to it first.")
            row = row or DigestSubscription(owner=owner, email=email, nonce="")
            if nonce is not None:
                row.nonce, row.confirmed_at, row.created_at = nonce, None, _now()
            row.email, row.every, row.notice = email, every, None
            session.add(row)
            session.commit()
            return row

    def waiting(self, owner: str, email: str) -> bool:
        """Whether `email` needs a confirmation (it is not the owner's confirmed address)."""
        row = self.of(owner)
        return row is None or row.confirmed_at is None or row.email != checked_address(email)

    def confirm(self, owner: str, nonce: str, email: str) -> bool:
        """The address of the subscription this link was mailed for confirmed; False when there is no such
        subscription waiting (confirmed already, replaced by a newer one, or ended)."""
        with Session(self.engine) as session:
            done = session.execute(update(DigestSubscription).where(
                DigestSubscription.owner == owner, DigestSubscription.nonce == nonce,
                DigestSubscription.email == email, DigestSubscription.confirmed_at.is_(None),
                DigestSubscription.notice.is_(None)).values(confirmed_at=_now())).rowcount  # fmt: skip
            session.commit()
            return bool(done)

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
        """The confirmed subscriptions whose period has passed since their last digest."""
        with Session(self.engine, expire_on_commit=False) as session:
            confirmed = select(DigestSubscription).where(DigestSubscription.confirmed_at.is_not(None),
                                                         DigestSubscription.notice.is_(None))
            rows = list(session.exec(confirmed.order_by(DigestSubscription.id)))
        return [r for r in rows if r.every in PERIODS and (r.last_sent_at is None
                                                           or now - utc(r.last_sent_at) >= PERIODS[r.every])]

    def news(self, owner: str, since: datetime) -> list[tuple[QuestionChange, SavedQuestion]]:
        return [(c, q) for c, q in Watches(self.engine).changes(owner, limit=200) if utc(c.at) > since]

    def sent(self, subscription_id: int, now: datetime) -> None:
        with Session(self.engine) as session:
            session.execute(update(DigestSubscription).where(DigestSubscription.id == subscription_id)
                            .values(last_sent_at=now))  # fmt: skip
            session.commit()
