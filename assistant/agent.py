"""One turn of the conversation: the model calls tools until it answers, streaming what it writes."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Protocol

from assistant.citations import StreamGuard, link_citations, sources_footer
from assistant.llm import Completion, LLMConfig, LLMError, stream_completion
from assistant.prompts import system_prompt
from assistant.retrieval_only import answer_without_llm
from assistant.tools import TOOLS, TOOLS_BY_NAME, Card, ToolDeps, ToolResult, call_tool, tool_schema

log = logging.getLogger(__name__)
TOOL_OUTPUT_CHARS = 12_000  # what one tool result may add to the model's context
HISTORY_TOOL_CHARS = 2_000  # what one tool result keeps in the history later turns see


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


def recent_history(history: list[dict], keep: int) -> list[dict]:
    """The last `keep` messages or so, starting at a user message: a tool result is never sent without the call
    that asked for it."""
    if keep <= 0:
        return []
    start = max(0, len(history) - keep)
    while start < len(history) and history[start].get("role") != "user":
        start += 1
    return history[start:]


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


class Agent:
    def __init__(self, llm: LLMConfig | None, max_tool_rounds: int = 4) -> None:
        self.llm = llm
        self.max_tool_rounds = max_tool_rounds
        self.schemas = [tool_schema(t) for t in TOOLS]

    async def turn(self, deps: ToolDeps, history: list[dict], question: str, ui: TurnUI) -> TurnOutcome:
        """Answer one question; history holds earlier user/assistant messages and is extended in place."""
        if self.llm is None:
            outcome = await answer_without_llm(deps, question, ui)
        else:
            outcome = await self._with_llm(deps, history, question, ui)
        history += [
            {"role": "user", "content": question},
            *outcome.exchange,
            {"role": "assistant", "content": outcome.answer},
        ]
        return outcome

    async def _with_llm(self, deps: ToolDeps, history: list[dict], question: str, ui: TurnUI) -> TurnOutcome:
        messages = [{"role": "system", "content": system_prompt(deps)}, *history, {"role": "user", "content": question}]
        cards: list[Card] = []
        exchange: list[dict] = []
        calls = 0
        try:
            for round_number in range(self.max_tool_rounds + 1):
                # On the last round no tools are offered, so the model has to answer.
                tools = self.schemas if round_number < self.max_tool_rounds else []
                completion = Completion()
                guard = StreamGuard()
                async for item in stream_completion(self.llm, messages, tools):
                    if isinstance(item, Completion):
                        completion = item
                    elif shown := guard.feed(item):
                        await ui.stream(shown)
                if not completion.tool_calls:
                    break
                asked = {
                    "role": "assistant",
                    "content": completion.text or None,
                    "tool_calls": [
                        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments or "{}"}}
                        for c in completion.tool_calls
                    ],
                }
                messages.append(asked)
                exchange.append(asked)
                for call in completion.tool_calls:
                    calls += 1
                    result = await run_tool(ui, deps, call.name, call.parsed_arguments())
                    cards += [c for c in result.cards if c not in cards]
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": result.output[:TOOL_OUTPUT_CHARS]}
                    )
                    exchange.append({"role": "tool", "tool_call_id": call.id, "content": _shortened(result.output)})
        except LLMError as exc:
            log.warning("LLM failure: %s", exc, exc_info=exc.__cause__)
            answer = f"Sorry: {exc}."
            await ui.finish(answer, cards)
            return TurnOutcome(answer, cards, [], calls, str(exc), exchange)
        sources = deps.sources.by_number()
        text, cited = link_citations(completion.text.strip() or "I could not find an answer.", sources)
        answer = text + sources_footer(cited, sources)
        # Cited papers, and the researchers and institutions the answer is about; everything when nothing is cited.
        shown = [c for c in cards if c.kind != "paper" or c.number in cited] if cited else cards
        await ui.finish(answer, shown)
        return TurnOutcome(answer, shown, cited, calls, exchange=exchange)


def _shortened(output: str) -> str:
    if len(output) <= HISTORY_TOOL_CHARS:
        return output
    return output[:HISTORY_TOOL_CHARS].rsplit("\n", 1)[0] + "\n… (shortened in the conversation's history)"
