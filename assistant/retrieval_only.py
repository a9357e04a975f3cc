"""Retrieval-only mode: with no LLM configured, a small planner picks the tool and composes the answer."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from assistant.tools import ToolDeps
from pages.base import md_escape
from retrieval.search import clean_query

if TYPE_CHECKING:  # pragma: no cover
    from assistant.agent import TurnOutcome, TurnUI

NOTICE = (
    "_Retrieval-only mode: no language model is configured, so these are the papers and sentences that best "
    "match your question rather than a written answer. To get written, cited answers, set `SCHOLARLOOM_LLM` "
    "(e.g. `openai/gpt-4o-mini` with `OPENAI_API_KEY`, or `ollama_chat/qwen2.5` with `SCHOLARLOOM_LLM_API_BASE`) "
    "and restart._"
)
_ARXIV_ID = re.compile(r"\b(\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7})\b")


async def answer_without_llm(deps: ToolDeps, question: str, ui: "TurnUI") -> "TurnOutcome":
    from assistant.agent import TurnOutcome, run_tool

    query = clean_query(question)
    mentioned = _ARXIV_ID.search(query)
    if mentioned:
        result = await run_tool(ui, deps, "get_paper", {"paper_id": mentioned.group(1)})
        if not result.failed:
            answer = f"{NOTICE}\n\n{result.output}"
            await ui.finish(answer, result.cards)
            return TurnOutcome(answer, result.cards, [c.number for c in result.cards if c.number], 1)
    result = await run_tool(ui, deps, "search_papers", {"query": query or question, "limit": 5})
    if result.failed or not result.cards:
        answer = f"{NOTICE}\n\n{result.output}"
        await ui.finish(answer, [])
        return TurnOutcome(answer, [], [], 1, result.output if result.failed else None)
    lines = [NOTICE, "", f"Papers that best match **{md_escape(query)}**:", ""]
    for card in result.cards:
        lines.append(f"{card.number}. [{md_escape(card.title)}]({card.path}): {md_escape(card.subtitle)}")
        lines += [f"   > {md_escape(sentence)}" for sentence in card.quotes]
    answer = "\n".join(lines)
    await ui.finish(answer, result.cards)
    return TurnOutcome(answer, result.cards, [c.number for c in result.cards], 1)
