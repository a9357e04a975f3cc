"""Chainlit handlers: thin wrappers that sign in through auth/ and answer through assistant/."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import parse_qs, urlsplit

import chainlit as cl

from assistant.prompts import STARTERS
from assistant.tools import Card, SourceBook, ToolResult
from pages.addresses import paper_path
from pages.base import md_escape
from scholarloom.runtime import client_address, current

STEP_OUTPUT_CHARS = 1_500


class ChainlitTurnUI:
    """Shows a turn in Chainlit: a step per tool call, the answer streamed into one message."""

    def __init__(self) -> None:
        self.message: cl.Message | None = None

    async def tool_started(self, name: str, arguments: dict) -> cl.Step:
        step = cl.Step(name=name, type="tool", show_input="json")
        step.input = json.dumps(arguments, ensure_ascii=False, default=str)
        await step.send()
        return step

    async def tool_finished(self, handle: cl.Step, result: ToolResult) -> None:
        handle.output = result.output[:STEP_OUTPUT_CHARS]
        if result.failed:
            handle.is_error = True
        await handle.update()

    async def stream(self, text: str) -> None:
        if self.message is None:
            self.message = cl.Message(content="")
        await self.message.stream_token(text)

    async def finish(self, answer: str, cards: list[Card]) -> None:
        # The final text replaces what was streamed (citations linked, stray links dropped); send() also
        # ends the stream and creates the step where a data layer persists it.
        self.message = self.message or cl.Message(content="")
        self.message.content = answer
        await self.message.send()


@cl.password_auth_callback
async def password_auth(username: str, password: str) -> cl.User | None:
    account = await asyncio.to_thread(current().sign_in, username, password, client_address.get())
    return cl.User(identifier=account.username, metadata={"provider": "password"}) if account else None


@cl.set_starters
async def starters(user: cl.User | None = None, language: str | None = None) -> list[cl.Starter]:
    return [cl.Starter(label=label, message=message) for label, message in STARTERS]


_USED_INTENTS: dict[str, None] = {}  # nonces of chat-paper cookies already used (bounded, oldest dropped)


def _paper_in_address(environ: dict) -> str | None:
    """The paper a chat was opened for: /chat?paper=<id>, as the browser's Referer of the socket shows it, or,
    after the sign-in page dropped the query, the one-time cookie `scholarloom.app.ChatPaperIntent` left."""
    query = parse_qs(urlsplit(environ.get("HTTP_REFERER", "")).query)
    if query.get("paper"):
        return query["paper"][0]
    from http.cookies import SimpleCookie
    from urllib.parse import unquote

    from scholarloom.app import CHAT_PAPER_COOKIE

    jar = SimpleCookie()
    try:
        jar.load(environ.get("HTTP_COOKIE", ""))
    except Exception:  # a malformed Cookie header: no intent
        return None
    value = jar[CHAT_PAPER_COOKIE].value if CHAT_PAPER_COOKIE in jar else ""
    nonce, _, paper = value.partition(".")
    if not nonce or not paper or nonce in _USED_INTENTS:
        return None
    _USED_INTENTS[nonce] = None
    while len(_USED_INTENTS) > 10_000:
        _USED_INTENTS.pop(next(iter(_USED_INTENTS)))
    return unquote(paper)


async def _chat_paper() -> str | None:
    """The catalog id of the paper this chat is about, if any; worked out once per session.

    Both handlers call it: a first message can arrive before on_chat_start has finished.
    """
    if cl.user_session.get("paper_checked"):
        return cl.user_session.get("paper")
    wanted = _paper_in_address(cl.context.session.environ or {})
    paper_id = await asyncio.to_thread(current().catalog.resolve_paper_id, wanted) if wanted else None
    cl.user_session.set("paper", paper_id)
    cl.user_session.set("paper_checked", True)
    return paper_id


@cl.on_chat_start
async def on_chat_start() -> None:
    paper_id = await _chat_paper()
    if paper_id:
        paper = current().catalog.papers([paper_id])[paper_id]
        title = md_escape(paper.title)
        await cl.Message(
            content=f"This chat is about **[{title}]({paper_path(paper)})**. Ask anything about it."
        ).send()


@cl.on_message
async def on_message(message: cl.Message) -> None:
    runtime = current()
    user = cl.user_session.get("user")
    keep = runtime.settings.agent.history_messages
    history = (cl.user_session.get("history") or [])[-keep:] if keep else []
    sources = cl.user_session.get("sources") or SourceBook()
    cl.user_session.set("sources", sources)  # numbers [n] stay the same paper for the whole conversation
    deps = runtime.tool_deps(user.identifier if user else "anonymous", sources, await _chat_paper())
    await runtime.agent.turn(deps, history, message.content, ChainlitTurnUI())
    cl.user_session.set("history", history)
