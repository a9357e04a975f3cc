"""Fetching a paper that is not here, from the chat: the offer (a button under the answer, put there by our code,
never by the model), and following the job in one message until the paper arrives. Import only once Chainlit's
root is prepared."""

from __future__ import annotations

import asyncio

import chainlit as cl

from assistant.safe_markdown import safe_markdown
from jobs.queue import JobQueue, JobState
from jobs.requests import PaperRequest, ReferencesRequest
from retrieval.archive import Archive
from pages.base import md_escape, paper_path

FETCH_ACTION = "fetch_from_arxiv"
FETCH_REFERENCES_ACTION = "fetch_references"
FOLLOW_SECONDS = 600  # after this the chat stops watching; the job goes on and the paper page will have it


async def offer_fetch(arxiv_ids: list[str]) -> None:
    names = ", ".join(arxiv_ids)
    text = f"{names} {'is' if len(arxiv_ids) == 1 else 'are'} not in this archive yet. I can fetch it from arXiv " \
           "(its record, references and full text; about a minute), then answer from it."  # fmt: skip
    actions = [cl.Action(name=FETCH_ACTION, payload={"arxiv_id": i}, label=f"Fetch {i} from arXiv") for i in arxiv_ids]
    await cl.Message(content=safe_markdown(text), actions=actions).send()


async def offer_references(paper_id: str, title: str, missing: list[str]) -> None:
    """Under a card's references: fetch, in one job, the ones with an arXiv id that are not here."""
    many = len(missing) != 1
    text = (f"{len(missing)} of the references of {md_escape(title)} {'have' if many else 'has'} an arXiv id and "
            f"{'are' if many else 'is'} not in this archive yet. I can fetch {'them' if many else 'it'} from arXiv in "
            "one job (within your daily share of papers).")  # fmt: skip
    action = cl.Action(name=FETCH_REFERENCES_ACTION, payload={"paper_id": paper_id},
                       label=f"Fetch the {len(missing)} reference{'s' if many else ''} not held")  # fmt: skip
    await cl.Message(content=safe_markdown(text), actions=[action]).send()


async def follow_references(asked: ReferencesRequest, queue: JobQueue, archive: Archive) -> None:
    """Show the references job's progress in one message, then what it fetched, each linked to its page."""
    if asked.refusal:
        await cl.Message(content=safe_markdown(md_escape(asked.refusal))).send()
        return
    count = len(asked.fetching)
    message, job = await _watch(queue, asked.job.id, f"Fetching {count} references from arXiv")
    if job is None:
        message.content = safe_markdown(f"The {count} references are still being fetched; the paper's page will "
                                        "link each one as it arrives.")  # fmt: skip
        await message.update()
        return
    ids = await asyncio.to_thread(lambda: [archive.resolve_paper_id(i) for i in asked.fetching])
    held = await asyncio.to_thread(archive.papers, [i for i in ids if i])
    lines = [f"Fetched {len(held)} of {count} references:"]
    lines += [f"- [{md_escape(paper.title)}]({paper_path(paper)})" for paper in held.values()]
    reasons = {f.get("key"): f.get("reason", "") for f in job.failures}
    for missed in [a for a, i in zip(asked.fetching, ids, strict=True) if i is None]:
        why = reasons.get(missed) or "arXiv or the network failed before it; ask again later"  # (never the job's
        # own error: it names the addresses the server fetches from)
        lines.append(f"- Not fetched: {missed} ({md_escape(why[:200])})")
    message.content = safe_markdown("\n".join(lines))
    await message.update()


async def _watch(queue: JobQueue, job_id: int, doing: str) -> tuple[cl.Message, object | None]:
    """One message saying `doing` and the job's progress, once a second, until the job ends: (the message, the
    ended job), or None for the job after `FOLLOW_SECONDS` (it goes on; the chat stops watching)."""
    message = cl.Message(content=f"{doing}…")
    await message.send()
    for _ in range(FOLLOW_SECONDS):
        job = await asyncio.to_thread(queue.get, job_id)
        if not JobState(job.state).live:
            return message, job
        message.content = safe_markdown(f"{doing}: {md_escape(_progress(job))}")
        await message.update()
        await asyncio.sleep(1)
    return message, None


def _progress(job) -> str:
    steps = [f"{t['description']}: {t['completed']:g} of {t['total']:g}" if t.get("total") else t["description"]
             for t in job.progress]  # fmt: skip
    return "; ".join(steps) or "waiting for the server's job worker"


async def follow_request(asked: PaperRequest, queue: JobQueue, archive: Archive) -> str | None:
    """Show the request's progress in one message; returns the paper id once it is here, None otherwise."""
    if asked.refusal:
        await cl.Message(content=safe_markdown(md_escape(asked.refusal))).send()
        return None
    if asked.paper_id:
        return asked.paper_id
    message, job = await _watch(queue, asked.job.id, f"Fetching {asked.arxiv_id} from arXiv")
    if job is None:
        message.content = f"{asked.arxiv_id} is still being fetched; its page will be at /papers/{asked.arxiv_id}."
        message.content = safe_markdown(message.content)
        await message.update()
        return None
    paper_id = await asyncio.to_thread(archive.resolve_paper_id, asked.arxiv_id)
    if job.state != JobState.DONE or paper_id is None:
        message.content = f"{asked.arxiv_id} could not be fetched: {md_escape(job.error or job.state)}"
        message.content = safe_markdown(message.content)
        await message.update()
        return None
    paper = (await asyncio.to_thread(archive.papers, [paper_id]))[paper_id]
    message.content = (f"Fetched **[{md_escape(paper.title)}]({paper_path(paper)})**. This chat is now about it: "
                       "ask anything about it.")  # fmt: skip
    message.content = safe_markdown(message.content)
    await message.update()
    return paper_id
