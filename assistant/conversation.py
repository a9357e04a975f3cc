"""A conversation: its typed state and the one service that answers in it.

`Conversation` is one chat's state: the history the agent sees, the numbered sources, what the last answer was
about and the paper the chat is scoped to. The chat handler keeps it under one session key and serialises it at the
edge (`to_dict`/`from_dict`); a reopened thread rebuilds it from its stored steps (`Conversation.resumed`).

`Chat` answers in it: a question (`Chat.ask`) or a card's button (`Chat.act`), whoever answers (the agent, the
pipeline, search alone, or the one tool a button names), each returning an `Answer`. Services and the turn's state
are apart, as pydantic-ai's `RunContext[Deps]` keeps them: the tools get the archive and the user (`ToolDeps`,
built here and nowhere else) with a copy of the conversation's state; the conversation moves on from what the turn
returns (`Conversation.after`), never from what a tool changed."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from assistant.agent import Agent, recent_history
from assistant.composer import acted
from assistant.tools.base import CardKind, Evidence, Quote, stored_evidence
from assistant.tools import Card, SourceBook, ToolDeps, ToolResult
from assistant.turn import Answer, TurnUI, TurnUsage, run_tool
from retrieval.archive import Archive

MAX_FOCUS_CARDS, MAX_EVIDENCE = 10, 120


def _cards(items: object) -> tuple[Card, ...]:
    cards = []
    for item in items if isinstance(items, list) else []:
        try:
            quotes = tuple(Quote.of(q) for q in item.get("quotes") or ())
            cards.append(Card(**{**item, "kind": CardKind(item.get("kind")), "quotes": quotes}))
        except (TypeError, AttributeError, ValueError):  # stored by another version, or not a card at all
            continue
    return tuple(cards)


def _sources(entries: object) -> SourceBook:
    book = SourceBook()
    for paper_id, entry in (entries if isinstance(entries, dict) else {}).items():
        if isinstance(entry, (list, tuple)) and len(entry) == 3:
            book.entries[str(paper_id)] = (int(entry[0]), str(entry[1]), str(entry[2]))
    return book


NOTICE = "notice"  # in a message's metadata: the server's own word to the reader, not an answer (`chatui.busy`)


def _metadata(step: dict) -> dict:
    meta = step.get("metadata") or {}
    if isinstance(meta, str):
        try:
            meta = json.loads(meta or "{}")
        except ValueError:
            meta = {}
    return meta if isinstance(meta, dict) else {}


def resumed_history(steps: list[dict]) -> tuple[list[dict], dict]:
    """The conversation a thread's steps hold, for the agent, and the last answer's metadata. A question is
    taken from its answer's metadata when there (so one whose own step was never stored is not lost), else from
    its message step (threads stored before answers named their question); a question left without an answer
    stays in."""
    history: list[dict] = []
    last: dict = {}
    waiting: str | None = None  # the latest question not yet answered
    for step in steps:
        if step.get("type") == "user_message":
            if waiting is not None:
                history.append({"role": "user", "content": waiting})
            waiting = step.get("output") or ""
        elif step.get("type") == "assistant_message":
            meta = _metadata(step)
            if meta.get(NOTICE):
                continue  # the server's own word (busy: queued, refused), no answer: the question still waits
            asked = meta.get("asked") if isinstance(meta.get("asked"), str) else None
            if waiting is not None and waiting.strip() != (asked or "").strip():
                history.append({"role": "user", "content": waiting})
            waiting = None
            if asked is None and not history:
                continue  # a greeting before the first question
            if asked is not None:
                history.append({"role": "user", "content": asked})
            turn = meta.get("turn") if isinstance(meta.get("turn"), list) else []
            history += [*turn, {"role": "assistant", "content": step.get("output") or ""}]
            last = meta or last
    if waiting is not None:
        history.append({"role": "user", "content": waiting})
    return history, last


@dataclass(frozen=True)
class Conversation:
    """Never changed in place: each move (a turn, a scope) returns the next conversation, which the handler stores."""

    history: list[dict] = field(default_factory=list)
    sources: SourceBook = field(default_factory=SourceBook)
    focus: tuple[Card, ...] = ()  # the last answer's cards: what "she" or "it" in a follow-up refers to
    paper: str | None = None  # the catalog id of the paper this chat is about
    paper_checked: bool = False  # whether the chat's paper (or other subject) was worked out (once per session)
    about: Card | None = None  # the researcher or institution this chat was opened about
    library: bool = False  # the chat searches the user's own library only (/chat?library=mine)
    focus_weak: bool = False  # the last answer found nothing that answers well: its cards were the closest matches
    evidence: tuple[Evidence, ...] = ()  # what the answers showed for each [n] they cited, the latest MAX_EVIDENCE
    latest: tuple[Evidence, ...] = ()  # what the last answer showed: its step keeps it (`answer_metadata`)

    def to_dict(self) -> dict[str, Any]:
        return {
            "history": self.history,
            "sources": {pid: list(entry) for pid, entry in self.sources.entries.items()},
            "focus": [asdict(c) for c in self.focus],
            "focus_weak": self.focus_weak,
            "paper": self.paper,
            "paper_checked": self.paper_checked,
            "about": asdict(self.about) if self.about else None,
            "library": self.library,
            "evidence": [item.kept() for item in self.evidence],
        }

    @classmethod
    def from_dict(cls, data: object) -> Conversation:
        """Whatever a session or a thread stored; anything unreadable is left out rather than trusted."""
        data = data if isinstance(data, dict) else {}
        history = data.get("history")
        paper = data.get("paper")
        return cls(
            history=[m for m in history if isinstance(m, dict)] if isinstance(history, list) else [],
            sources=_sources(data.get("sources")),
            focus=_cards(data.get("focus")),
            focus_weak=data.get("focus_weak") is True,
            paper=paper if isinstance(paper, str) else None,
            paper_checked=bool(data.get("paper_checked")),
            about=next(iter(_cards([data.get("about")])), None),
            library=data.get("library") is True,
            evidence=stored_evidence(data.get("evidence")),
        )

    @classmethod
    def resumed(cls, steps: list[dict]) -> Conversation:
        """A reopened thread: the questions, answers and tool results it rested on, the same source numbers, the
        last cards and the same paper scope, from the metadata each answer's step carries."""
        history, last = resumed_history(steps)
        kept = {item.id: item for step in steps if step.get("type") == "assistant_message"
                for item in stored_evidence(_metadata(step).get("evidence"))}  # each answer's step keeps its own
        return cls(
            history=history,
            sources=_sources(last.get("sources")),
            focus=_cards(last.get("focus")),
            focus_weak=last.get("focus_weak") is True,
            paper=last.get("paper") if isinstance(last.get("paper"), str) else None,
            paper_checked=True,
            about=next(iter(_cards([last.get("about")])), None),
            library=last.get("library") is True,
            evidence=tuple(kept.values())[-MAX_EVIDENCE:],
        )

    def opened(self, **scope: Any) -> Conversation:
        """The conversation scoped as the chat's address asked (once per session): `scope` is what it names, a
        `paper`, the user's own `library`, or whom or what it is `about` (then what "she" or "it" in the first
        question means); nothing, for a chat about nothing in particular."""
        if "about" in scope:
            scope["focus"] = (scope["about"],) if scope["about"] else ()
        return replace(self, **scope, paper_checked=True)

    def about_paper(self, paper_id: str) -> Conversation:
        """The conversation scoped to one paper (a PDF just attached, a paper just fetched from arXiv)."""
        return replace(self, paper=paper_id, paper_checked=True)

    def after(self, history: list[dict], cards: list[Card], sources: SourceBook, weak: bool = False,
              evidence: tuple[Evidence, ...] = ()) -> Conversation:  # fmt: skip
        """The conversation after a turn, this one unchanged: `history` (what the next turn sees: the recent
        messages and the turn's own), the turn's source numbers and evidence, and its cards as what it is now about
        (`weak`: they were only the closest matches, so "compare them" asks which papers)."""
        fresh = {item.id for item in evidence}
        gathered = (*(e for e in self.evidence if e.id not in fresh), *evidence)[-MAX_EVIDENCE:]
        if not cards:
            return replace(self, history=history, sources=sources, evidence=gathered, latest=evidence)
        return replace(self, history=history, sources=sources, focus=tuple(cards[:MAX_FOCUS_CARDS]), focus_weak=weak,
                       evidence=gathered, latest=evidence)  # fmt: skip

    def answer_metadata(self, asked: str | None = None, usage: dict | None = None) -> dict[str, Any]:
        """What the answer's step keeps for a resumed thread: this turn's tool calls and shortened results, the
        sources, the scope and the cards, and what was asked (a card's button has no message of its own, and
        Chainlit stores a user's message in a background task that can land after the answer, or never); and
        what the turn cost the model (`TurnUsage.to_dict`), kept with the turn."""
        start = max((i for i, m in enumerate(self.history) if m.get("role") == "user"), default=len(self.history))
        stored = self.to_dict()
        return {
            "turn": self.history[start + 1 : -1],
            "sources": stored["sources"],
            "paper": self.paper,
            "about": stored["about"],
            "library": self.library,
            "focus": stored["focus"],
            "focus_weak": self.focus_weak,
            "evidence": [item.kept() for item in self.latest],
            **({"asked": asked} if asked else {}),
            **({"usage": usage} if usage else {}),
        }


