"""The catalog's database engine: the driver, SQLite's settings and write lock, a user's lock and their shares
(its schema: `retrieval/upkeep/schema.py`)."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, create_engine

from common.retry import Retrier

# Turning a new database file to WAL needs it alone: while another process or engine holds it too (servers starting
# together on a new data directory) the switch fails as "database is locked", after the busy wait or at once.
WAL_SWITCH = Retrier(retries=8, base=0.02, cap=0.5, max_wait=0)


def sqlite_pragmas(dbapi_connection, _record, retrier: Retrier = WAL_SWITCH, busy_ms: int = 10_000) -> None:
    """Every SQLite connection (the catalog's and the chat history's): wait up to 10 s for the write lock instead
    of failing; write-ahead log, so readers never wait for the writer (kept in the file: set once, retried while
    another opener holds a new file); fsync at checkpoints rather than at every commit (synchronous=NORMAL: a power
    cut can lose the last commits, never corrupt the file)."""
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={int(busy_ms)}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode")  # (the result read apart: the chat history's aiosqlite cursor too)
    if str(cursor.fetchone()[0]).lower() != "wal":
        # sqlite3's error, or the same raised through the chat history's aiosqlite adapter
        locked = lambda exc: type(exc).__name__ == "OperationalError" and "locked" in str(exc)  # noqa: E731
        retrier.call(lambda: cursor.execute("PRAGMA journal_mode=WAL"), retry_on=locked)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def hold_write_lock(session: Session) -> None:
    """On SQLite, take the write lock before the transaction reads anything (BEGIN IMMEDIATE, waiting up to the
    busy timeout for it); elsewhere nothing. A transaction that SQLite starts with a read (a SAVEPOINT, then
    SELECTs) fails its first write at once with "database is locked" when another connection committed in
    between: its snapshot is stale, and waiting cannot help."""
    connection = session.connection()
    if connection.dialect.name == "sqlite" and not connection.connection.dbapi_connection.in_transaction:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


class ShareUsedUp(Exception):
    """A user's share of something kept under their lock (`hold_lock`) is used up: the jobs they may queue, the
    room their files may take. The message says which share and what to do."""


def hold_lock(session: Session, key: str) -> None:
    """Serialise the transactions that name `key` (a user's quota: check what is used, then add): on SQLite the
    database's write lock (`hold_write_lock`; SQLite has no finer one), on PostgreSQL an advisory lock on the key
    until the transaction ends. Without it two requests both read the same free room and both take it."""
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        hold_write_lock(session)
    elif connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"), {"key": key})


def update_row(engine: Engine, model: type, key: int, fields: dict) -> bool:
    """One row's `fields` written (by its primary key); False when there is no such row."""
    with Session(engine) as session:
        row = session.get(model, key)
        if row is None:
            return False
        for name, value in fields.items():
            setattr(row, name, value)
        session.add(row)
        session.commit()
        return True


def private_database(path: Path) -> None:
    """A new SQLite database readable by its owner alone: its folder made 0700 and the file 0600 before SQLite opens
    it (SQLite gives its -wal and -shm files the database's mode). It holds password hashes, chat history, feed keys
    and what users uploaded; under a umask of 022 it was 0644 in a 0755 folder. An existing file is left as it is
    (`scholarloom doctor` says when it is readable by others)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass


def with_driver(url: str) -> str:
    """PostgreSQL URLs without a driver use psycopg 3 (the one we ship; SQLAlchemy's default is psycopg2)."""
    for bare in ("postgresql://", "postgres://"):
        if url.startswith(bare):
            return "postgresql+psycopg://" + url[len(bare) :]
    return url


def make_engine(url: str) -> Engine:
    url = with_driver(url)
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(engine, "connect", sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True)

