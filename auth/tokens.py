"""Personal API tokens: a signed-in user names one on `/me/tokens`, sees it once, and a script or an MCP client
sends it as `Authorization: Bearer sl_...` to `/api/*` and `/mcp` (`auth.middleware.BearerTokens`).

A token is "sl_" and 43 characters from `secrets` (256 bits). Only its SHA-256 digest is stored (a token is random,
not a password: no slow hash is needed to stop guessing, and the check costs microseconds), with its first 11
characters (`prefix`), which find its row and name it on the account page. A token is refused once revoked (by its
owner, an admin, or the account's being disabled), once past its expiry, and when its account is not active.

Scopes: "read" (the default) reads what its user may read, their private uploads and library included; "library"
may also add, correct and delete items of its user's own library. Nothing else is ever written with a token.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from auth.models import Account, ApiToken
from retrieval.scholarly.models import utc
from retrieval.upkeep.database import hold_lock

log = logging.getLogger(__name__)

MARK = "sl_"
PREFIX_LENGTH = len(MARK) + 8
SCOPES = {"read": "Read (search, papers, your library)", "library": "Read, and add to or change your library"}
MAX_TOKENS = 20  # live tokens per user
MAX_DAYS = 366
TOUCH_EVERY = timedelta(minutes=1)  # last_used_at is written at most this often per token (not on every request)


class TokenError(ValueError):
    """A token cannot be made or changed as asked: the message says why."""


@dataclass(frozen=True)
class TokenUse:
    """Who a valid token speaks for, and what it may do."""

    username: str
    token_id: int
    prefix: str
    scope: str


def _now() -> datetime:
    return datetime.now(timezone.utc)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def live(token: ApiToken, now: datetime | None = None) -> bool:
    now = now or _now()
    expires = utc(token.expires_at)
    return token.revoked_at is None and (expires is None or expires > now)


def create_token(engine: Engine, username: str, name: str, days: int | None = None,
                 scope: str = "read") -> tuple[ApiToken, str]:  # fmt: skip
    """A new token for an active account: its row, and the token itself, which is never seen again."""
    name = " ".join((name or "").split())[:80]
    if not name:
        raise TokenError("Give the token a name, so you know later what uses it.")
    if scope not in SCOPES:
        raise TokenError(f"Unknown scope {scope[:20]!r}: one of {', '.join(SCOPES)}.")
    if days is not None and not 1 <= days <= MAX_DAYS:
        raise TokenError(f"A token may last 1 to {MAX_DAYS} days, or until revoked.")
    now = _now()
    with Session(engine) as session:
        # Counted and added under the user's lock: twenty requests at once cannot each see room for one more.
        hold_lock(session, f"user:{username}")
        account = session.exec(select(Account).where(Account.username == username)).first()
        if account is None or not account.active:
            raise TokenError("Only an active account can have tokens.")
        held = [t for t in session.exec(select(ApiToken).where(ApiToken.username == username)) if live(t, now)]
        if len(held) >= MAX_TOKENS:
            raise TokenError(f"You have {len(held)} live tokens, the most one account may hold: revoke one first.")
        token = MARK + secrets.token_urlsafe(32)
        row = ApiToken(username=username, name=name, prefix=token[:PREFIX_LENGTH], digest=digest(token), scope=scope,
                       created_at=now, expires_at=now + timedelta(days=days) if days else None)  # fmt: skip
        session.add(row)
        session.commit()
        session.refresh(row)
    log.info("api token %s (%s) made for %s", row.prefix, scope, username)
    return row, token


def tokens_of(engine: Engine, username: str | None = None) -> list[ApiToken]:
    """A user's tokens (every user's, for None), newest first, revoked ones included."""
    with Session(engine) as session:
        query = select(ApiToken).order_by(ApiToken.created_at.desc(), ApiToken.id.desc())
        if username is not None:
            query = query.where(ApiToken.username == username)
        return list(session.exec(query))


def revoke(engine: Engine, token_id: int, by: str, admin: bool = False) -> ApiToken | None:
    """Revoke one token: its owner's, or any for an admin. None when there is no such token for `by`."""
    with Session(engine) as session:
        row = session.get(ApiToken, token_id)
        if row is None or (row.username != by and not admin):
            return None
        if row.revoked_at is None:
            row.revoked_at, row.revoked_by = _now(), by
            session.add(row)
            session.commit()
            session.refresh(row)
            log.info("api token %s of %s revoked by %s", row.prefix, row.username, by)
        return row


def revoke_all(engine: Engine, username: str, by: str) -> int:
    """Revoke every live token of a user (their account is disabled); how many were."""
    table = ApiToken.__table__
    with engine.begin() as connection:
        count = connection.execute(
            update(table).where(table.c.username == username, table.c.revoked_at.is_(None))
            .values(revoked_at=_now(), revoked_by=by)
        ).rowcount  # fmt: skip
    if count:
        log.info("%d api tokens of %s revoked by %s", count, username, by)
    return count


def well_formed(token: str) -> bool:
    return token.startswith(MARK) and len(token) == len(MARK) + 43 and all(
        c.isalnum() or c in "-_" for c in token[len(MARK):])  # fmt: skip


def check(engine: Engine, token: str) -> TokenUse | None:
    """Who a token speaks for, if it is ours, live, and its account active; None otherwise. Notes its use."""
    if not well_formed(token):
        return None
    now = _now()
    with Session(engine) as session:
        row = session.exec(select(ApiToken).where(ApiToken.prefix == token[:PREFIX_LENGTH])).first()
        if row is None or not hmac.compare_digest(row.digest, digest(token)) or not live(row, now):
            return None
        account = session.exec(select(Account).where(Account.username == row.username)).first()
        if account is None or not account.active:
            return None
        use = TokenUse(row.username, row.id, row.prefix, row.scope)
        last = utc(row.last_used_at)
    if last is None or now - last >= TOUCH_EVERY:
        table = ApiToken.__table__
        with engine.begin() as connection:
            connection.execute(update(table).where(table.c.id == use.token_id).values(last_used_at=now))
    return use


class Tokens:
    """The token operations bound to one database, as the pages and the middleware use them."""

    scopes = SCOPES

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @staticmethod
    def live(token: ApiToken) -> bool:
        return live(token)

    def create(self, username: str, name: str, days: int | None = None, scope: str = "read") -> tuple[ApiToken, str]:
        return create_token(self.engine, username, name, days, scope)

    def of(self, username: str | None = None) -> list[ApiToken]:
        return tokens_of(self.engine, username)

    def revoke(self, token_id: int, by: str, admin: bool = False) -> ApiToken | None:
        return revoke(self.engine, token_id, by, admin)

    def check(self, token: str) -> TokenUse | None:
        return check(self.engine, token)
