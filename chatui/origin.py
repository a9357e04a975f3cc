"""Guards in front of Chainlit's routes (pure ASGI, no change to Chainlit itself).

- Sign-in forms posted from another site (login CSRF: a page elsewhere signs the victim's browser in as the
  attacker, whose chat then records what the victim asks): Chainlit's /chat/login takes any form post.
- Thread sharing: Chainlit 2.12 answers its share routes although `allow_thread_sharing` is off, as it is here.
"""

from __future__ import annotations

from urllib.parse import urlsplit

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


SHARING = ("/chat/project/share/", "/chat/project/thread/share")


class NoThreadSharing:
    """Pure ASGI middleware: the thread-share routes answer 404, as any address that does not exist."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope.get("path", "").startswith(SHARING):
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"application/json")]})  # fmt: skip
            await send({"type": "http.response.body", "body": b'{"detail": "Not Found"}'})
            return
        return await self.app(scope, receive, send)
