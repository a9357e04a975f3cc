"""What guards every page: answers that may show private data are kept by no cache, and the expensive public pages
(search and comparison, 0.5-2 s each when cold) have a rate per address, a ceiling on how many anonymous ones are
computed at once, and a minute's memory of their anonymous answers.

Both are pure ASGI middlewares (`scholarloom.app` adds them); neither reads a body.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

# Routes whose answers depend on who asks even without a cookie's help are private by path too.
PRIVATE_PREFIXES = ("/me/", "/admin/", "/api/library")
NOT_PAGES = ("/static/", "/chat/")  # files with their own caching (content-hashed, public), and Chainlit's routes
EXPENSIVE = frozenset({"/search", "/api/search", "/api/passages", "/api/support", "/compare", "/compare.md",
                       "/compare.csv"})


def _header(scope, name: bytes) -> str:
    return next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == name), "")


def signed_in(scope) -> bool:
    """The request carries a session (the chat's cookie) or a token: its answer may be that user's alone."""
    return "access_token" in _header(scope, b"cookie") or bool(_header(scope, b"authorization"))


def answered_as_someone(scope) -> bool:
    """`signed_in`, where a token counts only on the paths that read one (`/api/`: `BearerTokens` has checked it
    by then): an `Authorization` header sent to a page changes nothing of its answer, so it buys no way round the
    anonymous ceiling and memory."""
    return "access_token" in _header(scope, b"cookie") or (
        bool(_header(scope, b"authorization")) and scope.get("path", "").startswith("/api/"))

class PrivatePages:
    """Every page answer `Vary: Cookie` (a signed-in reader sees the chat dock, their uploads in search results);
    an answer to a signed-in request, or under /me/, /admin/ or /api/library, `Cache-Control: private, no-store`
    unless its route said `private` itself. A shared cache or a browser's back button never hands one user's search
    results, feed key or admin page to another."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith(NOT_PAGES):
            return await self.app(scope, receive, send)
        private = signed_in(scope) or path.startswith(PRIVATE_PREFIXES)

        async def marked(message):
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"vary"]
                varies = {p.strip() for k, v in message.get("headers", []) if k.lower() == b"vary"
                          for p in v.decode("latin-1").split(",") if p.strip()}  # fmt: skip
                headers.append((b"vary", ", ".join(sorted(varies | {"Cookie"})).encode("latin-1")))
                if private:
                    said = next((v for k, v in headers if k.lower() == b"cache-control"), b"")
                    if not said.lower().startswith(b"private"):
                        headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"]
                        headers.append((b"cache-control", b"private, no-store"))
                message = {**message, "headers": headers}
            await send(message)

        return await self.app(scope, receive, marked)


@dataclass(frozen=True)
class PublicLimits:
    per_minute: int = 60  # expensive requests an address may make a minute, in bursts of as many (0: no limit)
    at_once: int = 2  # anonymous expensive answers computed at the same time (the rest wait their turn)
    wait: float = 10.0  # seconds one waits for its turn before a 503
    remember: float = 60.0  # seconds an anonymous answer is kept (the archive changes by ingest jobs, not by reads)
    kept: int = 512  # answers kept at most
    largest: int = 1 << 20  # bytes of one kept answer at most


class RateLimiter:
    """A token bucket per key: `per_minute` tokens at most, one back every `60 / per_minute` seconds. The least
    recently seen keys are forgotten past `keys` (memory does not grow with the addresses that ever asked)."""

    def __init__(self, per_minute: int, keys: int = 10_000, clock=time.monotonic) -> None:
        self.capacity, self.rate, self.keys, self.clock = per_minute, per_minute / 60.0, keys, clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """0 when `key` may go on (a token is spent); else the seconds until it may."""
        now = self.clock()
        with self._lock:
            tokens, then = self._buckets.pop(key, (float(self.capacity), now))
            tokens = min(self.capacity, tokens + (now - then) * self.rate)
            wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
            self._buckets[key] = (tokens - 1 if not wait else tokens, now)
            while len(self._buckets) > self.keys:
                self._buckets.popitem(last=False)
            return wait


