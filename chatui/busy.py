"""A busy server, said in words: a chat question that waits for a turn shows its place in line, one refused says why
and when to try again, and a sign-in refused answers 503 with the same words and a Retry-After (the form shows its
own words for it, `chatui.root.SAID`). The turns are `common.admission.Admission` (one for chat questions, one for
sign-ins: SCHOLARLOOM_CHAT__*, SCHOLARLOOM_SIGN_IN__*), the mechanism the MCP endpoint uses; `/metrics` shows each
one's running, waiting and refused. (Chainlit is imported only by `take_turn`, once its root is prepared.)"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack

from assistant.conversation import NOTICE
from common.admission import Admission, Busy

SIGN_IN = "/chat/login"  # Chainlit's password sign-in
AUTHOR = "ScholarLoom"  # the server's own notices, apart from the assistant's answers


def queued_words(place: int, wait_seconds: float) -> str:
    ahead = "you are next" if place == 1 else f"{place - 1} questions are ahead of yours"
    return (f"The server is busy: your question is queued ({ahead}). It is answered as soon as a turn is free, "
            f"within {wait_seconds:g} s, or you are told to try again.")  # fmt: skip


async def take_turn(admission: Admission, user: str, stack: AsyncExitStack) -> bool:
    """Holds one of `user`'s turns on `stack` (for as long as the stack is open): True at once when there is room,
    or after waiting in line with the queue notice shown (and removed once the turn is taken); False when it was
    refused, the refusal shown in the chat instead."""
    import chainlit as cl

    notice: cl.Message | None = None

    async def queued(place: int) -> None:
        nonlocal notice
        notice = cl.Message(content=queued_words(place, admission.limits.wait_seconds), author=AUTHOR,
                            metadata={NOTICE: "queued"})
        await notice.send()

    try:
        await stack.enter_async_context(admission.slot(user, queued))
    except Busy as refused:
        await cl.Message(content=str(refused), author=AUTHOR, metadata={NOTICE: "busy"}).send()
        return False
    finally:
        if notice is not None:
            await notice.remove()
    return True


class SignInTurns:
    """Pure ASGI middleware: each password sign-in (argon2, about one and a half cores for a tenth of a second) is
    checked in its turn, a line per client address; past the line, 503 with the refusal in words and a Retry-After.
    Around Chainlit's route, because Chainlit turns any exception of the sign-in callback into a bare 401."""

    def __init__(self, app, turns) -> None:
        self.app, self.turns = app, turns  # turns: () -> the Admission (read at each request: settings, tests)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "POST" or scope.get("path") != SIGN_IN:
            return await self.app(scope, receive, send)
        address = (scope.get("client") or ("", 0))[0]
        try:
            async with self.turns().slot(address):
                return await self.app(scope, receive, send)
        except Busy as refused:
            headers = [(b"content-type", b"application/json"), (b"retry-after", str(refused.retry_after).encode()),
                       (b"cache-control", b"no-store")]  # fmt: skip
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": json.dumps({"detail": str(refused)}).encode()})
