"""Chainlit's chat-history tables on our database (Chainlit ships DDL for PostgreSQL only): its table and column
names (quoted camelCase in its SQL), portable types, JSON values stored as text. Created with the catalog."""

from __future__ import annotations

from sqlalchemy import Boolean, Column, ForeignKey, Integer, MetaData, Table, Text, select
from sqlalchemy.engine import Engine

metadata = MetaData()
# Chainlit's tables and column names (quoted camelCase in its SQL); JSON values are stored as text.
users = Table(
    "users",
    metadata,
    Column("id", Text, primary_key=True),
    Column("identifier", Text, nullable=False, unique=True),
    Column("metadata", Text, nullable=False),
    Column("createdAt", Text),
)
threads = Table(
    "threads",
    metadata,
    Column("id", Text, primary_key=True),
    Column("createdAt", Text),
    Column("name", Text),
    Column("userId", Text, ForeignKey("users.id", ondelete="CASCADE"), index=True),
    Column("userIdentifier", Text, index=True),
    Column("tags", Text),
    Column("metadata", Text),
)
steps = Table(
    "steps",
    metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("threadId", Text, ForeignKey("threads.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("parentId", Text),
    Column("command", Text),
    Column("modes", Text),
    Column("streaming", Boolean, nullable=False),
    Column("waitForAnswer", Boolean),
    Column("isError", Boolean),
    Column("metadata", Text),
    Column("tags", Text),
    Column("input", Text),
    Column("output", Text),
    Column("createdAt", Text),
    Column("start", Text),
    Column("end", Text),
    Column("generation", Text),
    Column("showInput", Text),
    Column("defaultOpen", Boolean),
    Column("autoCollapse", Boolean),
    Column("language", Text),
    Column("icon", Text),
    Column("indent", Integer),
)
elements = Table(
    "elements",
    metadata,
    Column("id", Text, primary_key=True),
    Column("threadId", Text, ForeignKey("threads.id", ondelete="CASCADE"), index=True),
    Column("type", Text),
    Column("url", Text),
    Column("chainlitKey", Text),
    Column("path", Text),
    Column("name", Text, nullable=False),
    Column("display", Text),
    Column("objectKey", Text),
    Column("size", Text),
    Column("page", Integer),
    Column("language", Text),
    Column("forId", Text, index=True),
    Column("mime", Text),
    Column("props", Text),
    Column("autoPlay", Boolean),
    Column("playerConfig", Text),
)
feedbacks = Table(
    "feedbacks",
    metadata,
    Column("id", Text, primary_key=True),
    Column("forId", Text, nullable=False, index=True),
    Column("threadId", Text, ForeignKey("threads.id", ondelete="CASCADE"), nullable=False),
    Column("value", Integer, nullable=False),
    Column("comment", Text),
)


def create_history_tables(engine: Engine) -> None:
    """The chat-history tables: the database brought to the newest schema revision (`retrieval/upkeep/schema.py`)."""
    from retrieval.upkeep.schema import migrate

    migrate(engine)


def async_url(url: str) -> str:
    """The async driver's URL for the catalog's database (Chainlit's data layer is async): aiosqlite for SQLite;
    psycopg 3 serves both ways for PostgreSQL."""
    from retrieval.upkeep.database import with_driver

    url = with_driver(url)
    return "sqlite+aiosqlite://" + url[len("sqlite://") :] if url.startswith("sqlite://") else url


def user_key(engine: Engine, identifier: str) -> str | None:
    """Chainlit's id of a user (the first part of their file keys)."""
    with engine.connect() as connection:
        return connection.execute(select(users.c.id).where(users.c.identifier == identifier)).scalar()
