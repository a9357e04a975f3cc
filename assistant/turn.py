"""What one turn of the conversation is made of, whoever answers it (the agent or retrieval-only mode): where it
shows itself, what it produced, and how it runs a tool."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Protocol

from assistant.tools import TOOLS_BY_NAME, Card, ToolDeps, ToolResult, call_tool


class TurnUI(Protocol):
    """Where a turn shows itself: the Chainlit handler in the app, a recorder in tests."""

    async def tool_started(self, name: str, arguments: dict) -> object: ...
    async def tool_finished(self, handle: object, result: ToolResult) -> None: ...
    async def stream(self, text: str) -> None: ...
    async def finish(self, answer: str, cards: list[Card]) -> None: ...


@dataclass
class TurnOutcome:
    answer: str
    cards: list[Card] = field(default_factory=list)
    cited: list[int] = field(default_factory=list)
    tool_calls: int = 0
    error: str | None = None
    # The turn's tool calls and (shortened) results, so a follow-up question sees what was found, not only
    # what was said ("who else did she write with?" needs the researcher id the last turn looked up).
    exchange: list[dict] = field(default_factory=list)
    mode: str = "retrieval-only"  # who answered: "agent" (the model with tools) or "retrieval-only"
    why: str = ""  # and why that mode, in a few words for the label


async def run_tool(ui: TurnUI, deps: ToolDeps, name: str, arguments: dict) -> ToolResult:
    handle = await ui.tool_started(name, arguments)
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        result = ToolResult(f"Error: there is no tool named {name[:60]!r}; use one of {', '.join(TOOLS_BY_NAME)}.")
    else:
        # Tools are synchronous (database and index calls); keep the event loop free for other sessions.
        result = await asyncio.to_thread(call_tool, tool, deps, arguments)
    await ui.tool_finished(handle, result)
    return result
