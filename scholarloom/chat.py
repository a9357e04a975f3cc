"""Chainlit handlers: thin wrappers that sign in through auth/ and answer through assistant/, showing the turn with
chatui/. The conversation is one `Conversation` under one session key, loaded and stored here only."""

from __future__ import annotations

import asyncio
import functools
from contextlib import AsyncExitStack

import chainlit as cl
import chainlit.server

from assistant.conversation import CARD_ACTIONS, Chat, Conversation
from assistant.opening import introduction, subject_card
from assistant.turn import STARTERS
from assistant.safe_markdown import safe_markdown
from assistant.turn import TurnUsage
from auth.accounts import oauth_account, provider_subject, session_is_live
from auth.nonces import spend
from auth.sessions import SESSION_VERSION, client_address
from chatui.attachments import take_attachments
from chatui.busy import take_turn
from chatui.fetch import (
    FETCH_ACTION,
    FETCH_REFERENCES_ACTION,
    follow_references,
    follow_request,
    offer_fetch,
    offer_references,
)
from chatui.files import LocalFiles
from chatui.intent import chat_intent
from chatui.layer import HistoryLayer
from chatui.sessions import still_signed_in
from chatui.turn_ui import ChainlitTurnUI
from chatui.watch import WATCH_ACTION, show_news, unread, watch, watch_offer
from common.logs import REQUEST_ID, new_request_id
from jobs.requests import missing_papers, references_not_held, request_paper, request_references
from retrieval.scholarly.records import arxiv_ids_in
from scholarloom.runtime import Runtime

SESSION_KEY = "conversation"  # the one key this chat keeps in Chainlit's user session (chatui.layer.SESSION_ONLY)


def runtime() -> Runtime:
    return chainlit.server.app.state.runtime  # put there by scholarloom.app.create_app


def _live(name: str, version: int) -> bool:
    return session_is_live(runtime().engine, name, version)


@cl.data_layer
def history_layer() -> HistoryLayer:
    return HistoryLayer(runtime().settings.catalog_url, LocalFiles(runtime().settings.chat_files_dir))


@cl.password_auth_callback
async def password_auth(username: str, password: str) -> cl.User | None:
    account = await asyncio.to_thread(runtime().sign_in, username, password, client_address.get())
    return _user(account, "password") if account else None  # (in its turn: `chatui.busy.SignInTurns`)


async def oauth_sign_in(
    provider_id: str, token: str, raw_user_data: dict, default_user: cl.User, id_token: str | None = None
) -> cl.User | None:
    """Any provider Chainlit has switched on: the provider's stable subject id picks our account, so a changed
    e-mail or login is still the same user, and the session carries our user name, not the provider's."""
    subject = provider_subject(raw_user_data or {})
    if subject is None:
        return None
    engine, signup = runtime().engine, runtime().settings.oauth_signup
    account = await asyncio.to_thread(
        oauth_account, engine, provider_id, subject, default_user.identifier, allow_signup=signup
    )
    return _user(account, provider_id) if account else None


def _user(account, provider: str) -> cl.User:
    """The session's user: our user name, and the account's session version (checked on every request)."""
    metadata = {"provider": provider, SESSION_VERSION: account.session_version or 0}
    return cl.User(identifier=account.username, metadata=metadata)


def _switch_on_oauth() -> None:
    # Chainlit refuses an OAuth callback when no provider's variables are set, so it is registered only then.
    from chainlit.oauth_providers import get_configured_oauth_providers

    if get_configured_oauth_providers():
        cl.oauth_callback(oauth_sign_in)


_switch_on_oauth()


@cl.set_starters
async def starters(user: cl.User | None = None, language: str | None = None) -> list[cl.Starter]:
    return [cl.Starter(label=label, message=message) for label, message in STARTERS]


def _conversation() -> Conversation:
    found = cl.user_session.get(SESSION_KEY)
    return found if isinstance(found, Conversation) else _keep(Conversation.from_dict(found))


def _keep(conversation: Conversation) -> Conversation:
    """The conversation a turn or a scope left, stored under the session's one key."""
    cl.user_session.set(SESSION_KEY, conversation)
    return conversation


async def _scoped() -> Conversation:
    """The session's conversation, scoped (once per session) to what the chat's address names: a paper, the user's
    library, a researcher or an institution. Both handlers call it: a first message can arrive before on_chat_start
    has finished."""
    conversation = _conversation()
    if conversation.paper_checked:
        return conversation
    spend_once = functools.partial(spend, runtime().engine)
    kind, subject = await asyncio.to_thread(chat_intent, cl.context.session.environ or {}, spend_once) or ("", "")
    archive = runtime().archive
    if kind == "paper":
        return _keep(conversation.opened(paper=await asyncio.to_thread(archive.resolve_paper_id, subject, _username())))
    if kind == "library":
        return _keep(conversation.opened(library=subject == "mine"))
    if kind:
        return _keep(conversation.opened(about=await asyncio.to_thread(subject_card, archive, kind, subject)))
    return _keep(conversation.opened())


def _username() -> str:
    user = cl.user_session.get("user")
    return user.identifier if user else "anonymous"


async def _chat(conversation: Conversation) -> Chat:
    """The answer service for this user's conversation, wired from the runtime's agent and archive. A chat about the
    user's library reads its papers' ids off the loop; any other costs no I/O and is built here (a thread hop would
    wait behind the tools' threads under load)."""
    rt, user = runtime(), _username()
    only = tuple(await asyncio.to_thread(rt.uploads.library_ids, user)) if conversation.library else None
    return Chat(rt.agent, rt.archive, user, conversation, rt.settings.agent.history_messages, only)


