"""A chat opened about one paper, researcher or institution (`/chat?paper=<id>`, `?researcher=<id>`,
`?institution=<id>`): the intent survives the sign-in page, and is used once."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, quote, unquote, urlsplit

CHAT_PAPER_COOKIE = "scholarloom_chat_paper"


SUBJECTS = ("paper", "researcher", "institution", "library")  # library=mine: the user's own library


def _wanted(query: dict[str, list[str]]) -> tuple[str, str] | None:
    for kind in SUBJECTS:
        value = (query.get(kind) or [""])[0][:200]
        if value:
            return kind, value
    return None


class ChatPaperIntent:
    """Pure ASGI middleware: opening `/chat?paper=<id>` (or `?researcher=`, `?institution=`) leaves a short-lived
    cookie naming what the chat is about and a one-time nonce, so the intent survives the sign-in page (whose
    redirect drops the query); opening `/chat` without one forgets it. The chat spends the nonce once
    (`chat_intent`)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET" or scope.get("path") not in ("/chat", "/chat/"):
            return await self.app(scope, receive, send)
        wanted = _wanted(parse_qs(scope.get("query_string", b"").decode("latin-1")))
        if wanted:
            value = f"{secrets.token_urlsafe(12)}.{wanted[0]}.{quote(wanted[1], safe='')}"
            cookie = f"{CHAT_PAPER_COOKIE}={value}; Max-Age=900; Path=/; HttpOnly; SameSite=Lax"
        else:
            cookie = f"{CHAT_PAPER_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax"

        async def with_cookie(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie.encode())]}
            await send(message)

        return await self.app(scope, receive, with_cookie)


def chat_intent(environ: dict, spend: Callable[[str], bool]) -> tuple[str, str] | None:
    """What a chat was opened about, (kind, id): /chat?paper=<id> (or researcher, institution) as the browser's
    Referer of the socket shows it, or, after the sign-in page dropped the query, the one-time cookie
    `ChatPaperIntent` left (its nonce is spent here, in the database, so the cookie works once)."""
    wanted = _wanted(parse_qs(urlsplit(environ.get("HTTP_REFERER", "")).query))
    if wanted:
        return wanted
    jar = SimpleCookie()
    try:
        jar.load(environ.get("HTTP_COOKIE", ""))
    except Exception:  # a malformed Cookie header: no intent
        return None
    value = jar[CHAT_PAPER_COOKIE].value if CHAT_PAPER_COOKIE in jar else ""
    nonce, _, rest = value.partition(".")
    kind, _, subject = rest.partition(".")
    if kind not in SUBJECTS or not nonce or not subject or not spend(nonce):
        return None
    return kind, unquote(subject)
