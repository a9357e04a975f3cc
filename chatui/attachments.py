"""PDFs attached to a chat message: each joins the user's library as an upload (the same checks and job as
`POST /api/library`), the chat follows its indexing in one message and is then about it. Import only once
Chainlit's root is prepared."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from pathlib import Path

import chainlit as cl

from assistant.safe_markdown import safe_markdown
from retrieval.library.uploads import Upload, UploadLimits, UploadRefused, Uploads, UploadState
from pages.base import md_escape

FOLLOW_SECONDS = 300  # after this the chat stops watching; the upload goes on being indexed


def configure_chat_uploads(max_mb: int, enabled: bool) -> None:
    """Chainlit's attach button: PDFs only, one at a time, at most the uploads' cap (0 MB quota: no button)."""
    from chainlit.config import config

    feature = config.features.spontaneous_file_upload
    feature.enabled, feature.max_size_mb, feature.max_files = enabled, max_mb, 1
    feature.accept = ["application/pdf"]


def _store(uploads: Uploads, user: str, element, limits: UploadLimits, queue) -> Upload:
    """A copy of Chainlit's file (it keeps its own under the session, and removes it with the session) spooled into
    the uploads folder, then accepted."""
    spooled = uploads.folder / f".incoming-{uuid.uuid4().hex}.pdf"
    shutil.copyfile(Path(element.path), spooled)
    return uploads.accept(user, element.name or "upload.pdf", spooled, limits, queue)


async def take_attachments(elements, uploads: Uploads, user: str, limits: UploadLimits, queue) -> list[Upload]:
    """Every PDF attached to a message, added and indexed (followed in one message each); what is refused is said.
    Returns the uploads that are ready."""
    ready = []
    for element in elements or []:
        if not getattr(element, "path", None):
            continue
        name = md_escape(element.name or "the file")
        try:
            upload = await asyncio.to_thread(_store, uploads, user, element, limits, queue)
        except UploadRefused as refused:
            await cl.Message(content=safe_markdown(f"{name} was not added: {md_escape(str(refused))}")).send()
            continue
        if (done := await _follow(uploads, user, upload)) is not None:
            ready.append(done)
    return ready


async def _follow(uploads: Uploads, user: str, upload: Upload) -> Upload | None:
    message = cl.Message(content=safe_markdown(f"Reading {md_escape(upload.filename)}…"))
    await message.send()
    for _ in range(FOLLOW_SECONDS * 2):
        current = await asyncio.to_thread(uploads.get, user, upload.id)
        if current is None or current.state != UploadState.QUEUED:
            break
        await asyncio.sleep(0.5)
    else:
        message.content = safe_markdown(f"{md_escape(upload.filename)} is still being read; it will be in "
                                        f"[your library]({upload.path}) shortly.")  # fmt: skip
        await message.update()
        return None
    if current is None or current.state != "indexed":
        why = md_escape(current.error or current.state) if current else "it was deleted"
        message.content = safe_markdown(f"{md_escape(upload.filename)} could not be read: {why}")
        await message.update()
        return None
    message.content = safe_markdown(
        f"Added **[{md_escape(current.title or current.filename)}]({current.path})** to your library ({current.pages} "
        f"pages, {current.passages} passages). This chat is now about it; only you can search it."
    )
    await message.update()
    return current