class ExpensivePages:
    """The rate per address, the ceiling on anonymous work at once, and the memory of anonymous answers, for the
    paths in EXPENSIVE (GET only). A kept answer is served without counting against the rate: it costs nothing.
    `generation()` changes when the archive does (the index's writes: an ingest job's papers are found at once);
    what another process wrote is seen within `remember` seconds."""

    def __init__(self, app, limits: PublicLimits = PublicLimits(), generation: Callable[[], int] = lambda: 0,
                 clock=time.monotonic) -> None:  # fmt: skip
        self.app, self.limits, self.generation, self.clock = app, limits, generation, clock
        self.rates = RateLimiter(limits.per_minute, clock=clock) if limits.per_minute else None
        self._turns: asyncio.Semaphore | None = None  # made in the serving loop, on first use
        self._kept: OrderedDict[tuple, tuple[float, dict, bytes]] = OrderedDict()
        self.computed = 0  # anonymous answers computed (not served from memory): for tests and /metrics readers

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] not in EXPENSIVE or scope["method"] not in ("GET", "HEAD"):
            return await self.app(scope, receive, send)
        anonymous = not answered_as_someone(scope)
        markdown = "markdown" in _header(scope, b"accept")
        key = (scope["path"], scope.get("query_string", b""), markdown, self.generation())
        if anonymous and (kept := self._recall(key)) is not None:
            return await _replay(send, *kept)
        address = (scope.get("client") or ("unknown",))[0]
        if self.rates is not None and (wait := self.rates.take(address)):
            return await _refuse(send, 429, "Too many searches from your address; wait a moment.", wait, scope)
        if not anonymous:
            return await self.app(scope, receive, send)
        if self._turns is None:
            self._turns = asyncio.Semaphore(self.limits.at_once)
        try:
            await asyncio.wait_for(self._turns.acquire(), self.limits.wait)
        except asyncio.TimeoutError:
            return await _refuse(send, 503, "The server is busy with other searches; try again in a moment.", 5, scope)
        try:
            self.computed += 1
            return await self.app(scope, receive, self._keeping(key, send))
        finally:
            self._turns.release()

    def _recall(self, key: tuple):
        found = self._kept.get(key)
        if found is None or self.clock() - found[0] > self.limits.remember:
            return None
        self._kept.move_to_end(key)
        return found[1], found[2]

    def _keeping(self, key: tuple, send):
        started: dict = {}
        body: list[bytes] = []

        async def keeping(message):
            if message["type"] == "http.response.start":
                started.update(message)
            elif message["type"] == "http.response.body":
                body.append(message.get("body", b""))
                size = sum(map(len, body))
                if not message.get("more_body") and started.get("status") == 200 and size <= self.limits.largest:
                    headers = [(k, v) for k, v in started.get("headers", []) if k.lower() != b"set-cookie"]
                    self._kept[key] = (self.clock(), {**started, "headers": headers}, b"".join(body))
                    while len(self._kept) > self.limits.kept:
                        self._kept.popitem(last=False)
            await send(message)

        return keeping


async def _replay(send, start: dict, body: bytes) -> None:
    await send(start)
    await send({"type": "http.response.body", "body": body})


async def _refuse(send, status: int, message: str, retry_after: float, scope) -> None:
    """Plain text for a page, JSON (`{"detail": ...}`, as /openapi.json says) for the API."""
    import json

    wait = str(max(1, round(retry_after))).encode()
    body, kind = message.encode(), b"text/plain; charset=utf-8"
    if scope["path"].startswith("/api/"):
        body, kind = json.dumps({"detail": message}).encode(), b"application/json"
    headers = [(b"content-type", kind), (b"retry-after", wait), (b"cache-control", b"no-store")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
