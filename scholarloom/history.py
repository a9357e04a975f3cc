"""Chat history: Chainlit's SQLAlchemy data layer on our database, our schema, a local file store, and the
ownership rules Chainlit leaves to the data layer.

Chainlit ships no DDL for SQLite, swallows SQL errors into a log line, and answers "401" for a thread that
belongs to someone else but "404" for one that does not exist. Here the schema is ours (portable SQLAlchemy
types, created with the catalog), every failed statement is counted and logged as an error (tests assert the
count stays zero), values Chainlit hands over as lists or dicts are stored as JSON text, thread ids must be
UUIDs, a thread can never change owner, and another user's thread looks exactly like a missing one.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import Boolean, Column, ForeignKey, Integer, MetaData, Table, Text, select
from sqlalchemy.engine import Engine

log = logging.getLogger(__name__)
# Session keys the chat rebuilds from a thread's steps on resume (scholarloom.chat): the conversation with its
# tool results, the source numbers, the last cards and the paper scope. Chainlit would also copy them into the
# thread's metadata at every disconnect, a second copy of the paper text that only grows; they are left out.
SESSION_ONLY = frozenset({"history", "sources", "focus", "paper", "paper_checked"})
# The user name of the signed-in user of the HTTP request being served (set by the app's middleware from the
# verified session cookie); Chainlit's feedback routes do not tell the data layer who is asking.
request_user: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_user", default=None)

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


def resumed_history(steps: list[dict]) -> tuple[list[dict], dict]:
    """The conversation a thread's steps hold, for the agent, and the last answer's metadata. A question is
    taken from its answer's metadata when there (so one whose own step was never stored is not lost), else from
    its message step (threads stored before answers named their question); a question left without an answer
    stays in."""
    history: list[dict] = []
    last: dict = {}
    waiting: str | None = None  # the latest question not yet answered
    for step in steps:
        if step.get("type") == "user_message":
            if waiting is not None:
                history.append({"role": "user", "content": waiting})
            waiting = step.get("output") or ""
        elif step.get("type") == "assistant_message":
            meta = step.get("metadata") or {}
            if isinstance(meta, str):
                try:
                    meta = json.loads(meta or "{}")
                except ValueError:
                    meta = {}
            meta = meta if isinstance(meta, dict) else {}
            asked = meta.get("asked") if isinstance(meta.get("asked"), str) else None
            if waiting is not None and waiting.strip() != (asked or "").strip():
                history.append({"role": "user", "content": waiting})
            waiting = None
            if asked is None and not history:
                continue  # a greeting before the first question
            if asked is not None:
                history.append({"role": "user", "content": asked})
            turn = meta.get("turn") if isinstance(meta.get("turn"), list) else []
            history += [*turn, {"role": "assistant", "content": step.get("output") or ""}]
            last = meta or last
    if waiting is not None:
        history.append({"role": "user", "content": waiting})
    return history, last


def create_history_tables(engine: Engine) -> None:
    metadata.create_all(engine)


def async_url(url: str) -> str:
    """The async driver's URL for the catalog's database (Chainlit's data layer is async): aiosqlite for SQLite;
    psycopg 3 serves both ways for PostgreSQL."""
    from retrieval.catalog import with_driver

    url = with_driver(url)
    return "sqlite+aiosqlite://" + url[len("sqlite://") :] if url.startswith("sqlite://") else url


def is_uuid(value: object) -> bool:
    try:
        return isinstance(value, str) and str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


def user_key(engine: Engine, identifier: str) -> str | None:
    """Chainlit's id of a user (the first part of their file keys)."""
    with engine.connect() as connection:
        return connection.execute(select(users.c.id).where(users.c.identifier == identifier)).scalar()


class LocalFiles:
    """Chainlit's storage client for element files, on local disk under one root, served back by our own route
    (`/chat-files/<key>`) only to the user whose Chainlit id starts the key."""

    URL_PREFIX = "/chat-files/"
    _SAFE = re.compile(r"[^A-Za-z0-9._-]+")

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def path_of(self, object_key: str) -> Path | None:
        """Where a key lives; None for a key that would leave the root or is not one of ours."""
        parts = object_key.split("/")
        if not 2 <= len(parts) <= 3 or any(not p or p != self._SAFE.sub("_", p) or p in (".", "..") for p in parts):
            return None
        path = (self.root / Path(*parts)).resolve()
        return path if path.is_relative_to(self.root) else None

    def safe_key(self, object_key: str) -> str:
        # Chainlit builds keys as "<user id>/<element id>/<element name>"; names come from users, so flatten them.
        return "/".join(self._SAFE.sub("_", p)[:120].strip(".") or "_" for p in object_key.split("/")[:3])

    async def upload_file(
        self,
        object_key: str,
        data: bytes | str,
        mime: str = "application/octet-stream",
        overwrite: bool = True,
        content_disposition: str | None = None,
    ) -> dict[str, Any]:
        key = self.safe_key(object_key)
        path = self.path_of(key)
        if path is None:
            raise ValueError(f"refusing to store a file under {object_key[:80]!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return {"object_key": key, "url": self.URL_PREFIX + key}

    async def delete_file(self, object_key: str) -> bool:
        path = self.path_of(object_key)
        if path is None or not path.exists():
            return False
        path.unlink()
        return True

    async def get_read_url(self, object_key: str) -> str:
        return self.URL_PREFIX + object_key

    async def close(self) -> None:
        return None


def _decode(row: dict, *keys: str) -> None:
    for key in keys:
        value = row.get(key)
        if isinstance(value, str) and value[:1] in ("{", "["):
            try:
                row[key] = json.loads(value)
            except json.JSONDecodeError:
                pass


def make_history_layer(database_url: str, files: LocalFiles):
    """Chainlit's SQLAlchemy data layer with our rules (imported here: Chainlit reads its config on import)."""
    from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
    from sqlalchemy import text

    class HistoryLayer(SQLAlchemyDataLayer):
        def __init__(self) -> None:
            super().__init__(conninfo=async_url(database_url), storage_provider=files, show_logger=False)
            if database_url.startswith("sqlite"):
                from sqlalchemy import event

                from retrieval.catalog import sqlite_pragmas

                event.listen(self.engine.sync_engine, "connect", sqlite_pragmas)
            self.failures: list[str] = []  # every statement that failed, for tests and /healthz

        async def execute_sql(self, query: str, parameters: dict):
            # Lists and dicts (tags, modes, player config) are stored as JSON text on every database.
            parameters = {
                k: json.dumps(v, default=str) if isinstance(v, (list, dict)) else v for k, v in parameters.items()
            }
            async with self.async_session() as session:
                try:
                    result = await session.execute(text(query), parameters)
                    await session.commit()
                except Exception as exc:  # noqa: BLE001 - counted and logged as an error, never silently lost
                    await session.rollback()
                    summary = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
                    self.failures.append(summary)
                    log.error("chat history statement failed: %s", summary)
                    return None
                if result.returns_rows:
                    return self.clean_result([dict(row._mapping) for row in result.fetchall()])
                return result.rowcount

        async def update_thread(self, thread_id: str, name=None, user_id=None, metadata=None, tags=None):
            if not is_uuid(thread_id):
                self.failures.append(f"refused thread id {thread_id[:40]!r}")
                log.error("refused to write a thread whose id is not a UUID: %r", thread_id[:40])
                return None
            if user_id is not None:
                owner = await self.execute_sql('SELECT "userId" FROM threads WHERE "id" = :id', {"id": thread_id})
                if owner and owner[0]["userId"] not in (None, user_id):
                    self.failures.append("refused a change of a thread's owner")
                    log.error("refused to give thread %s to another user", thread_id)
                    return None
            if isinstance(metadata, dict):  # Chainlit saves the whole session here at disconnect
                metadata = {k: v for k, v in metadata.items() if k not in SESSION_ONLY}
            return await super().update_thread(thread_id, name=name, user_id=user_id, metadata=metadata, tags=tags)

        async def _get_user_id_by_thread(self, thread_id: str) -> str | None:
            # An element can be written before its thread has its owner (both are background writes): then the
            # owner is the session's user, so the file lands under their id and our file route serves it to them.
            found = await super()._get_user_id_by_thread(thread_id)
            if found:
                return found
            try:
                from chainlit.context import context

                user = context.session.user
            except Exception:  # noqa: BLE001 - no session: no owner to name
                return None
            if user is None:
                return None
            persisted = getattr(user, "id", None) or getattr(await self.get_user(user.identifier), "id", None)
            return persisted

        async def _owned_step_thread(self, step_id: str) -> str | None:
            """The thread of a step, if the signed-in user of this request owns it."""
            rows = await self.execute_sql(
                'SELECT t."id" AS thread_id, t."userIdentifier" AS owner FROM steps s JOIN threads t '
                'ON t."id" = s."threadId" WHERE s."id" = :id',
                {"id": str(step_id)},
            )
            user = request_user.get()
            if not rows or user is None or rows[0]["owner"] != user:
                return None
            return rows[0]["thread_id"]

        async def upsert_feedback(self, feedback) -> str:
            # Only on a step of one's own thread, and the thread is the step's (never the one the client names);
            # an existing feedback id must belong to that thread too.
            thread_id = await self._owned_step_thread(feedback.forId)
            if thread_id is None:
                log.warning("refused feedback on step %s for %s", str(feedback.forId)[:40], request_user.get())
                return ""
            if feedback.id:
                rows = await self.execute_sql('SELECT "threadId" FROM feedbacks WHERE "id" = :id', {"id": feedback.id})
                if rows and rows[0]["threadId"] != thread_id:
                    log.warning("refused to overwrite feedback %s", feedback.id[:40])
                    return ""
            feedback.threadId = thread_id
            return await super().upsert_feedback(feedback)

        async def delete_feedback(self, feedback_id: str) -> bool:
            rows = await self.execute_sql('SELECT "forId" FROM feedbacks WHERE "id" = :id', {"id": feedback_id})
            if not rows or await self._owned_step_thread(rows[0]["forId"]) is None:
                return False
            return await super().delete_feedback(feedback_id)

        async def get_thread_author(self, thread_id: str) -> str:
            if not is_uuid(thread_id):
                raise ValueError("no such thread")
            return await super().get_thread_author(thread_id)

        async def get_thread(self, thread_id: str):
            return await super().get_thread(thread_id) if is_uuid(thread_id) else None

        async def get_all_user_threads(self, user_id=None, thread_id=None):
            found = await super().get_all_user_threads(user_id=user_id, thread_id=thread_id)
            for thread in found or []:  # JSON stored as text comes back as the values Chainlit wrote
                _decode(thread, "metadata", "tags")
                for step in thread.get("steps") or []:
                    _decode(step, "metadata", "generation", "tags", "modes")
                for element in thread.get("elements") or []:
                    _decode(element, "props", "playerConfig")
            return found

    return HistoryLayer()


def hide_foreign_threads() -> None:
    """Chainlit answers 401 for another user's thread and 404 for a missing one, which tells a prober that a
    thread id exists. Make both 404 "Thread not found" on every route that checks a thread's author, and make the
    socket treat another user's thread id (or one that is not a UUID) as a thread that does not exist."""
    import chainlit.server as server
    from chainlit.data import get_data_layer
    from chainlit.socket import sio
    from fastapi import HTTPException

    async def is_thread_author(username: str, thread_id: str) -> bool:
        layer = get_data_layer()
        if not layer:
            raise HTTPException(status_code=400, detail="Data layer not initialized")
        try:
            author = await layer.get_thread_author(thread_id)
        except ValueError:
            author = None
        if not author or author != username:
            raise HTTPException(status_code=404, detail="Thread not found")
        return True

    server.is_thread_author = is_thread_author

    handlers = sio.handlers.get("/", {})
    chainlit_connect = handlers.get("connect")
    if chainlit_connect is None or getattr(chainlit_connect, "_scholarloom", False):
        return

    async def connect(sid, environ, auth):
        auth = dict(auth or {})
        thread_id = auth.get("threadId")
        if thread_id:
            from chainlit.socket import _authenticate_connection

            user, _ = await _authenticate_connection(environ)
            owner = None
            layer = get_data_layer()
            if user is not None and layer is not None and is_uuid(thread_id):
                try:  # one small query: who owns it (no such thread -> ValueError)
                    owner = await layer.get_thread_author(thread_id)
                except ValueError:
                    owner = None
            if owner is not None and owner != user.identifier or not is_uuid(thread_id):
                # Exactly what a thread that does not exist gets: the resume fails with "Thread not found."
                # and the session writes to a fresh id, never to the other user's thread.
                auth["threadId"] = str(uuid.uuid4())
        return await chainlit_connect(sid, environ, auth)

    connect._scholarloom = True
    sio.on("connect")(connect)