@cl.on_chat_start
async def on_chat_start() -> None:
    conversation, archive, user = await _scoped(), runtime().archive, _username()
    text, news = await asyncio.to_thread(lambda: (introduction(conversation, archive, user), unread(archive, user)))
    if text:
        await cl.Message(content=safe_markdown(text)).send()
    await show_news(news)


@cl.on_message
async def on_message(message: cl.Message) -> None:
    if not await still_signed_in(_live):
        return
    conversation = await _scoped()
    if message.elements:  # attached PDFs join the user's library; the chat is then about the last one
        rt = runtime()
        ready = await take_attachments(message.elements, rt.uploads, _username(), rt.upload_limits, rt.jobs)
        if ready:
            conversation = _keep(conversation.about_paper(ready[-1].point_paper_id))
        if not message.content.strip():
            return
    async with AsyncExitStack() as turn:
        if await take_turn(runtime().chat_turns, _username(), turn):  # (else refused in words: nothing to answer)
            await _answer(message, conversation)
    if runtime().settings.on_demand == "signed-in" and (named := arxiv_ids_in(message.content)):
        missing = await asyncio.to_thread(missing_papers, runtime().archive, named)  # (the catalog, off the loop)
        if missing:
            await offer_fetch(missing)


async def _answer(message: cl.Message, conversation: Conversation) -> None:
    ui, chat = ChainlitTurnUI(), await _chat(conversation)
    user, answer, stopped = _username(), None, False
    REQUEST_ID.set(f"turn-{new_request_id()}")  # this turn's log lines, its tools' and its model calls' too
    held = await asyncio.to_thread(runtime().budget_notice, user) if runtime().settings.llm_daily_tokens else None
    usage = TurnUsage()  # what the model cost, kept even when the user stops the turn
    try:
        answer = await chat.ask(message.content, ui, held, usage)
        ui.label(answer.mode, answer.why)
        ui.offer(watch_offer(message.content, answer, chat.conversation))
    except asyncio.CancelledError:  # the stop button
        stopped = True
        raise
    finally:  # even a turn that broke leaves what it showed in the thread
        runtime().after_turn(user, answer, ui.tool_times, stopped, usage)  # (queues its record: no I/O here)
        _keep(chat.conversation)
        spent = (answer.usage if answer else usage).to_dict()
        await ui.deliver(chat.conversation.answer_metadata(message.content, spent))


@cl.action_callback(FETCH_ACTION)
async def fetch_from_arxiv(action: cl.Action) -> None:
    """The user's click (never the model's wish): fetch the paper, then scope the conversation to it."""
    if not await still_signed_in(_live):
        return
    user = cl.user_session.get("user")
    rt = runtime()
    asked = await asyncio.to_thread(
        request_paper, rt.archive, rt.jobs, user.identifier if user else None,
        str((action.payload or {}).get("arxiv_id", ""))[:300], enabled=rt.settings.on_demand == "signed-in",
        daily=rt.settings.on_demand_daily,
    )  # fmt: skip
    paper_id = await follow_request(asked, rt.jobs, rt.archive)
    if paper_id:
        _keep(_conversation().about_paper(paper_id))


async def _card_action(action: cl.Action) -> None:
    """A card's button: run the one tool it names on the card's catalog id and show what it found."""
    if not await still_signed_in(_live):
        return
    payload = action.payload or {}
    target = str(payload.get("id", ""))[:200]
    async with AsyncExitStack() as turn:
        if not await take_turn(runtime().chat_turns, _username(), turn):
            return
        ui, chat = ChainlitTurnUI(), await _chat(await _scoped())
        answer = await chat.act(action.name, target, str(payload.get("title", target)), ui)
        _keep(chat.conversation)
        await ui.deliver(chat.conversation.answer_metadata(answer.question))
    if action.name == "show_references" and runtime().settings.on_demand == "signed-in":
        paper_id, missing = await asyncio.to_thread(references_not_held, runtime().archive, target)
        if missing:
            await offer_references(paper_id, str(payload.get("title", target))[:300], missing)


@cl.action_callback(FETCH_REFERENCES_ACTION)
async def fetch_references(action: cl.Action) -> None:
    """The user's click under a card's references: one job fetches those not held (`jobs.requests`)."""
    if not await still_signed_in(_live):
        return
    user, rt = cl.user_session.get("user"), runtime()
    asked = await asyncio.to_thread(
        request_references, rt.archive, rt.jobs, user.identifier if user else None,
        str((action.payload or {}).get("paper_id", ""))[:200], enabled=rt.settings.on_demand == "signed-in",
        daily=rt.settings.on_demand_daily,
    )  # fmt: skip
    await follow_references(asked, rt.jobs, rt.archive)


@cl.action_callback(WATCH_ACTION)
async def watch_question(action: cl.Action) -> None:
    """The user's click on "Watch this" under an answer: the question saved for them."""
    if not await still_signed_in(_live):
        return
    rt = runtime()
    await watch(action, rt.archive, rt.uploads.library_ids, _username())


for _name in CARD_ACTIONS:
    cl.action_callback(_name)(_card_action)


@cl.on_chat_resume
async def on_chat_resume(thread: dict) -> None:
    """Reopening a thread: the agent gets the conversation back (questions, answers and the tool results they
    rested on), the same source numbers and the same paper scope."""
    cl.user_session.set(SESSION_KEY, Conversation.resumed(thread.get("steps") or []))
