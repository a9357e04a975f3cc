"""Who follows which researcher, and each user's private feed key. Keyed by the signed-in user's name,
which only ever comes from the verified session, never from a request parameter."""

from __future__ import annotations

import secrets
from datetime import datetime, timezone

from sqlalchemy import UniqueConstraint
from sqlalchemy.engine import Engine
from sqlmodel import Field, Session, SQLModel, select

from retrieval.upkeep.schema import migrate


def _now() -> datetime:
    return datetime.now(timezone.utc)


class Follow(SQLModel, table=True):
    __tablename__ = "follows"
    __table_args__ = (UniqueConstraint("username", "researcher_id"),)

    id: int | None = Field(default=None, primary_key=True)
    username: str = Field(index=True, max_length=200)
    researcher_id: int = Field(index=True)
    created_at: datetime = Field(default_factory=_now)


class FeedKey(SQLModel, table=True):
    __tablename__ = "feed_keys"

    username: str = Field(primary_key=True, max_length=200)
    key: str = Field(unique=True, index=True, description="the secret in the private RSS address")


class Follows:
    """The follow book over the user database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        migrate(engine)

    def follow(self, username: str, researcher_id: int) -> None:
        with Session(self.engine) as session:
            exists = session.exec(
                select(Follow).where(Follow.username == username, Follow.researcher_id == researcher_id)
            ).first()
            if exists is None:
                session.add(Follow(username=username, researcher_id=researcher_id))
                session.commit()

    def unfollow(self, username: str, researcher_id: int) -> None:
        with Session(self.engine) as session:
            for row in session.exec(
                select(Follow).where(Follow.username == username, Follow.researcher_id == researcher_id)
            ):
                session.delete(row)
            session.commit()

    def followed(self, username: str) -> list[int]:
        with Session(self.engine) as session:
            rows = session.exec(
                select(Follow.researcher_id).where(Follow.username == username).order_by(Follow.created_at)
            )
            return list(rows.all())

    def feed_key(self, username: str) -> str:
        """The user's feed key, made on first use; `rotate` makes a new one (the old address stops working)."""
        with Session(self.engine) as session:
            row = session.get(FeedKey, username)
            if row is None:
                row = FeedKey(username=username, key=secrets.token_urlsafe(24))
                session.add(row)
                session.commit()
            return row.key

    def rotate(self, username: str) -> str:
        """A new feed key for the user: the old private address stops working at once."""
        with Session(self.engine) as session:
            row = session.get(FeedKey, username) or FeedKey(username=username, key="")
            row.key = secrets.token_urlsafe(24)
            session.add(row)
            session.commit()
            return row.key

    def user_for_key(self, key: str) -> str | None:
        """The active account a feed key belongs to; a disabled account's feed is closed."""
        from auth.models import Account

        if not key or len(key) > 100:
            return None
        with Session(self.engine) as session:
            row = session.exec(select(FeedKey).where(FeedKey.key == key)).first()
            if row is None:
                return None
            account = session.exec(select(Account).where(Account.username == row.username)).first()
            return row.username if account is not None and account.active else None
