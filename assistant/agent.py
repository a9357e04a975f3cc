"""One turn of the conversation: the model calls tools until it answers, streaming what it writes."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from assistant.llm import (
    Completion,
    LLMConfig,
    LLMError,
    Streamer,
    ThinkingFilter,
    calls_in_text,
    read_arguments,
    stream_completion,
    strip_thinking,
)
from assistant.claim_check import checked
from assistant.pipeline import answer_with_pipeline, model_reply
from assistant.retrieval_only import answer_without_llm
from assistant.safe_markdown import StreamGuard
from assistant.tools import TOOLS, TOOLS_BY_NAME, Card, ToolDeps, ToolResult, tool_schema
from assistant.composer import shown_in, written
from assistant.turn import Answer, Question, TurnMode, TurnUI, TurnUsage, merge_cards, run_tool, system_prompt
from common.retry import Retrier

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
    def __init__(
        self, llm: LLMConfig | None, max_tool_rounds: int = 4, retrier: Retrier | None = None, tools: str = "auto",
        citations: str = "mend",
    ) -> None:  # fmt: skip
        self.llm = llm
        self.max_tool_rounds = max_tool_rounds
        self.retrier = retrier  # None: the LLM client's own policy
        self.stream: Streamer = stream_completion  # how a request is made (`serve`: in the model's own process)
        self.tools = tools  # "auto" (the agent unless the probe found no tool calling), "on", or "off" (pipeline)
        self.citations = citations  # the check of cited sentences: "mend", "mark" or "off" (`assistant.claim_check`)
        self.probed_tools: Callable[[], bool | None] = lambda: None  # the probe's finding, once there is one
        self.schemas = [tool_schema(t) for t in TOOLS]

    async def turn(
        self, deps: ToolDeps, history: list[dict], question: str, ui: TurnUI, held: str | None = None,
        usage: TurnUsage | None = None,
    ) -> Answer:  # fmt: skip
        """Answer one question with the model and its tools, the pipeline, or search alone; `history` (earlier
        user/assistant messages) is read, never changed: the turn's own messages are `Answer.messages()`. `held`:
        why this user's turn may not use the model now (today's budget spent), said above search's answer. `usage`
        gathers the model's tokens as the turn goes: a stopped turn has no answer, but its caller still knows what it
        cost. The conversation's answer service is `assistant.conversation.Chat`, which calls this."""
        usage = usage if usage is not None else TurnUsage()
        asked = Question.of(question)  # cleaned once, here: everything below reads `asked`
        if self.llm is None:
            answer = await answer_without_llm(deps, asked, ui)
            answer.why = "no language model is configured (SCHOLARLOOM_LLM)"
        elif held:
            answer = await answer_without_llm(deps, asked, ui, notice=held)
            answer.why = "today's language-model budget is spent (SCHOLARLOOM_LLM_DAILY_TOKENS)"
        else:
            answer = await self._with_llm(deps, list(history), asked, ui, usage)
        answer.question = question
        return answer

    def pipeline_reason(self) -> str | None:
        """Why this model answers through the pipeline rather than with tools, or None (the agent)."""
        if self.tools == "off":
            return "tool calling is switched off (SCHOLARLOOM_LLM_TOOLS=off)"
        if self.tools == "auto" and self.probed_tools() is False:
            return f"{self.llm.model} did not call a tool when probed"
        return None

    async def _with_llm(
        self, deps: ToolDeps, history: list[dict], question: Question, ui: TurnUI, usage: TurnUsage
    ) -> Answer:
        calls = [0]
        try:
            if why := self.pipeline_reason():
                return await answer_with_pipeline(self.llm, self.retrier, deps, history, question, ui, why, usage,
                                                  self.stream, self.citations)
            outcome = await self._agent(deps, history, question, ui, calls, usage)
            if outcome is None:  # the model's tool calls could not be read, twice: search first, then write
                why = f"{self.llm.model}'s tool calls could not be read"
                outcome = await answer_with_pipeline(self.llm, self.retrier, deps, history, question, ui, why, usage,
                                                     self.stream, self.citations)
                outcome.tool_calls += calls[0]
            return outcome
        except LLMError as exc:  # said plainly, and the question still gets what search finds
            log.warning("LLM failure (%s): %s", exc.kind, exc, exc_info=exc.__cause__)
            notice = (f"**The language model could not answer**: {exc}. Below is what search found for your "
                      "question instead (retrieval-only).")  # fmt: skip
            fallback = await answer_without_llm(deps, question, ui, notice=notice)
            fallback.error, fallback.tool_calls = str(exc), calls[0] + fallback.tool_calls
            fallback.why, fallback.usage = f"the language model failed ({exc.kind})", usage
            fallback.error_kind = exc.kind
            return fallback

    async def _agent(
        self, deps: ToolDeps, history: list[dict], question: Question, ui: TurnUI, calls: list[int],
        usage: TurnUsage,
    ) -> Answer | None:
        """The model calls tools until it answers; None when two rounds running held only calls that could not be
        read (unknown tools, arguments that are not a dict)."""
        messages = [{"role": "system", "content": system_prompt(deps)}, *history,
                    {"role": "user", "content": question.text}]  # fmt: skip
        cards: list[Card] = []
        exchange: list[dict] = []
        shown = []  # what the tools showed whole (full-text passages, a paper's abstract): the check's evidence
        unreadable = 0
        for round_number in range(self.max_tool_rounds + 1):
            # On the last round no tools are offered, so the model has to answer.
            tools = self.schemas if round_number < self.max_tool_rounds else []
            started = time.perf_counter()
            usage.started(self.llm.model, messages)
            completion = await self._round(messages, tools, ui)
            usage.add(self.llm.model, messages, completion, time.perf_counter() - started)
            log.info("LLM %s: round %d, %d tool calls, %.3f s", self.llm.model, round_number,
                     len(completion.tool_calls), usage.seconds[-1])  # fmt: skip
            if not completion.tool_calls and tools:
                completion.tool_calls = calls_in_text(completion.text, set(TOOLS_BY_NAME))  # written, not called
                completion.text = "" if completion.tool_calls else completion.text
            if not completion.tool_calls:
                break
            readable = [c for c in completion.tool_calls if c.name in TOOLS_BY_NAME and read_arguments(c.arguments)
                        is not None]  # fmt: skip
            unreadable = 0 if readable else unreadable + 1
            if unreadable == 2:
                return None
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
                calls[0] += 1
                arguments = read_arguments(call.arguments)
                if arguments is None:
                    result = ToolResult(f"Error: the arguments of {call.name[:60]} are not a JSON object: "
                                        f"{call.arguments[:200]!r}. Call it again with JSON arguments.")  # fmt: skip
                else:
                    result = await run_tool(ui, deps, call.name, arguments)
                    deps = deps.after(result)
                    shown += shown_in(result)
                cards = merge_cards(cards, result.cards)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result.output[:TOOL_OUTPUT_CHARS]})
                exchange.append({"role": "tool", "tool_call_id": call.id, "content": _shortened(result.output)})
        mend = self._mender(messages, completion.text, usage) if self.citations == "mend" else None
        text, marks = await checked(ui, deps, completion.text, cards, shown, mend, self.citations != "off")
        return await written(ui, deps, text, cards, tool_calls=calls[0], exchange=exchange, mode=TurnMode.AGENT,
                             why=f"{self.llm.model} calls the tools and writes the answer", usage=usage, shown=shown,
                             marks=marks)  # fmt: skip

    def _mender(self, messages: list[dict], draft: str, usage: TurnUsage):
        """The one request more, when the check did not find some cited sentences: the turn's messages, the draft
        and what the check asks (`assistant.claim_check.mend_request`), no tools offered."""

        async def mend(request: str) -> str:
            asked = [*messages, {"role": "assistant", "content": draft}, {"role": "user", "content": request}]
            return await model_reply(self.llm, asked, self.retrier, None, usage, self.stream)

        return mend

    async def _round(self, messages: list[dict], tools: list[dict], ui: TurnUI) -> Completion:
        """One request: its text streamed (reasoning and unsafe links held back), then the whole completion."""
        completion = Completion()
        guard, thinking = StreamGuard(), ThinkingFilter()
        pending, hold = "", None  # hold: decided at the first visible character (JSON-like text may be a call)
        async for item in self.stream(self.llm, messages, tools, self.retrier):
            if isinstance(item, Completion):
                completion = item
            elif shown := guard.feed(thinking.feed(item)):
                if hold is None:
                    pending += shown
                    if not pending.strip():
                        continue
                    hold, shown = bool(tools) and pending.lstrip()[0] in "{[`", pending
                if not hold:
                    await ui.stream(shown)
        completion.text = strip_thinking(completion.text)  # a reasoning model's thoughts are not the answer
        return completion


def _shortened(output: str) -> str:
    if len(output) <= HISTORY_TOOL_CHARS:
        return output
    return output[:HISTORY_TOOL_CHARS].rsplit("\n", 1)[0] + "\n… (shortened in the conversation's history)"
