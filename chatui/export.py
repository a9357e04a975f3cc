"""A conversation to take away: one chat thread as markdown, for its owner only (anyone else: nothing)."""

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


def _absolute(markdown: str, base_url: str) -> str:
    """`](/papers/...)` -> `](<base>/papers/...)`: the links our sanitiser kept are this site's paths or off-site
    allowed ones; only the former change."""
    return re.sub(r"\]\((/(?!/))", lambda m: "](" + base_url + m.group(1), markdown)
