"""One turn of the conversation: the model calls tools until it answers, streaming what it writes."""

from __future__ import annotations

import logging

from assistant.citations import link_citations, sources_footer
from assistant.llm import Completion, LLMConfig, LLMError, stream_completion
from common.retry import Retrier
from assistant.prompts import system_prompt
from assistant.retrieval_only import answer_without_llm
from assistant.safe_markdown import StreamGuard
from assistant.thinking import ThinkingFilter, strip_thinking
from assistant.tools import TOOLS, Card, ToolDeps, tool_schema
from assistant.turn import TurnOutcome, TurnUI, run_tool

log = logging.getLogger(__name__)
TOOL_OUTPUT_CHARS = 12_000  # what one tool result may add to the model's context
HISTORY_TOOL_CHARS = 2_000  # what one tool result keeps in the history later turns see


def recent_history(history: list[dict], keep: int) -> list[dict]:
    """The last `keep` messages or so, starting at a user message: a tool result is never sent without the call
    that asked for it."""
    if keep <= 0:
        return []
    start = max(0, len(history) - keep)
    while start < len(history) and history[start].get("role") != "user":
        start += 1
    return history[start:]


class Agent:
    def __init__(self, llm: LLMConfig | None, max_tool_rounds: int = 4, retrier: Retrier | None = None) -> None:
        self.llm = llm
        self.max_tool_rounds = max_tool_rounds
        self.retrier = retrier  # None: the LLM client's own policy
        self.schemas = [tool_schema(t) for t in TOOLS]

    async def turn(self, deps: ToolDeps, history: list[dict], question: str, ui: TurnUI) -> TurnOutcome:
        """Answer one question; history holds earlier user/assistant messages and is extended in place."""
        if self.llm is None:
            outcome = await answer_without_llm(deps, question, ui)
            outcome.why = "no language model is configured (SCHOLARLOOM_LLM)"
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
                guard, thinking = StreamGuard(), ThinkingFilter()
                async for item in stream_completion(self.llm, messages, tools, self.retrier):
                    if isinstance(item, Completion):
                        completion = item
                    elif shown := guard.feed(thinking.feed(item)):
                        await ui.stream(shown)
                completion.text = strip_thinking(completion.text)  # a reasoning model's thoughts are not the answer
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
        except LLMError as exc:  # said plainly, and the question still gets what search finds
            log.warning("LLM failure (%s): %s", exc.kind, exc, exc_info=exc.__cause__)
            notice = (f"**The language model could not answer**: {exc}. Below is what search found for your "
                      "question instead (retrieval-only).")  # fmt: skip
            fallback = await answer_without_llm(deps, question, ui, notice=notice)
            fallback.error, fallback.tool_calls = str(exc), calls + fallback.tool_calls
            fallback.why = f"the language model failed ({exc.kind})"
            return fallback
        sources = deps.sources.by_number()
        text, cited = link_citations(completion.text.strip() or "I could not find an answer.", sources)
        answer = text + sources_footer(cited, sources)
        # Cited papers, and the researchers and institutions the answer is about; everything when nothing is cited.
        shown = [c for c in cards if c.kind != "paper" or c.number in cited] if cited else cards
        await ui.finish(answer, shown)
        return TurnOutcome(answer, shown, cited, calls, exchange=exchange, mode="agent",
                           why=f"{self.llm.model} calls the tools and writes the answer")  # fmt: skip


def _shortened(output: str) -> str:
    if len(output) <= HISTORY_TOOL_CHARS:
        return output
    return output[:HISTORY_TOOL_CHARS].rsplit("\n", 1)[0] + "\n… (shortened in the conversation's history)"
