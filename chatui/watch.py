"""Saved questions in the chat (`jobs.watches`, `retrieval.library.watches`): "Watch this" under an answer (a
button our code puts there, never the model), and, when a chat opens, what the user's saved questions found that
they have not seen (the chat's badge; the pages have theirs). Import only once Chainlit's root is prepared."""

from __future__ import annotations

import asyncio

import chainlit as cl

from assistant.conversation import Conversation
from assistant.safe_markdown import safe_markdown
from assistant.turn import Answer, standalone
from jobs.watches import keep_question
from retrieval.archive import Archive
from retrieval.library.watches import MAX_QUERY, Watches
from pages.base import md_escape

WATCH_ACTION = "watch_question"
WATCHING = "/me/watching"


def watch_offer(question: str, answer: Answer | None, conversation: Conversation) -> cl.Action | None:
    """The button under an answer that searched the archive or the user's library (not one about a single paper,
    researcher or institution, nor one that failed): the question in words that stand on their own (the user's, or
    for a follow-up the search's: `standalone`), watched where the chat searched. Also under an answer that found
    nothing yet: that is when being told of a new paper helps most."""
    if answer is None or answer.error or not answer.text.strip() or conversation.paper or \
            conversation.about is not None:  # fmt: skip
        return None
    follows = sum(1 for m in conversation.history if m.get("role") == "user") > 1  # (the history holds this turn)
    words = standalone(question, answer, follows)[:MAX_QUERY]
    if not words:
        return None
    payload = {"q": words, "scope": "mine" if conversation.library else "all"}
    return cl.Action(name=WATCH_ACTION, payload=payload, label="Watch this", icon="bell",
                     tooltip="Save this question: you are told when new papers answer it")  # fmt: skip


async def watch(action: cl.Action, archive: Archive, library_ids, user: str) -> None:
    """The click: the question saved (its scope only ever "all" or "mine", whatever the payload says), said in a
    message, and the button gone (a second click saves nothing twice)."""
    payload = action.payload or {}
    scope = "mine" if payload.get("scope") == "mine" else "all"
    watches = Watches(archive.catalog.engine)
    try:
        saved = await asyncio.to_thread(keep_question, archive, watches, library_ids, user,
                                        str(payload.get("q", ""))[:2000], scope)  # fmt: skip
    except ValueError as exc:
        await cl.Message(content=safe_markdown(f"Not saved: {md_escape(str(exc))}")).send()
        return
    await action.remove()
    where = "your papers" if scope == "mine" else "the archive"
    text = (f"Watching “{md_escape(saved.query)}” in {where}: after each archive update you will see what is new "
            f"for it on [your saved questions]({WATCHING}), in your private feed and, if you ask for it, by e-mail.")
    await cl.Message(content=safe_markdown(text)).send()


def unread(archive: Archive, user: str) -> int:
    return Watches(archive.catalog.engine).unread(user)


async def show_news(count: int) -> None:
    """The chat's badge: how many changes the user's saved questions found that they have not looked at."""
    if count:
        text = f"**{count} new** for your saved questions: [see what changed]({WATCHING})."
        await cl.Message(content=safe_markdown(text), author="Saved questions").send()
