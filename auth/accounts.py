"""Creating users and signing them in: pure functions over a SQLAlchemy engine."""

from __future__ import annotations

import logging
import re

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from auth.models import Account, ExternalIdentity, SignInFailures
from auth.passwords import MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS, hash_password, verify
from auth.throttle import Throttle

log = logging.getLogger(__name__)

_USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


class AccountError(ValueError):
    """A user cannot be created as asked."""


def create_tables(engine: Engine) -> None:
    """The account tables: the database brought to the newest schema revision (`retrieval/upkeep/schema.py`)."""
    from retrieval.upkeep.schema import migrate

    migrate(engine)


def add_user(engine: Engine, username: str, password: str, *, replace: bool = False) -> Account:
    """Create a user (or, with replace, set a new password for an existing one, which ends their sessions)."""
    if not _USERNAME.match(username):
        raise AccountError("user names are 1-64 letters, digits or . _ @ - and start with a letter or digit")
    if not MIN_PASSWORD_CHARS <= len(password) <= MAX_PASSWORD_CHARS:
        raise AccountError(f"passwords are {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} characters long")
    with Session(engine, expire_on_commit=False) as session:
        account = session.exec(select(Account).where(Account.username == username)).first()
        if account and not replace:
            raise AccountError(f"user {username!r} already exists")
        if account is None:
            account = Account(username=username, password_hash=hash_password(password))
            session.add(account)
            session.commit()
            return account
    _bump(engine, username, password_hash=hash_password(password))
    return _account(engine, username)


def _bump(engine: Engine, username: str, **values) -> None:
    """One UPDATE: set `values` and end every session of the account (no read-modify-write that a concurrent
    change could be lost in)."""
    from sqlalchemy import func

    table = Account.__table__
    with engine.begin() as connection:
        changed = connection.execute(
            table.update()
            .where(table.c.username == username)
            .values(session_version=func.coalesce(table.c.session_version, 0) + 1, **values)
        ).rowcount
    if not changed:
        raise AccountError(f"no user {username!r}")


def _account(engine: Engine, username: str) -> Account:
    with Session(engine, expire_on_commit=False) as session:
        return session.exec(select(Account).where(Account.username == username)).one()


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


def clear_sign_in_failures(engine: Engine, username: str | None = None) -> int:
    """Forget the failed sign-ins (and so the back-off) of one user name (from every address), or of every name
    and address; returns how many keys were forgotten."""
    from sqlalchemy import delete, or_

    table = SignInFailures.__table__
    statement = delete(table)
    if username is not None:
        name = username.lower()[:64]
        pairs = name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        mine = or_(table.c.key == f"user:{name}", table.c.key.like(f"pair:{pairs}|%", escape="\\"))
        statement = statement.where(mine)
    with engine.begin() as connection:
        return connection.execute(statement).rowcount


def address_key(address: str) -> str:
    """The throttling key of a client address: an IPv4 address itself, an IPv6 address by its /64 (one
    subscriber gets a whole /64 and can rotate through it at will); anything else as given."""
    import ipaddress

    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return f"addr:{address[:100]}"
    if parsed.version == 4:
        return f"addr:{parsed}"
    if parsed.ipv4_mapped is not None:  # ::ffff:a.b.c.d is the IPv4 client a.b.c.d
        return f"addr:{parsed.ipv4_mapped}"
    return f"addr:{ipaddress.ip_network(f'{parsed}/64', strict=False)}"


EVIDENCE = 3  # failures from one address against one account before the account's back-off applies to it


def sign_in(engine: Engine, throttle: Throttle, username: str, password: str, address: str) -> Account | None:
    """Password sign-in with throttling. An address backing off (too many failures, any account) is refused
    without the password being looked at. So is an account backing off, but only for addresses that have
    failed against it EVIDENCE times: an outsider's wrong guesses (one every 15 minutes, for ever) cannot lock
    the user out of the addresses they sign in from, while a guesser gets at most EVIDENCE checked guesses per
    account from each address (an IPv6 /64 counts as one) once the account backs off."""
    name = username.lower()[:64]
    user_key, addr_key = f"user:{name}", address_key(address)
    pair_key = f"pair:{name}|{addr_key}"
    if throttle.retry_after(addr_key, pair_key) > 0 or (
        throttle.retry_after(user_key) > 0 and throttle.failures(pair_key) >= EVIDENCE
    ):
        log.warning("sign-in throttled for %s from %s", username[:64], address)
        return None
    account = authenticate(engine, username, password)
    if account is None:
        throttle.failed(user_key, addr_key, pair_key)
        return None
    throttle.succeeded(user_key, pair_key)
    return account


def set_admin(engine: Engine, username: str, admin: bool) -> Account:
    """Make a user an admin (or no longer one)."""
    with Session(engine, expire_on_commit=False) as session:
        account = session.exec(select(Account).where(Account.username == username)).first()
        if account is None:
            raise AccountError(f"no user {username!r}")
        account.is_admin = admin
        session.add(account)
        session.commit()
        return account


def set_active(engine: Engine, username: str, active: bool, by: str = "an admin") -> Account:
    """Disable a user (they cannot sign in, every session they have ends at its next request, and every API token
    they hold is revoked) or enable them again (old sessions and tokens stay ended)."""
    from auth.tokens import revoke_all

    _bump(engine, username, active=active)
    if not active:
        revoke_all(engine, username, by=by)
    return _account(engine, username)


def end_sessions(engine: Engine, username: str) -> None:
    """Sign a user out everywhere: every session token issued so far stops working."""
    _bump(engine, username)


def session_is_live(engine: Engine, username: str, version) -> bool:
    """Whether a session token of `username` carrying `version` still counts: the account exists, is active,
    and nothing has ended its sessions since the token was issued."""
    with Session(engine) as session:
        account = session.exec(select(Account).where(Account.username == username)).first()
        return bool(account and account.active and (account.session_version or 0) == (version or 0))


def is_admin(engine: Engine, username: str) -> bool:
    """Whether a user name from a session names an active admin."""
    with Session(engine) as session:
        account = session.exec(select(Account).where(Account.username == username)).first()
        return bool(account and account.active and account.is_admin)


# Where each provider puts its stable subject id (OpenID Connect's "sub"; GitHub's and GitLab's numeric "id";
# Azure AD's object id "oid").
_SUBJECT_KEYS = ("sub", "oid", "id")


def provider_subject(raw_user_data: dict) -> str | None:
    for key in _SUBJECT_KEYS:
        value = raw_user_data.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()[:255]
    return None


def oauth_account(
    engine: Engine, provider: str, subject: str, suggested_name: str, *, allow_signup: bool
) -> Account | None:
    """The account linked to a provider's subject id; a new one (named after the provider's login, made unique)
    on first sign-in when sign-up is allowed. A disabled account stays out."""
    provider = provider[:40]
    with Session(engine, expire_on_commit=False) as session:
        link = session.exec(
            select(ExternalIdentity).where(ExternalIdentity.provider == provider, ExternalIdentity.subject == subject)
        ).first()
        if link is not None:
            account = session.get(Account, link.account_id)
            return account if account is not None and account.active else None
        if not allow_signup:
            return None
        base = re.sub(r"[^A-Za-z0-9_.@-]+", "-", f"{provider}-{suggested_name}".strip("-"))[:56] or provider
        name, number = base, 1
        while session.exec(select(Account).where(Account.username == name)).first() is not None:
            number += 1
            name = f"{base}-{number}"
        account = Account(username=name, password_hash=None)
        session.add(account)
        session.flush()
        session.add(ExternalIdentity(provider=provider, subject=subject, account_id=account.id))
        session.commit()
        return account
