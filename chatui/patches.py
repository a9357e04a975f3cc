"""Every change we make to Chainlit's internals, in one place, written against one version.

Chainlit reads its session-signing secret from the environment; `apply(secret)` hands it ours instead, so the
app never writes a secret into `os.environ` (where every child process would inherit it).

Chainlit 2.12.0 answers 401 for another user's thread and 404 for a missing one (which tells a prober that a
thread id exists), and its socket lets a client name any thread id to resume into. `apply()` makes both cases
one: 404 "Thread not found" on every HTTP route that checks a thread's author, and on the socket another user's
thread id (or one that is not a UUID) is treated as a thread that does not exist. The rules themselves are
`auth.threads`.

Sessions end when we say so: every route's user (`get_current_user`, overridden on Chainlit's app) and every
socket connection checks that the token's account is active and its session version current (`live`), so
disabling a user, a new password or "sign out everywhere" ends their sessions at the next request. The session
cookie is `Secure` when the public URL is https. The socket's Origin check, which Chainlit turns off
(`cors_allowed_origins=[]`), accepts the chat's own origins and same-origin requests only.

`tests/chatui/test_patches.py` fails when the lock moves Chainlit off `CHAINLIT_VERSION`: read these patches
against the new code before moving the pin. Import only once Chainlit's root is prepared.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from importlib.metadata import version
from urllib.parse import urlsplit

import chainlit.auth
import chainlit.auth.cookie
import chainlit.auth.jwt
import chainlit.server as server
import chainlit.socket
from chainlit.auth import authenticate_user, get_current_user, require_login, reuseable_oauth
from chainlit.auth.jwt import decode_jwt
from chainlit.data import get_data_layer
from chainlit.socket import _authenticate_connection, sio
from fastapi import Depends, HTTPException

from auth.sessions import session_version
from auth.threads import may_open, resume_target

Live = Callable[[str, int], bool]  # (user name, session version in the token) -> does the session still count

CHAINLIT_VERSION = "2.12.0"


async def _owner(thread_id: str) -> str | None:
    layer = get_data_layer()
    if layer is None:
        raise HTTPException(status_code=400, detail="Data layer not initialized")
    try:  # one small query: who owns it (no such thread, or not a thread id -> ValueError)
        return await layer.get_thread_author(thread_id)
    except ValueError:
        return None


async def is_thread_author(username: str, thread_id: str) -> bool:
    """Replaces `chainlit.server.is_thread_author`: one answer for someone else's thread and a missing one."""
    if not may_open(username, await _owner(thread_id), thread_id):
        raise HTTPException(status_code=404, detail="Thread not found")
    return True


def _guard_resume(chainlit_connect):
    async def connect(sid, environ, auth):
        auth = dict(auth or {})
        thread_id = auth.get("threadId")
        if thread_id:
            user, _ = await _authenticate_connection(environ)
            owner = await _owner(thread_id) if user is not None and get_data_layer() is not None else None
            if not resume_target(user.identifier if user else None, owner, thread_id):
                # Exactly what a thread that does not exist gets: the resume fails with "Thread not found." and
                # the session writes to a fresh id, never to the other user's thread.
                auth["threadId"] = str(uuid.uuid4())
        return await chainlit_connect(sid, environ, auth)

    connect._scholarloom = True
    return connect


def _live_user(live: Live):
    """`get_current_user` that also refuses a session that has ended (401, as an expired token)."""

    async def current_user(token: str = Depends(reuseable_oauth)):
        if not require_login():
            return None
        try:
            user = decode_jwt(token)
        except Exception as exc:
            raise HTTPException(status_code=401, detail="Invalid authentication token") from exc
        if not await asyncio.to_thread(live, user.identifier, session_version(user.metadata)):
            raise HTTPException(status_code=401, detail="Session ended")
        return await authenticate_user(token)

    return current_user


def _socket_user(current_user):
    async def socket_user(token: str):
        try:
            return await current_user(token=token)
        except HTTPException:
            return None  # the connection is refused, as for no token

    return socket_user


def _origin_check(origins: list[str]):
    allowed = {o.rstrip("/") for o in origins}

    def accepted(origin: str | None, environ: dict) -> bool:
        """The socket's Origin check: one of the chat's origins, or the very host the request came to."""
        return bool(origin) and (origin in allowed or urlsplit(origin).netloc == environ.get("HTTP_HOST"))

    return accepted


def apply(secret: str, live: Live, origins: list[str], secure_cookies: bool = False) -> None:
    """Install the patches (idempotent). Refuses to run on a Chainlit they were not written for."""
    installed = version("chainlit")
    if installed != CHAINLIT_VERSION:
        raise RuntimeError(f"chatui.patches were written for Chainlit {CHAINLIT_VERSION}, not {installed}")

    def jwt_secret() -> str:
        return secret

    chainlit.auth.jwt.get_jwt_secret = jwt_secret  # what create_jwt and decode_jwt call
    chainlit.auth.get_jwt_secret = jwt_secret  # what ensure_jwt_secret calls
    server.is_thread_author = is_thread_author
    current_user = _live_user(live)
    server.app.dependency_overrides[get_current_user] = current_user
    chainlit.socket.get_current_user = _socket_user(current_user)  # what _authenticate_connection calls
    chainlit.auth.cookie._cookie_secure = secure_cookies or chainlit.auth.cookie._cookie_samesite == "none"
    sio.eio.cors_allowed_origins = _origin_check(origins)
    chainlit_connect = sio.handlers.get("/", {}).get("connect")
    if chainlit_connect is not None and not getattr(chainlit_connect, "_scholarloom", False):
        sio.on("connect")(_guard_resume(chainlit_connect))
