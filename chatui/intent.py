"""A chat opened for one paper (`/chat?paper=<id>`): the intent survives the sign-in page, and is used once."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, quote, unquote, urlsplit

CHAT_PAPER_COOKIE = "scholarloom_chat_paper"


class ChatPaperIntent:
    """Pure ASGI middleware: opening `/chat?paper=<id>` leaves a short-lived cookie naming the paper and a
    one-time nonce, so the intent survives the sign-in page (whose redirect drops the query); opening `/chat`
    without a paper forgets it. The chat spends the nonce once (`paper_in_address`)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET" or scope.get("path") not in ("/chat", "/chat/"):
            return await self.app(scope, receive, send)
        wanted = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("paper") or [""])[0][:200]
        if wanted:
            value = f"{secrets.token_urlsafe(12)}.{quote(wanted, safe='')}"
            cookie = f"{CHAT_PAPER_COOKIE}={value}; Max-Age=900; Path=/; HttpOnly; SameSite=Lax"
        else:
            cookie = f"{CHAT_PAPER_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax"

        async def with_cookie(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie.encode())]}
            await send(message)

        return await self.app(scope, receive, with_cookie)


def paper_in_address(environ: dict, spend: Callable[[str], bool]) -> str | None:
    """The paper a chat was opened for: /chat?paper=<id>, as the browser's Referer of the socket shows it, or,
    after the sign-in page dropped the query, the one-time cookie `ChatPaperIntent` left (its nonce is spent
    here, in the database, so the cookie works once)."""
    query = parse_qs(urlsplit(environ.get("HTTP_REFERER", "")).query)
    if query.get("paper"):
        return query["paper"][0]
    jar = SimpleCookie()
    try:
        jar.load(environ.get("HTTP_COOKIE", ""))
    except Exception:  # a malformed Cookie header: no intent
        return None
    value = jar[CHAT_PAPER_COOKIE].value if CHAT_PAPER_COOKIE in jar else ""
    nonce, _, paper = value.partition(".")
    if not nonce or not paper or not spend(nonce):
        return None
    return unquote(paper)
