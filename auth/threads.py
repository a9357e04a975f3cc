"""Who may see and write a chat thread: pure rules, applied by the chat-history layer and the socket's resume."""

from __future__ import annotations

import uuid


def is_uuid(value: object) -> bool:
    """Thread ids are UUIDs in their canonical form (Chainlit pastes them into SQL and file keys)."""
    try:
        return isinstance(value, str) and str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


def may_open(user: str | None, owner: str | None, thread_id: object) -> bool:
    """A thread is the user's to read, resume, rename or delete only when they own it. Another user's thread and a
    thread that does not exist get the same answer, so no one learns that an id is in use."""
    return user is not None and owner is not None and owner == user and is_uuid(thread_id)


def resume_target(user: str | None, owner: str | None, thread_id: object) -> bool:
    """Whether a socket may resume into this thread id: a thread of its own, or an id no thread has yet."""
    return is_uuid(thread_id) and (owner is None or owner == user)


def may_set_owner(current_owner: str | None, new_owner: str | None) -> bool:
    """A thread gets its owner once and never changes hands."""
    return new_owner is None or current_owner in (None, new_owner)