STOPPED = "*Stopped before the answer was finished.*"
# What a card's buttons may ask for: action name -> (tool, its id argument, what the request reads like).
CARD_ACTIONS = {
    "show_references": ("get_references", "paper_id", "References of {title}"),
    "show_cited_by": ("get_cited_by", "paper_id", "Papers citing {title}"),
    "summarize_researcher": ("summarize_researcher", "researcher_id", "What does {title} work on?"),
    "summarize_institution": ("summarize_institution", "institution", "What is {title} working on?"),
}


class _Watched:
    """The turn's UI, keeping what was streamed and the sources its tools numbered (a stopped turn keeps both)."""

    def __init__(self, ui: TurnUI, sources: SourceBook) -> None:
        self.ui, self.text, self.sources = ui, "", sources

    async def stream(self, text: str) -> None:
        self.text += text
        await self.ui.stream(text)

    async def tool_finished(self, handle: object, result: ToolResult) -> None:
        self.sources = result.sources if result.sources is not None else self.sources
        await self.ui.tool_finished(handle, result)

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
        """What the tools run with: the services, and the conversation as it stands (read, never changed)."""
        state = self.conversation
        return ToolDeps(self.archive, user=self.user, sources=state.sources,
                        scope_paper_id=state.paper, only_papers=self.only_papers, focus=state.focus,
                        focus_weak=state.focus_weak, about=state.about, evidence=state.evidence)  # fmt: skip

    async def ask(self, question: str, ui: TurnUI, held: str | None = None, usage: TurnUsage | None = None) -> Answer:
        """Answer a question (see `Agent.turn` for `held` and `usage`). Stopped by the user, the question stays in
        the conversation with what was written so far."""
        deps, recent = self.deps(), recent_history(self.conversation.history, self.history_messages)
        watched, usage = _Watched(ui, deps.sources), usage if usage is not None else TurnUsage()
        try:
            answer = await self.agent.turn(deps, recent, question, watched, held, usage)
        except asyncio.CancelledError:  # the stop button
            usage.stopped(watched.text)
            stopped = f"{watched.text.rstrip()}\n\n{STOPPED}" if watched.text.strip() else STOPPED
            said = [{"role": "user", "content": question}, {"role": "assistant", "content": stopped}]
            self.conversation = self.conversation.after([*recent, *said], [], watched.sources)
            await ui.finish(stopped, [])
            raise
        sources = answer.sources if answer.sources is not None else deps.sources
        self.conversation = self.conversation.after([*recent, *answer.messages()], answer.cards, sources,
                                                    weak=answer.weak and bool(answer.cards),
                                                    evidence=answer.evidence)  # fmt: skip
        return answer

    async def act(self, action: str, target: str, title: str, ui: TurnUI) -> Answer:
        """A card's button: the one tool it names (`CARD_ACTIONS`) on the card's catalog id, its result shown as
        the answer to the request the button stands for."""
        tool, argument, wording = CARD_ACTIONS[action]
        asked = wording.format(title=title[:300])
        deps = self.deps()
        result = await run_tool(ui, deps, tool, {argument: target[:200]})
        answer = await acted(ui, asked, tool, result)
        history = [*self.conversation.history, *answer.messages()]
        self.conversation = self.conversation.after(history, answer.cards, result.sources, evidence=answer.evidence)
        return answer
