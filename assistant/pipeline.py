"""A turn for a model that cannot call tools: a fixed pipeline instead of the agent loop.

1. The model rewrites the question (read with the conversation) into one or two search queries.
2. The app runs the searches itself: abstracts for each query, the full text for the first, and the profile of a
   researcher or institution the question names (read by `assistant.reading`, looked up by
   `assistant.questions.named_profile`).
3. The model writes the answer from those results, citing the same numbers the tools gave, exactly as the agent's
   answers do (links, sources footer, cards).

Small local models are the usual reason (many cannot call tools, or call them badly); `SCHOLARLOOM_LLM_TOOLS=off`
forces it, and the probe at start picks it when the model did not call a tool when asked.
"""

from __future__ import annotations

import re
import time

from assistant.llm import Completion, LLMConfig, Streamer, ThinkingFilter, stream_completion, strip_thinking
from assistant.questions import named_profile
from assistant.reading import read_question
from assistant.safe_markdown import StreamGuard
from assistant.tools import ToolDeps
from assistant.claim_check import checked
from assistant.composer import shown_in, written
from assistant.turn import Answer, Question, TurnMode, TurnUI, TurnUsage, merge_cards, run_tool, system_prompt
from common.retry import Retrier

MAX_QUERIES = 2
_LABEL = re.compile(r"^\s*(?:(?:[-*•]|\d+[.)]|query\s*(?:\d+\s*)?:)\s*)+", re.I)  # "1. ", "- Query 2: "
RESULT_CHARS = 6_000  # what one search's results may add to the writing prompt

REWRITE = """You turn a user's latest question about research papers into search queries.
Read the conversation so far to resolve words like "it", "she" or "that paper".
Reply with one or two short search queries (keywords, names, titles), one per line, and nothing else."""

WRITE = """

You cannot call tools in this conversation: the app has already searched for the question and gives you the
results below, between <results> and </results>. Answer only from them, citing every claim by the numbers they
carry, like [1] or [2, p. 7] for a passage's page. If they do not answer the question, say so plainly."""


def plain_history(history: list[dict]) -> list[dict]:
    """The conversation as user and assistant text only: a model without tools is never sent tool messages."""
    kept = []
    for message in history:
        if message.get("role") in ("user", "assistant") and isinstance(message.get("content"), str):
            if message["content"].strip():
                kept.append({"role": message["role"], "content": message["content"]})
    return kept


def search_queries(written: str, question: str) -> list[str]:
    """The model's queries, cleaned (numbering, bullets, quotes and labels removed), at most two; `question` (as it
    is searched: `Question.searched`) when the model gave none that can be used."""
    queries = []
    for line in strip_thinking(written).splitlines():
        line = _LABEL.sub("", line).strip().strip("\"'`").strip()
        if 2 <= len(line) <= 200 and line.lower() not in (q.lower() for q in queries):
            queries.append(line)
    return queries[:MAX_QUERIES] or [question]


async def model_reply(
    config: LLMConfig, messages: list[dict], retrier: Retrier | None, ui: TurnUI | None, usage: TurnUsage,
    stream: Streamer = stream_completion,
) -> str:  # fmt: skip
    """One reply without tools (an answer, a rewritten question, a mended answer); streamed to `ui` when given (the
    reasoning and unsafe links held back), else asked for whole (no per-chunk work for what nobody watches)."""
    completion = Completion()
    guard, thinking = StreamGuard(), ThinkingFilter()
    started = time.perf_counter()
    usage.started(config.model, messages)
    async for item in stream(config, messages, [], retrier, whole=ui is None):
        if isinstance(item, Completion):
            completion = item
        elif ui is not None and (shown := guard.feed(thinking.feed(item))):
            await ui.stream(shown)
    usage.add(config.model, messages, completion, time.perf_counter() - started)
    return strip_thinking(completion.text)


async def answer_with_pipeline(
    config: LLMConfig, retrier: Retrier | None, deps: ToolDeps, history: list[dict], question: Question, ui: TurnUI,
    why: str, usage: TurnUsage | None = None, stream: Streamer = stream_completion, citations: str = "mend",
) -> Answer:  # fmt: skip
    """Search first, then write (see the module's text). LLM failures propagate (the agent falls back). `stream`
    makes the model's requests (`Agent.stream`: in the server, the model's own process)."""
    usage = usage if usage is not None else TurnUsage()
    earlier = plain_history(history)
    asked = [{"role": "system", "content": REWRITE}, *earlier[-6:], {"role": "user", "content": question.text}]
    queries = search_queries(await model_reply(config, asked, retrier, None, usage, stream), question.searched)
    found, cards, calls, shown = [], [], 0, []
    plan = [("search_papers", {"query": q, "limit": 5}) for q in queries]
    plan.append(("search_fulltext", {"query": queries[0], "limit": 4}))
    if (named := named_profile(deps, read_question(question, deps.focus, deps.focus_weak))) is not None:
        plan.insert(0, named[:2])
    for tool, arguments in plan:
        result = await run_tool(ui, deps, tool, arguments)
        deps, calls = deps.after(result), calls + 1
        if not result.failed:
            found.append(f"## {tool} {arguments}\n{result.output[:RESULT_CHARS]}")
            cards = merge_cards(cards, result.cards)
            shown += shown_in(result)
    results = "\n\n".join(found) or "(the searches found nothing)"
    messages = [{"role": "system", "content": system_prompt(deps) + WRITE}, *earlier,
                {"role": "user", "content": f"{question.text}\n\n<results>\n{results}\n</results>"}]  # fmt: skip
    text = await model_reply(config, messages, retrier, ui, usage, stream)

    async def mend(request: str) -> str:
        asked = [*messages, {"role": "assistant", "content": text}, {"role": "user", "content": request}]
        return await model_reply(config, asked, retrier, None, usage, stream)

    text, marks = await checked(ui, deps, text, cards, shown, mend if citations == "mend" else None,
                                citations != "off")  # fmt: skip
    return await written(ui, deps, text, cards, tool_calls=calls, mode=TurnMode.PIPELINE, why=why, usage=usage,
                         shown=shown, marks=marks)  # fmt: skip

