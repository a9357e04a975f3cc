"""A conversation to take away, for its owner only (anyone else: nothing): the thread as markdown, and the papers its
answers showed as a reading list."""

from __future__ import annotations

import re

from assistant.conversation import resumed_history


async def thread_markdown(layer, thread_id: str, user: str | None, base_url: str) -> str | None:
    """Every question and answer of the thread in order, the answers with their numbered sources; links to this
    site's pages made absolute so the file works where it is taken. None unless `user` owns the thread."""
    if not user or await layer.owner_of(thread_id) != user:
        return None
    thread = await layer.get_thread(thread_id)
    if not thread:
        return None
    steps = sorted(thread.get("steps") or [], key=lambda s: (s.get("createdAt") or "", s.get("start") or ""))
    history, _ = resumed_history(steps)
    lines = [f"# {thread.get('name') or 'Conversation'}", "", f"A conversation on {base_url}/chat", ""]
    for message in history:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str):
            lines += ["## Question", "", content.strip(), ""]
        elif message.get("role") == "assistant" and isinstance(content, str) and content.strip():
            lines += ["## Answer", "", _absolute(content.strip(), base_url), ""]
    return "\n".join(lines)


async def thread_papers(layer, thread_id: str, user: str | None) -> list[str] | None:
    """The ids of the papers the thread's answers showed on their cards (the cited ones, when the answer cited),
    in the order they first appeared. None unless `user` owns the thread."""
    if not user or await layer.owner_of(thread_id) != user:
        return None
    thread = await layer.get_thread(thread_id)
    if not thread:
        return None
    ids = []
    for element in thread.get("elements") or []:
        props = element.get("props") if isinstance(element.get("props"), dict) else {}
        if element.get("name") == "ScholarCard" and props.get("kind") == "paper" and isinstance(props.get("id"), str):
            ids.append(props["id"])
    return list(dict.fromkeys(ids))


def _absolute(markdown: str, base_url: str) -> str:
    """`](/papers/...)` -> `](<base>/papers/...)`: the links our sanitiser kept are this site's paths or off-site
    allowed ones; only the former change."""
    return re.sub(r"\]\((/(?!/))", lambda m: "](" + base_url + m.group(1), markdown)
