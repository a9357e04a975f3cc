"""Chat history: Chainlit's SQLAlchemy data layer on our schema (`chatui.tables`), with the ownership rules
Chainlit leaves to the data layer (`auth.threads`).

Chainlit swallows SQL errors into a log line; here every failed statement is counted and logged as an error
(tests assert the count stays zero, `/healthz` shows it). Every statement runs with its commit in one of the
layer's own threads, on a plain (synchronous) engine: Chainlit's async engine sent the statement and the commit as
two trips through the event loop, and on SQLite the write lock was held between them for as long as the busy loop
took to come back, while every other writer waited (100 chat sessions held chat turns up by seconds). Values
Chainlit hands over as lists or dicts are stored as JSON text, thread ids must be UUIDs, a thread never changes owner, and feedback goes only on one's
own answers. Import this module only once Chainlit's root is prepared: Chainlit reads its config on import.
"""

from __future__ import annotations

import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor

from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from sqlalchemy import text

from auth.sessions import request_user
from auth.threads import is_uuid, may_set_owner
from chatui.files import LocalFiles
from chatui.tables import async_url
from retrieval.upkeep.database import make_engine

log = logging.getLogger(__name__)
# The chat handler keeps the conversation under this one session key and rebuilds it from a thread's steps on
# resume. Chainlit would also copy it into the thread's metadata at every disconnect, a second copy of the paper
# text that only grows; it is left out.
SESSION_ONLY = frozenset({"conversation"})


def _decode(row: dict, *keys: str) -> None:
    for key in keys:
        value = row.get(key)
        if isinstance(value, str) and value[:1] in ("{", "["):
            try:
                row[key] = json.loads(value)
            except json.JSONDecodeError:
                pass


def _position(element: dict) -> int:
    props = element.get("props")
    position = props.get("position") if isinstance(props, dict) else None
    return position if isinstance(position, int) else 1_000  # an element that is not a card: after the cards


async def _session_user_id(layer: "HistoryLayer") -> str | None:
    """The Chainlit id of the user of the socket session being served, if any."""
    try:
        from chainlit.context import context

        user = context.session.user
    except Exception:  # noqa: BLE001 - no session: no owner to name
        return None
    if user is None:
        return None
    return getattr(user, "id", None) or getattr(await layer.get_user(user.identifier), "id", None)


def _session_thread_id() -> str | None:
    try:
        from chainlit.context import context

        return context.session.thread_id
    except Exception:  # noqa: BLE001 - no session: no thread of its own
        return None


class HistoryLayer(SQLAlchemyDataLayer):
    def __init__(self, database_url: str, files: LocalFiles, threads: int = 4) -> None:
        # (Chainlit's own async engine is made, and never connects: every statement goes through `execute_sql`.)
        super().__init__(conninfo=async_url(database_url), storage_provider=files, show_logger=False)
        self.sync_engine = make_engine(database_url)  # SQLite's settings, or psycopg for PostgreSQL
        self._threads = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="chat-history")
        self.failures: list[str] = []  # every statement that failed, for tests and /healthz

    def _failed(self, summary: str) -> None:
        self.failures.append(summary)
        log.error("chat history: %s", summary)

    async def execute_sql(self, query: str, parameters: dict):
        # Lists and dicts (tags, modes, player config) are stored as JSON text on every database.
        parameters = {
            k: json.dumps(v, default=str) if isinstance(v, (list, dict)) else v for k, v in parameters.items()
        }
        return await asyncio.get_running_loop().run_in_executor(self._threads, self._execute, query, parameters)

    def _execute(self, query: str, parameters: dict):
        """One statement and its commit, back to back in this thread: a write lock is held for the statement alone."""
        try:
            with self.sync_engine.begin() as connection:
                result = connection.execute(text(query), parameters)
                rows = [dict(row._mapping) for row in result.fetchall()] if result.returns_rows else None
                count = result.rowcount
        except Exception as exc:  # noqa: BLE001 - counted and logged as an error, never silently lost
            self._failed(f"statement failed: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
            return None
        return self.clean_result(rows) if rows is not None else count

    async def close(self) -> None:
        self._threads.shutdown(wait=True)
        self.sync_engine.dispose()
        await super().close()

    async def update_thread(self, thread_id: str, name=None, user_id=None, metadata=None, tags=None):
        if not is_uuid(thread_id):
            self._failed(f"refused thread id {thread_id[:40]!r}")
            return None
        if user_id is not None:
            owner = await self.execute_sql('SELECT "userId" FROM threads WHERE "id" = :id', {"id": thread_id})
            if owner and not may_set_owner(owner[0]["userId"], user_id):
                self._failed("refused a change of a thread's owner")
                return None
        if isinstance(metadata, dict):  # Chainlit saves the whole session here at disconnect
            metadata = {k: v for k, v in metadata.items() if k not in SESSION_ONLY}
        return await super().update_thread(thread_id, name=name, user_id=user_id, metadata=metadata, tags=tags)

    async def _get_user_id_by_thread(self, thread_id: str) -> str | None:
        # An element can be written before its thread has its owner (both are background writes): then the owner
        # is the session's user, so the file lands under their id and our file route serves it to them.
        return await super()._get_user_id_by_thread(thread_id) or await _session_user_id(self)

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

    async def create_element(self, element):
        # Chainlit's PUT /project/element takes the thread id from the client: an element lands only in the
        # thread of the socket session it is sent for (the session's user owns it; resuming is guarded).
        if element.thread_id and element.thread_id != _session_thread_id():
            log.warning("refused an element for thread %s from another session", str(element.thread_id)[:40])
            return None
        return await super().create_element(element)

    async def delete_element(self, element_id: str, thread_id: str | None = None):
        # Chainlit's DELETE /project/element deletes any element id (and its file): only one's own.
        rows = await self.execute_sql(
            'SELECT t."userIdentifier" AS owner FROM elements e JOIN threads t ON t."id" = e."threadId" '
            'WHERE e."id" = :id',
            {"id": str(element_id)},
        )
        user = request_user.get()
        if not rows or user is None or rows[0]["owner"] != user:
            log.warning("refused to delete element %s for %s", str(element_id)[:40], user)
            return None
        return await super().delete_element(element_id, thread_id)

    async def upsert_feedback(self, feedback) -> str:
        # Only on a step of one's own thread, and the thread is the step's (never the one the client names); an
        # existing feedback id must belong to that thread too.
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

    async def owner_of(self, thread_id: str) -> str | None:
        """Who owns a thread; None for a thread that does not exist (or an id that is not a thread id)."""
        try:
            return await self.get_thread_author(thread_id)
        except ValueError:
            return None

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
            if thread.get("elements"):  # an answer's cards in the order it showed them (stored in no set order)
                thread["elements"].sort(key=_position)
        return found
