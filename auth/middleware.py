"""ASGI middlewares of the sign-in rules: who the client is (its address, for throttling) and which user an HTTP
request carries (for the chat-history rules that Chainlit's routes leave to the data layer)."""

from __future__ import annotations

import asyncio
import logging
import re

from auth.sessions import client_address, request_user, signed_in_session

log = logging.getLogger(__name__)


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


# What writes: any other method (TRACE, CONNECT, a made-up one) is no question of scope; the app answers it (405 where
# the address has routes, 404 where it has none).
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
LIBRARY_WRITES = ("/api/library",)  # what a "library" token may also write to (its own user's library)
INVALID = (b"www-authenticate", b'Bearer realm="scholarloom", error="invalid_token"')
SCOPE = (b"www-authenticate", b'Bearer realm="scholarloom", error="insufficient_scope"')


def token_path(path: str) -> bool:
    return path.startswith("/api/") or path == "/mcp" or path.startswith("/mcp/")


class BearerTokens:
    """Pure ASGI middleware: `Authorization: Bearer <personal API token>` on `/api/*` and `/mcp` (`auth.tokens`).

    A valid token's user is the request's viewer (`scope["state"]["token_user"]`, read by the app's viewer before
    any cookie); its use is logged with the request id (the token's prefix, never the token). An unknown, revoked or
    expired token is a 401 with `WWW-Authenticate`, and counts as a failure of the client's address in the
    sign-in throttle (`auth.throttle`): after a few, that address is refused for a while (429, Retry-After)
    without the token being looked at. A read token may only read (GET, HEAD) under /api/; a library token may
    also write to /api/library. `/mcp` takes POST from either: its tools only read. Each user may make `limit`'s
    requests a minute, all their tokens together (a script or an agent calling tools in a loop cannot take the
    server's searches for itself, nor multiply its rate by making more tokens): past them, a 429 with Retry-After.
    Any other path ignores the header."""

    def __init__(self, app, check, throttle, address_key, limit=None) -> None:
        self.app = app
        self.check = check  # token -> TokenUse | None
        self.throttle = throttle
        self.address_key = address_key
        self.limit = limit  # user's key -> seconds to wait (0: go on), e.g. `web.guards.RateLimiter.take`; None: none

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not token_path(scope.get("path", "")):
            return await self.app(scope, receive, send)
        header = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"authorization"), None)
        if header is None:
            return await self.app(scope, receive, send)
        kind, _, token = header.strip().partition(" ")
        if kind.lower() != "bearer" or not token.strip():
            return await _json(send, 401, "Send a personal API token as 'Authorization: Bearer sl_...'.",
                               [(b"www-authenticate", b'Bearer realm="scholarloom"')])  # fmt: skip
        address = scope.get("client")[0] if scope.get("client") else "unknown"
        key = "token:" + self.address_key(address)
        wait = await asyncio.to_thread(self.throttle.retry_after, key)
        if wait > 0:
            log.warning("api token refused from %s: too many bad tokens", address)
            return await _json(send, 429, "Too many unknown tokens from this address: wait.",
                               [(b"retry-after", str(max(1, round(wait))).encode())])  # fmt: skip
        use = await asyncio.to_thread(self.check, token.strip())
        if use is None:
            await asyncio.to_thread(self.throttle.failed, key)
            log.warning("api token refused from %s: unknown, revoked or expired", address)
            return await _json(send, 401, "This token is unknown, revoked or expired.", [INVALID])
        path, method = scope["path"], scope.get("method", "GET")
        writes = method in WRITE_METHODS and not path.startswith("/mcp")
        if writes and not (use.scope == "library" and path.startswith(LIBRARY_WRITES)):
            log.warning("api token %s of %s refused: %s %s needs more than %s", use.prefix, use.username, method,
                        path[:200], use.scope)  # fmt: skip
            return await _json(send, 403, f"This token may not {method} here: its scope is '{use.scope}'.", [SCOPE])
        if self.limit is not None and (wait := self.limit(f"user:{use.username}")) > 0:
            log.warning("api token %s of %s refused: over the user's rate (%s %s)", use.prefix, use.username, method,
                        path[:200])  # fmt: skip
            seconds = max(1, round(wait + 0.5))
            return await _json(send, 429, f"Your tokens made too many requests this minute (they share one rate): "
                               f"try again in {seconds} s.", [(b"retry-after", str(seconds).encode())])  # fmt: skip
        log.info("api token %s of %s: %s %s", use.prefix, use.username, method, path[:200])
        scope.setdefault("state", {})["token_user"] = use.username
        return await self.app(scope, receive, send)


async def _json(send, status: int, message: str, headers: list[tuple[bytes, bytes]]) -> None:
    import json

    body = json.dumps({"detail": message}).encode()
    start = [(b"content-type", b"application/json"), (b"cache-control", b"no-store"),
             (b"content-length", str(len(body)).encode()), *headers]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": start})
    await send({"type": "http.response.body", "body": body})
