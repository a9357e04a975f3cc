"""ASGI middlewares of the sign-in rules: who the client is (its address, for throttling) and which user an HTTP
request carries (for the chat-history rules that Chainlit's routes leave to the data layer)."""

from __future__ import annotations

import asyncio
import logging
import re

from auth.sessions import client_address, request_user, signed_in_session


class ClientAddress:
    """Pure ASGI middleware: remembers the client's address for sign-in throttling."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket") and scope.get("client"):
            token = client_address.set(scope["client"][0])
            try:
                return await self.app(scope, receive, send)
            finally:
                client_address.reset(token)
        return await self.app(scope, receive, send)


class RequestUser:
    """Pure ASGI middleware: the signed-in user of an HTTP request (session cookie verified with our secret, its
    session still live), for the chat-history rules Chainlit's routes leave to the data layer
    (`auth.sessions.request_user`). `live(name, version)` says whether a session still counts."""

    def __init__(self, app, secret: str, live) -> None:
        self.app = app
        self.secret = secret
        self.live = live

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        from http.cookies import SimpleCookie

        jar = SimpleCookie()
        try:
            jar.load(next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"cookie"), ""))
        except Exception:  # a malformed Cookie header: nobody
            jar = SimpleCookie()
        found = signed_in_session({k: m.value for k, m in jar.items()}, self.secret)
        if found and not await asyncio.to_thread(self.live, *found):
            found = None
        token = request_user.set(found[0] if found else None)
        try:
            return await self.app(scope, receive, send)
        finally:
            request_user.reset(token)


class HideFeedKeys(logging.Filter):
    """Keeps private feed keys out of the access log: `key=<secret>` in a logged address becomes `key=[hidden]`."""

    _KEY = re.compile(r"(\bkey=)[^&\s\"]+")

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(self._KEY.sub(r"\1[hidden]", a) if isinstance(a, str) else a for a in record.args)
        record.msg = self._KEY.sub(r"\1[hidden]", record.msg) if isinstance(record.msg, str) else record.msg
        return True
