"""Guards in front of Chainlit's routes (pure ASGI, no change to Chainlit itself).

- Sign-in forms posted from another site (login CSRF: a page elsewhere signs the victim's browser in as the
  attacker, whose chat then records what the victim asks): Chainlit's /chat/login takes any form post.
- Closed routes: Chainlit 2.12 answers its thread-share routes although `allow_thread_sharing` is off, as it is
  here, and `POST /chat/auth/jwt` turns any unexpired session token into a fresh one (a session that never ends);
  we use neither.
- Upload size: Chainlit's upload route parses the whole multipart body (and reads the file into memory) before it
  checks the size or whether uploads are on at all. `upload_limit` is its cap in the table of every route's
  (`web.bodies`), which refuses a body over it from its Content-Length and stops reading one that grows past it.
- Content policy: the chat's pages may load images only from this site (or inline data) and talk only to it, so
  even markdown that slipped past `assistant.safe_markdown` cannot send a request elsewhere.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from retrieval.library.uploads import UploadLimits

GUARDED = ("/chat/login", "/chat/auth/")


class SameOriginSignIn:
    """Pure ASGI middleware: a POST to Chainlit's sign-in routes whose Origin names another host gets 403. A
    request without an Origin (a script, a test client, an old browser) is left to the password check."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] == "http" and scope.get("method") == "POST" and path.startswith(GUARDED):
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            origin = headers.get("origin")
            if origin is not None and urlsplit(origin).netloc != headers.get("host", ""):
                await send({"type": "http.response.start", "status": 403,
                            "headers": [(b"content-type", b"text/plain; charset=utf-8")]})  # fmt: skip
                await send({"type": "http.response.body", "body": b"Refused: the sign-in did not come from this site."})
                return
        return await self.app(scope, receive, send)


CLOSED = ("/chat/project/share/", "/chat/project/thread/share", "/chat/auth/jwt")
CHAT_CSP = "img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'self'"


class ClosedRoutes:
    """Pure ASGI middleware: the thread-share routes and the token refresh answer 404, as any address that does
    not exist."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope.get("path", "").startswith(CLOSED):
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"application/json")]})  # fmt: skip
            await send({"type": "http.response.body", "body": b'{"detail": "Not Found"}'})
            return
        return await self.app(scope, receive, send)


class ChatContentPolicy:
    """Pure ASGI middleware: every response under /chat carries CHAT_CSP (unless it set a policy of its own)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not (scope.get("path", "") + "/").startswith("/chat/"):
            return await self.app(scope, receive, send)

        async def with_policy(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(k.lower() == b"content-security-policy" for k, _v in headers):
                    headers.append((b"content-security-policy", CHAT_CSP.encode()))
                message = {**message, "headers": headers}
            await send(message)

        return await self.app(scope, receive, with_policy)


def upload_limit() -> int:
    """Bytes of a file Chainlit's attach button takes now: its own setting when uploads are on (0 when off)."""
    from chainlit.config import config

    feature = config.features.spontaneous_file_upload
    if feature is None or not feature.enabled:
        return 0
    return UploadLimits(max_mb=feature.max_size_mb or UploadLimits.max_mb).max_bytes
