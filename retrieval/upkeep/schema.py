"""The database's schema, moved by Alembic revisions (`retrieval/upkeep/migrations/versions/`): the catalog, the
accounts and the chat history share one database, so they share one history.

`migrate(engine)` brings a database to the newest revision. Every store that opens the database calls it (the
catalog, the accounts, the chat history): a database already there costs one SELECT; otherwise the revisions run
under a lock, so two processes starting together never migrate at once (PostgreSQL: an advisory lock held by the
migrating connection; SQLite: an exclusive lock on a file beside the database; an in-memory SQLite has one user).
A database an earlier version made without migrations is adopted by the baseline, its rows untouched.
"""

from __future__ import annotations

import fcntl
import logging
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Iterator

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection, Engine

log = logging.getLogger(__name__)
MIGRATIONS = Path(__file__).with_name("migrations")
VERSION_TABLE = "alembic_version"
# Any 64-bit number of our own: the key of PostgreSQL's advisory lock that serialises migrations.
ADVISORY_KEY = 0x5C401A47


@dataclass(frozen=True)
class Revision:
    """Where a database stands: its revision (None: never migrated) and the newest one this code knows."""

    current: str | None
    head: str

    @property
    def at_head(self) -> bool:
        return self.current == self.head


def _config(connection: Connection | None = None, target_metadata=None):
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    config.attributes["target_metadata"] = target_metadata
    return config


@cache
def head() -> str:
    """The newest revision in `retrieval/upkeep/migrations/versions/` (read once per process: the files never
    change)."""
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(_config()).get_heads()
    if len(heads) != 1:
        raise RuntimeError(f"the migrations have {len(heads)} heads ({heads}): merge them into one")
    return heads[0]


def _current(connection: Connection) -> str | None:
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    return connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()


def revision(engine: Engine) -> Revision:
    with engine.connect() as connection:
        return Revision(_current(connection), head())


@contextmanager
def _migration_lock(engine: Engine, connection: Connection) -> Iterator[None]:
    if engine.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": ADVISORY_KEY})
        connection.commit()
        try:
            yield
        finally:
            if connection.in_transaction():  # a failed revision leaves its transaction aborted: end it first
                connection.rollback()
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": ADVISORY_KEY})
            connection.commit()
        return
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:":
        yield
        return
    with open(f"{database}-migrate.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def migrate(engine: Engine) -> Revision:
    """Bring the database to the newest revision (see the module's note); returns where it stood before."""
    newest = head()
    with engine.connect() as connection:
        before = _current(connection)
    if before == newest:
        return Revision(before, newest)
    from alembic import command

    with engine.connect() as connection:
        with _migration_lock(engine, connection):
            before = _current(connection)  # another process may have migrated while this one waited
            connection.commit()
            if before != newest:
                log.info("database schema: from revision %s to %s", before or "none", newest)
                command.upgrade(_config(connection), "head")
                connection.commit()
    return Revision(before, newest)


def new_revision(engine: Engine, metadata, message: str) -> Path:
    """Write a revision that takes a database at the newest revision to `metadata` (Alembic's autogenerate, to be
    read and adjusted before it is committed); returns its file."""
    from alembic import command

    migrate(engine)
    with engine.connect() as connection:
        script = command.revision(_config(connection, metadata), message=message, autogenerate=True)
    return Path(script.path)


def differences(engine: Engine, metadata) -> list:
    """What separates the database's schema from `metadata` (Alembic's comparison; [] when they agree)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return compare_metadata(context, metadata)
