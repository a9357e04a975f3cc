"""Asking for a paper that is not here: the rules shared by the web pages and the chat.

A request names an arXiv id (any form a person pastes); the paper is fetched by a `paper` job that the server's
worker runs. Requests for the same paper share one job; each user may start `daily` requests a day (and has at most
the queue's share of jobs waiting at once); an admin switch turns the feature off.
"""

from __future__ import annotations

from dataclasses import dataclass

from retrieval.jobs import Job, JobQueue, JobRefused
from retrieval.library import Library
from retrieval.records import arxiv_id_of

KIND = "paper"


@dataclass(frozen=True)
class PaperRequest:
    arxiv_id: str | None = None
    paper_id: str | None = None  # already here: no job needed
    job: Job | None = None  # the job fetching it (new or shared)
    refusal: str | None = None  # why nothing happens

    @property
    def key(self) -> str:
        return f"{KIND}:{self.arxiv_id}"


def request_paper(
    library: Library, queue: JobQueue, user: str | None, raw: str, *, enabled: bool, daily: int
) -> PaperRequest:
    arxiv_id = arxiv_id_of(raw)
    if arxiv_id is None:
        return PaperRequest(refusal="That is not an arXiv id, an arXiv URL or an arXiv DOI.")
    if paper_id := library.resolve_paper_id(arxiv_id):
        return PaperRequest(arxiv_id, paper_id=paper_id)
    if not enabled:
        return PaperRequest(arxiv_id, refusal="Fetching papers on request is switched off on this server.")
    if not user:
        return PaperRequest(arxiv_id, refusal="Sign in to fetch papers from arXiv.")
    asked = PaperRequest(arxiv_id)
    try:  # someone else's request of the same paper is shared; a new one counts against the user's share
        job, _ = queue.submit(KIND, {"arxiv_id": arxiv_id}, user, key=asked.key, for_user=True, daily=daily)
    except JobRefused as refused:
        return PaperRequest(arxiv_id, refusal=str(refused))
    return PaperRequest(arxiv_id, job=job)


def missing_papers(library: Library, named: list[str]) -> list[str]:
    """The arXiv ids a message named (`arxiv_ids_in`) that this archive does not hold (what the chat offers)."""
    return [arxiv_id for arxiv_id in named if library.resolve_paper_id(arxiv_id) is None]
