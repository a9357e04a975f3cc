"""How large a request body each route takes: one table (`body_caps`), and the pure ASGI middleware that holds every
request to it (`BodyLimits`) before anything reads or parses the body, signed in or not (issue 66, finding 5).

A declared Content-Length over the route's cap is refused with 413 before a byte is read; a body without one
(chunked) is counted as it streams in and cut off with 413 the moment it passes the cap: the rest is never read,
the route never sees it. The 413 says the limit in words: JSON on `/api/` and `/mcp`, plain text elsewhere.

Without the table, FastAPI reads and parses a whole JSON body before the handler's sign-in check runs: 48 MB sent
anonymously held the event loop (and `/healthz`) for over a second. Routes keep only what depends on the user (the
room left in an upload quota, `web.library`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from retrieval.library.uploads import UploadLimits

KB, MB = 1024, 1024 * 1024
SMALL = 64 * KB  # a form or a JSON request (every route not named below, Chainlit's JSON routes and sign-in too)
READING_LIST = 2 * MB  # the file of `POST /api/library/import`
# A correction is 500 + 100 x 200 + 5,000 characters at most; sent as percent-encoded UTF-8, up to 9 bytes each.
CORRECTION = 256 * KB
MCP_MESSAGE = 256 * KB  # a JSON-RPC message to the MCP server: tool calls with short arguments
SOCKET_IO = 1_000_000  # Chainlit's socket.io (long-polling posts): engine.io's own `max_http_buffer_size`
ANY = frozenset()  # every method


@dataclass(frozen=True)
class BodyCap:
    methods: frozenset[str]  # the methods it applies to (ANY: all)
    path: str  # a template: `{name}` is one segment, a trailing `*` anything after
    size: Callable[[], int]  # bytes of what the body carries (0: the route takes none: it is switched off)
    what: str  # what the body carries, for the 413's words (plural)
    framing: int = 0  # what a multipart request adds around its file (boundaries, headers)

    def applies(self, method: str, path: str) -> bool:
        return (not self.methods or method in self.methods) and _fits(self.path, path)

    def limit(self) -> int:
        """The largest body taken, in bytes."""
        size = self.size()
        return size + self.framing if size else 0

    def refusal(self) -> str:
        size = self.size()
        if not size:
            return f"Refused: {self.what} are switched off on this server."
        return f"Refused: the body is larger than the limit of {size_in_words(size)} for {self.what}."


def _fixed(size: int) -> Callable[[], int]:
    return lambda: size


def body_caps(uploads: UploadLimits, chat_upload: Callable[[], int] = _fixed(0)) -> tuple[BodyCap, ...]:
    """Every route's cap, the first that applies: the one place they are written. `uploads` are the settings'
    (SCHOLARLOOM_UPLOAD_MAX_MB); `chat_upload()` is the file size Chainlit's attach button takes now
    (`chatui.origin.upload_limit`: its own setting, 0 when uploads are off)."""
    framing = UploadLimits.FRAMING
    return (
        BodyCap(frozenset({"POST"}), "/api/library", lambda: uploads.max_bytes, "PDF uploads", framing),
        BodyCap(frozenset({"POST"}), "/api/library/import", _fixed(READING_LIST), "reading lists", framing),
        BodyCap(frozenset({"PATCH"}), "/api/library/{id}", _fixed(CORRECTION), "corrections"),
        BodyCap(frozenset({"POST"}), "/me/library/{id}/edit", _fixed(CORRECTION), "corrections"),
        BodyCap(ANY, "/mcp", _fixed(MCP_MESSAGE), "MCP messages"),
        BodyCap(frozenset({"POST"}), "/chat/project/file", chat_upload, "chat uploads", framing),
        BodyCap(ANY, "/chat/ws/*", _fixed(SOCKET_IO), "chat messages"),
        BodyCap(ANY, "*", _fixed(SMALL), "forms and JSON requests"),  # anything else, known or not
    )


def cap_for(caps: tuple[BodyCap, ...], method: str, path: str) -> BodyCap:
    return next((cap for cap in caps if cap.applies(method, path)), caps[-1])


def size_in_words(size: int) -> str:
    return f"{size / MB:g} MB" if size >= MB else f"{size / KB:g} KB"


def _fits(template: str, path: str) -> bool:
    if template.endswith("*"):
        return path.startswith(template[:-1])
    want, got = template.split("/"), path.split("/")
    return len(want) == len(got) and all(w == g or (w.startswith("{") and g) for w, g in zip(want, got))


class BodyLimits:
    """Pure ASGI middleware: each HTTP request held to its route's cap (`body_caps`). Outside every guard that
    could read a body, and outside the sign-in checks: an anonymous body is refused as early as anyone's."""

    def __init__(self, app, caps: tuple[BodyCap, ...]) -> None:
        self.app = app
        self.caps = caps

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        cap = cap_for(self.caps, scope.get("method", "GET"), scope.get("path", ""))
        limit = cap.limit()
        declared = next((v for k, v in scope.get("headers", []) if k.lower() == b"content-length"), None)
        if declared is not None and not (declared.isascii() and declared.isdigit() and int(declared) <= limit):
            return await too_large(scope, send, cap)
        state = {"seen": 0, "cut": False, "refused": False, "started": False}

        async def counted():
            if state["cut"]:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                state["seen"] += len(message.get("body", b""))
                if state["seen"] > limit:
                    state["cut"] = True
                    if not state["started"]:  # (a route that answered before it read: its answer stands)
                        state["refused"] = True
                        await too_large(scope, send, cap)
                    return {"type": "http.disconnect"}  # the route stops as if the client had gone
            return message

        async def unless_refused(message):
            if message["type"] == "http.response.start":
                state["started"] = True
            if not state["refused"]:
                await send(message)

        try:
            await self.app(scope, counted, unless_refused)
        except Exception:
            if not state["cut"]:
                raise  # (a route that fails on the body cut short has been answered: nothing to log)


async def too_large(scope, send, cap: BodyCap) -> None:
    """413 with the cap in words; `Connection: close`, so the server reads nothing more of this request."""
    path = scope.get("path", "")
    if path.startswith("/api/") or path == "/mcp" or path.startswith("/mcp/"):
        body, kind = json.dumps({"detail": cap.refusal()}).encode(), b"application/json"
    else:
        body, kind = cap.refusal().encode(), b"text/plain; charset=utf-8"
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode()), (b"connection", b"close"),
               (b"cache-control", b"no-store")]  # fmt: skip
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
