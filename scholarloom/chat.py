"""Chainlit handlers: thin wrappers that sign in through auth/ and answer through assistant/."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from urllib.parse import parse_qs, quote, urlsplit

import chainlit as cl

from assistant.agent import recent_history, run_tool
from assistant.citations import link_citations
from assistant.prompts import STARTERS
from assistant.tools import Card, SourceBook, ToolResult
from pages.addresses import paper_path
from pages.base import md_escape
from scholarloom.history import LocalFiles, make_history_layer, resumed_history
from scholarloom.runtime import client_address, current

STEP_OUTPUT_CHARS = 1_500
CARD_ELEMENT = "ScholarCard"  # public/elements/ScholarCard.jsx renders paper, researcher and institution cards
# What a card's buttons may ask for: action name -> (tool, its id argument, what the request reads like).
CARD_ACTIONS = {
    "show_references": ("get_references", "paper_id", "References of {title}"),
    "show_cited_by": ("get_cited_by", "paper_id", "Papers citing {title}"),
    "summarize_researcher": ("summarize_researcher", "researcher_id", "What does {title} work on?"),
    "summarize_institution": ("summarize_institution", "institution", "What is {title} working on?"),
}


def card_element(card: Card) -> cl.CustomElement:
    """A card as a custom element; its props are built here from catalog values only."""
    props = {
        "kind": card.kind,
        "id": card.id,
        "title": card.title,
        "path": card.path,
        "subtitle": card.subtitle,
        "number": card.number,
        "quotes": list(card.quotes),
    }
    if card.kind == "paper":
        props["chatPath"] = "/chat?paper=" + quote(card.id, safe=":")
    return cl.CustomElement(name=CARD_ELEMENT, props=props, display="inline")


class ChainlitTurnUI:
    """Shows a turn in Chainlit: a step per tool call, the answer streamed into one message."""

    def __init__(self) -> None:
        self.message: cl.Message | None = None
        self.cards: list[Card] = []

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
        # The final text replaces what was streamed (citations linked, stray links dropped). It is sent by
        # `deliver`, once the turn's context is attached: one write of the step, so no second write can race it.
        self.message = self.message or cl.Message(content="")
        self.message.content = answer
        self.cards = cards[:MAX_CARDS]
        self.message.elements = [card_element(c) for c in self.cards]

    async def deliver(self, metadata: dict) -> None:
        """Send the answer (ending its stream) with what a resumed thread needs, in the step the data layer
        persists."""
        if self.message is not None:
            self.message.metadata = metadata
            await self.message.send()


MAX_CARDS = 10


@cl.data_layer
def history_layer():
    runtime = current()
    return make_history_layer(runtime.settings.catalog_url, LocalFiles(runtime.settings.chat_files_dir))


@cl.password_auth_callback
async def password_auth(username: str, password: str) -> cl.User | None:
    account = await asyncio.to_thread(current().sign_in, username, password, client_address.get())
    return cl.User(identifier=account.username, metadata={"provider": "password"}) if account else None


async def oauth_sign_in(
    provider_id: str, token: str, raw_user_data: dict, default_user: cl.User, id_token: str | None = None
) -> cl.User | None:
    """Any provider Chainlit has switched on: the provider's stable subject id picks our account, so a changed
    e-mail or login is still the same user, and the session carries our user name, not the provider's."""
    from auth.accounts import oauth_account, provider_subject

    subject = provider_subject(raw_user_data or {})
    if subject is None:
        return None
    runtime = current()
    account = await asyncio.to_thread(
        oauth_account,
        runtime.catalog.engine,
        provider_id,
        subject,
        default_user.identifier,
        allow_signup=runtime.settings.oauth_signup,
    )
    if account is None:
        return None
    return cl.User(identifier=account.username, metadata={"provider": provider_id})


def _switch_on_oauth() -> None:
    # Chainlit refuses an OAuth callback when no provider's variables are set, so it is registered only then.
    from chainlit.oauth_providers import get_configured_oauth_providers

    if get_configured_oauth_providers():
        cl.oauth_callback(oauth_sign_in)


_switch_on_oauth()


@cl.set_starters
async def starters(user: cl.User | None = None, language: str | None = None) -> list[cl.Starter]:
    return [cl.Starter(label=label, message=message) for label, message in STARTERS]


_USED_INTENTS: dict[str, None] = {}  # nonces of chat-paper cookies already used (bounded, oldest dropped)


def _paper_in_address(environ: dict) -> str | None:
    """The paper a chat was opened for: /chat?paper=<id>, as the browser's Referer of the socket shows it, or,
    after the sign-in page dropped the query, the one-time cookie `scholarloom.app.ChatPaperIntent` left."""
    query = parse_qs(urlsplit(environ.get("HTTP_REFERER", "")).query)
    if query.get("paper"):
        return query["paper"][0]
    from http.cookies import SimpleCookie
    from urllib.parse import unquote

    from scholarloom.app import CHAT_PAPER_COOKIE

    jar = SimpleCookie()
    try:
        jar.load(environ.get("HTTP_COOKIE", ""))
    except Exception:  # a malformed Cookie header: no intent
        return None
    value = jar[CHAT_PAPER_COOKIE].value if CHAT_PAPER_COOKIE in jar else ""
    nonce, _, paper = value.partition(".")
    if not nonce or not paper or nonce in _USED_INTENTS:
        return None
    _USED_INTENTS[nonce] = None
    while len(_USED_INTENTS) > 10_000:
        _USED_INTENTS.pop(next(iter(_USED_INTENTS)))
    return unquote(paper)


