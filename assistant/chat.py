"""The conversation's one answer service: a question (`Chat.ask`) or a card's button (`Chat.act`) is answered here,
whoever answers it (the agent, the pipeline, search alone, or the one tool a button names), and each returns an
`Answer`. Services and the turn's state are apart, as pydantic-ai's `RunContext[Deps]` keeps them: the tools get
the archive and the user (`ToolDeps`, built here and nowhere else) with a copy of the conversation's state; the
conversation moves on from what the turn returns (`Conversation.after`), never from what a tool changed."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from assistant.agent import Agent, recent_history
from assistant.citations import link_citations
from assistant.conversation import Conversation
from assistant.tools import SourceBook, ToolDeps
from assistant.turn import Answer, TurnMode, TurnUI, TurnUsage, run_tool
from pages.base import md_escape
from retrieval.archive import Archive

STOPPED = "*Stopped before the answer was finished.*"
# What a card's buttons may ask for: action name -> (tool, its id argument, what the request reads like).
CARD_ACTIONS = {
    "show_references": ("get_references", "paper_id", "References of {title}"),
    "show_cited_by": ("get_cited_by", "paper_id", "Papers citing {title}"),
    "summarize_researcher": ("summarize_researcher", "researcher_id", "What does {title} work on?"),
    "summarize_institution": ("summarize_institution", "institution", "What is {title} working on?"),
}


class _Watched:
    """The turn's UI, keeping what was streamed (a stopped turn keeps it as its answer)."""

    def __init__(self, ui: TurnUI) -> None:
        self.ui, self.text = ui, ""

    async def stream(self, text: str) -> None:
        self.text += text
        await self.ui.stream(text)

    def __getattr__(self, name: str):
        return getattr(self.ui, name)


@dataclass
class Chat:
    """One user's conversation and what answers it. `conversation` is replaced (never changed) after each turn;
    the chat's handlers store it."""

    agent: Agent
    archive: Archive
    user: str | None
    conversation: Conversation
    history_messages: int = 20  # earlier messages of the conversation sent with each turn
    only_papers: tuple[str, ...] | None = None  # a chat about the user's own library: searches see these only

    def deps(self) -> ToolDeps:
        """What the tools run with: the services, and a copy of the conversation's state for this turn."""
        state = self.conversation
        return ToolDeps(self.archive, user=self.user, sources=SourceBook(dict(state.sources.entries)),
                        scope_paper_id=state.paper, only_papers=self.only_papers, focus=state.focus,
                        about=state.about)  # fmt: skip

    async def ask(self, question: str, ui: TurnUI, held: str | None = None, usage: TurnUsage | None = None) -> Answer:
        """Answer a question (see `Agent.turn` for `held` and `usage`). Stopped by the user, the question stays in
        the conversation with what was written so far."""
        deps, recent = self.deps(), recent_history(self.conversation.history, self.history_messages)
        watched, usage = _Watched(ui), usage if usage is not None else TurnUsage()
        try:
            answer = await self.agent.turn(deps, recent, question, watched, held, usage)
        except asyncio.CancelledError:  # the stop button
            usage.stopped(watched.text)
            stopped = f"{watched.text.rstrip()}\n\n{STOPPED}" if watched.text.strip() else STOPPED
            said = [{"role": "user", "content": question}, {"role": "assistant", "content": stopped}]
            self.conversation = self.conversation.after([*recent, *said], [], deps.sources)
            await ui.finish(stopped, [])
            raise
        self.conversation = self.conversation.after([*recent, *answer.messages()], answer.cards, deps.sources)
        return answer

    async def act(self, action: str, target: str, title: str, ui: TurnUI) -> Answer:
        """A card's button: the one tool it names (`CARD_ACTIONS`) on the card's catalog id, its result shown as
        the answer to the request the button stands for."""
        tool, argument, wording = CARD_ACTIONS[action]
        asked = wording.format(title=title[:300])
        deps = self.deps()
        result = await run_tool(ui, deps, tool, {argument: target[:200]})
        text, cited = link_citations(result.output, deps.sources.by_number())
        text = f"**{md_escape(asked)}**\n\n{text}"
        await ui.finish(text, result.cards)
        answer = Answer(text, result.cards, cited, 1, mode=TurnMode.ACTION, why=f"the card's button ran {tool}",
                        weak=result.failed or not result.cards, question=asked)  # fmt: skip
        history = [*self.conversation.history, *answer.messages()]
        self.conversation = self.conversation.after(history, answer.cards, deps.sources)
        return answer
