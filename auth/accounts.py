"""Creating users and signing them in: pure functions over a SQLAlchemy engine."""

from __future__ import annotations

import re

from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel, select

from auth.models import Account
from auth.passwords import MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS, hash_password, verify

_USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


class AccountError(ValueError):
    """A user cannot be created as asked."""


def create_tables(engine: Engine) -> None:
    SQLModel.metadata.create_all(engine, tables=[Account.__table__])


def add_user(engine: Engine, username: str, password: str, *, replace: bool = False) -> Account:
    """Create a user (or, with replace, set a new password for an existing one)."""
    if not _USERNAME.match(username):
        raise AccountError("user names are 1-64 letters, digits or . _ @ - and start with a letter or digit")
    if not MIN_PASSWORD_CHARS <= len(password) <= MAX_PASSWORD_CHARS:
        raise AccountError(f"passwords are {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} characters long")
    with Session(engine, expire_on_commit=False) as session:
        account = session.exec(select(Account).where(Account.username == username)).first()
        if account and not replace:
            raise AccountError(f"user {username!r} already exists")
        account = account or Account(username=username)
        account.password_hash = hash_password(password)
        session.add(account)
        session.commit()
        return account


def authenticate(engine: Engine, username: str, password: str) -> Account | None:
    """The account if the password is right; the same work is done for unknown users."""
    with Session(engine, expire_on_commit=False) as session:
        account = session.exec(select(Account).where(Account.username == username[:64])).first()
        stored = account.password_hash if account and account.active else None
        valid, upgraded = verify(password, stored)
        if not valid:
            return None
        if upgraded:
            account.password_hash = upgraded
            session.add(account)
            session.commit()
        return account


def is_active(engine: Engine, username: str) -> bool:
    """Whether a user name from a session still names an active account."""
    with Session(engine) as session:
        account = session.exec(select(Account).where(Account.username == username)).first()
        return bool(account and account.active)
