"""Chainlit handlers: thin wrappers that sign in through auth/ and answer through assistant/."""

from __future__ import annotations

import asyncio
import json

import chainlit as cl

from assistant.prompts import STARTERS
from assistant.tools import Card, SourceBook, ToolResult
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
        if self.message is None:
            self.message = cl.Message(content=answer)
            await self.message.send()
        else:
            self.message.content = answer
            await self.message.update()


@cl.password_auth_callback
async def password_auth(username: str, password: str) -> cl.User | None:
    account = await asyncio.to_thread(current().sign_in, username, password, client_address.get())
    return cl.User(identifier=account.username, metadata={"provider": "password"}) if account else None


@cl.set_starters
async def starters(user: cl.User | None = None, language: str | None = None) -> list[cl.Starter]:
    return [cl.Starter(label=label, message=message) for label, message in STARTERS]


@cl.on_chat_start
async def on_chat_start() -> None:
    cl.user_session.set("history", [])
    cl.user_session.set("sources", SourceBook())


@cl.on_message
async def on_message(message: cl.Message) -> None:
    runtime = current()
    user = cl.user_session.get("user")
    keep = runtime.settings.agent.history_messages
    history = (cl.user_session.get("history") or [])[-keep:] if keep else []
    sources = cl.user_session.get("sources") or SourceBook()
    deps = runtime.tool_deps(user.identifier if user else "anonymous", sources)
    await runtime.agent.turn(deps, history, message.content, ChainlitTurnUI())
    cl.user_session.set("history", history)
    cl.user_session.set("sources", sources)