async def _chat_paper() -> str | None:
    """The catalog id of the paper this chat is about, if any; worked out once per session.

    Both handlers call it: a first message can arrive before on_chat_start has finished.
    """
    if cl.user_session.get("paper_checked"):
        return cl.user_session.get("paper")
    wanted = _paper_in_address(cl.context.session.environ or {})
    paper_id = await asyncio.to_thread(current().catalog.resolve_paper_id, wanted) if wanted else None
    cl.user_session.set("paper", paper_id)
    cl.user_session.set("paper_checked", True)
    return paper_id


@cl.on_chat_start
async def on_chat_start() -> None:
    paper_id = await _chat_paper()
    if paper_id:
        paper = current().catalog.papers([paper_id])[paper_id]
        title = md_escape(paper.title)
        await cl.Message(
            content=f"This chat is about **[{title}]({paper_path(paper)})**. Ask anything about it."
        ).send()


def _sources() -> SourceBook:
    """The conversation's numbered papers; numbers [n] stay the same paper for the whole conversation. Kept in
    the session as plain lists, which Chainlit saves with the thread."""
    return SourceBook({pid: tuple(entry) for pid, entry in (cl.user_session.get("sources") or {}).items()})


async def _remember(history: list[dict], sources: SourceBook, ui: ChainlitTurnUI, asked: str | None = None) -> None:
    """Keep the turn for the next one, and on the answer's step for a resumed thread, with what was asked (a
    card's button has no message of its own, and Chainlit stores a user's message in a background task that can
    land after the answer, or not before the thread is reopened)."""
    cl.user_session.set("history", history)
    cl.user_session.set("sources", {pid: list(entry) for pid, entry in sources.entries.items()})
    if ui.cards:  # what the conversation is now about, for follow-ups that say "she" or "it"
        cl.user_session.set("focus", [_card_dict(c) for c in ui.cards])
    start = max((i for i, m in enumerate(history) if m["role"] == "user"), default=len(history))
    await ui.deliver(
        {
            "turn": history[start + 1 : -1],  # the tool calls and shortened results of this turn
            "sources": cl.user_session.get("sources"),
            "paper": cl.user_session.get("paper"),
            "focus": cl.user_session.get("focus") or [],
            **({"asked": asked} if asked else {}),
        }
    )


def _card_dict(card: Card) -> dict:
    return {**asdict(card), "quotes": list(card.quotes)}


def _focus() -> tuple[Card, ...]:
    cards = []
    for item in cl.user_session.get("focus") or []:
        try:
            cards.append(Card(**{**item, "quotes": tuple(item.get("quotes") or ())}))
        except TypeError:  # a session saved by another version
            continue
    return tuple(cards)


def _deps(sources: SourceBook, paper_id: str | None):
    user = cl.user_session.get("user")
    deps = current().tool_deps(user.identifier if user else "anonymous", sources, paper_id)
    deps.focus = _focus()
    return deps


@cl.on_message
async def on_message(message: cl.Message) -> None:
    runtime = current()
    history = cl.user_session.get("history") or []
    sources = _sources()
    deps = _deps(sources, await _chat_paper())
    ui = ChainlitTurnUI()
    recent = recent_history(history, runtime.settings.agent.history_messages)
    try:
        await runtime.agent.turn(deps, recent, message.content, ui)
    finally:  # even a turn that broke leaves what it showed in the thread
        await _remember(recent, sources, ui, message.content)


async def _card_action(action: cl.Action) -> None:
    """A card's button: run the one tool it names on the card's catalog id and show what it found."""
    tool, argument, wording = CARD_ACTIONS[action.name]
    target = str((action.payload or {}).get("id", ""))[:200]
    title = str((action.payload or {}).get("title", target))[:300]
    sources = _sources()
    deps = _deps(sources, await _chat_paper())
    ui = ChainlitTurnUI()
    result = await run_tool(ui, deps, tool, {argument: target})
    asked = wording.format(title=title)
    text, _cited = link_citations(result.output, sources.by_number())
    text = f"**{md_escape(asked)}**\n\n{text}"
    await ui.finish(text, result.cards)
    history = cl.user_session.get("history") or []
    history += [{"role": "user", "content": asked}, {"role": "assistant", "content": text}]
    await _remember(history, sources, ui, asked)


for _name in CARD_ACTIONS:
    cl.action_callback(_name)(_card_action)


@cl.on_chat_resume
async def on_chat_resume(thread: dict) -> None:
    """Reopening a thread: the agent gets the conversation back (questions, answers and the tool results they
    rested on), the same source numbers and the same paper scope."""
    history, last = resumed_history(thread.get("steps") or [])
    cl.user_session.set("history", history)
    if isinstance(last.get("sources"), dict):
        cl.user_session.set("sources", last["sources"])
    if isinstance(last.get("focus"), list):
        cl.user_session.set("focus", last["focus"])
    cl.user_session.set("paper", last.get("paper") if isinstance(last.get("paper"), str) else None)
    cl.user_session.set("paper_checked", True)
