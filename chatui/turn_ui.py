"""How a turn shows itself in Chainlit: a step per tool call, the answer streamed into one message, cards as a
custom element (`public/elements/ScholarCard.jsx`). Import only once Chainlit's root is prepared."""

from __future__ import annotations

import json
import time

import chainlit as cl

from assistant.safe_markdown import StreamGuard, safe_markdown
from assistant.tools import TOOLS_BY_NAME, Card, ToolResult
from assistant.tools.base import CardKind
from assistant.turn import TurnMode
from pages.base import chat_path, citation_path, citations_path, thread_path

STEP_OUTPUT_CHARS = 4_000  # of a tool's result shown in its step (whole lines; the model reads it all)
MAX_CARDS = 10
CARD_ELEMENT = "ScholarCard"  # renders paper, researcher, institution and comparison cards
ACTIONS_ELEMENT = "AnswerActions"  # "Copy as markdown" and "Sources as BibTeX" under an answer


def card_element(card: Card, position: int = 0) -> cl.CustomElement:
    """A card as a custom element; its props are built here from catalog values only. `position` is its place in
    the answer (best first), kept so a reopened thread shows the cards in the same order."""
    props = {
        "position": position,
        "kind": card.kind,
        "id": card.id,
        "title": card.title,
        "path": card.path,
        "subtitle": card.subtitle,
        "number": card.number,
        "quotes": [str(q) for q in card.quotes],
    }
    if card.kind == CardKind.PAPER:
        props["chatPath"] = chat_path(paper=card.id)
        props["bibPath"] = citation_path(card.id, "bib")
    return cl.CustomElement(name=CARD_ELEMENT, props=props, display="inline")


def answer_actions(markdown: str, cards: list[Card], thread_id: str | None) -> cl.CustomElement:
    """The answer's own actions: its markdown to copy, its papers (the sources it cites, or the papers a search
    found) as one BibTeX file; and the whole conversation's, as markdown and as a reading list (its owner's)."""
    ids = list(dict.fromkeys(c.id for c in cards if c.kind == CardKind.PAPER))
    props = {"markdown": markdown, "bibPath": citations_path(ids) if ids else None,
             "threadPath": thread_path(thread_id) if thread_id else None}  # fmt: skip
    return cl.CustomElement(name=ACTIONS_ELEMENT, props=props, display="inline")


def step_output(text: str, most: int = STEP_OUTPUT_CHARS) -> str:
    """A tool's result as its step shows it: whole lines up to `most` characters, then how many lines were left
    out. A line is cut only when it alone is longer, at a space, marked with an ellipsis."""
    if len(text) <= most:
        return text
    lines = text.splitlines()
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) > most:
            if not kept:
                kept.append(line[:most].rsplit(" ", 1)[0] + " ...")
            break
        kept.append(line)
        size += len(line) + 1
    left = len(lines) - len(kept)
    more = f"{left} more line{'' if left == 1 else 's'}" if left else "the rest of this line"
    return "\n".join(kept) + f"\n\n*({more} not shown here; the model read it all)*"


def step_input(arguments: dict) -> str:
    """The model's arguments as the JSON a step shows in a code block: no backtick can close the block."""
    return json.dumps(arguments, ensure_ascii=False, default=str).replace("`", "\\u0060")


class ChainlitTurnUI:
    """Shows a turn in Chainlit (the `assistant.turn.TurnUI` protocol). Every text it hands the browser goes
    through `assistant.safe_markdown`: the answer, its stream, and each step's name, input and output."""

    def __init__(self) -> None:
        self.message: cl.Message | None = None
        self.cards: list[Card] = []
        self.guard = StreamGuard()
        self.actions: cl.CustomElement | None = None
        self.tool_times: list[tuple[str, float]] = []  # (tool, seconds) of each call, for the server's metrics
        self._started: dict[int, float] = {}

    async def tool_started(self, name: str, arguments: dict) -> cl.Step:
        step = cl.Step(name=name if name in TOOLS_BY_NAME else "unknown tool", type="tool", show_input="json")
        step.input = step_input(arguments)
        await step.send()
        self._started[id(step)] = time.perf_counter()
        return step

    async def tool_finished(self, handle: cl.Step, result: ToolResult) -> None:
        if (started := self._started.pop(id(handle), None)) is not None:
            self.tool_times.append((handle.name, time.perf_counter() - started))
        handle.output = safe_markdown(step_output(result.output))
        if result.failed:
            handle.is_error = True
        await handle.update()

    async def checking(self, sentences: int) -> None:
        """The check found `sentences` cited sentences it could not find in their sources: said as a step while the
        model mends them (the answer streamed so far stays on screen until the mended one replaces it)."""
        step = cl.Step(name="checking the citations", type="run", show_input=False)  # ours, not the model's tool
        many = sentences != 1
        step.output = (f"{sentences} cited sentence{'s were' if many else ' was'} not found in "
                       f"{'their sources' if many else 'its source'}: sent back to the model once, with the text "
                       f"{'they cite' if many else 'it cites'}, to fix or drop.")  # fmt: skip
        await step.send()

    async def stream(self, text: str) -> None:
        if self.message is None:
            self.message = cl.Message(content="")
        if shown := self.guard.feed(text):
            await self.message.stream_token(shown)

    async def finish(self, answer: str, cards: list[Card]) -> None:
        # The final text replaces what was streamed (citations linked, stray links dropped). It is sent by
        # `deliver`, once the turn's context is attached: one write of the step, so no second write can race it.
        self.message = self.message or cl.Message(content="")
        self.message.content = safe_markdown(answer)
        self.cards = cards[:MAX_CARDS]
        self.message.elements = [card_element(c, n) for n, c in enumerate(self.cards)]
        if answer.strip():
            thread_id = getattr(cl.context.session, "thread_id", None)
            self.actions = answer_actions(self.message.content, cards, thread_id)
            self.message.elements.append(self.actions)

    def label(self, mode: TurnMode, why: str) -> None:
        """Which mode answered (`TurnMode`) and why, shown small under the answer."""
        if self.actions is not None:
            self.actions.props |= {"mode": mode, "why": why}

    def offer(self, action: cl.Action | None) -> None:
        """A button of ours under the answer (none: nothing is added)."""
        if action is not None and self.message is not None:
            self.message.actions = [*self.message.actions, action]

    async def deliver(self, metadata: dict) -> None:
        """Send the answer (ending its stream) with what a resumed thread needs, in the step the data layer
        persists."""
        if self.message is not None:
            self.message.metadata = metadata
            # The cards one after another, in the answer's order (best first): Chainlit sends a message's elements
            # all at once, and each reached the page when its own file was written, in no set order.
            elements, self.message.elements = self.message.elements, []
            await self.message.send()
            for element in elements:
                await element.send(for_id=self.message.id)
            self.message.elements = elements
