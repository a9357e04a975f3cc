"""Asking for a paper that is not here: the rules shared by the web pages, the chat and a reading list's import.

A request names an arXiv id (any form a person pastes); the paper is fetched by a `paper` job that the server's
worker runs. Requests for the same paper share one job; each user may start `daily` requests a day (and has at most
the queue's share of jobs waiting at once); an admin switch turns the feature off.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jobs.queue import Job, JobQueue, JobRefused
from retrieval.archive import Archive
from retrieval.library.reading_lists import Entry
from retrieval.library.uploads import Uploads
from retrieval.scholarly.records import arxiv_id_of

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
    archive: Archive, queue: JobQueue, user: str | None, raw: str, *, enabled: bool, daily: int
) -> PaperRequest:
    arxiv_id = arxiv_id_of(raw)
    if arxiv_id is None:
        return PaperRequest(refusal="That is not an arXiv id, an arXiv URL or an arXiv DOI.")
    if paper_id := archive.resolve_paper_id(arxiv_id):
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


def missing_papers(archive: Archive, named: list[str]) -> list[str]:
    """The arXiv ids a message named (`arxiv_ids_in`) that this archive does not hold (what the chat offers)."""
    return [arxiv_id for arxiv_id in named if archive.resolve_paper_id(arxiv_id) is None]


@dataclass
class ImportReport:
    format: str
    joined: list[tuple[str, str]] = field(default_factory=list)  # (label, paper id)
    requested: list[tuple[str, str]] = field(default_factory=list)  # (label, arXiv id), with the job fetching it
    not_found: list[tuple[str, str]] = field(default_factory=list)  # (label, reason)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (label, reason)

    def counts(self) -> dict[str, int]:
        return {name: len(getattr(self, name)) for name in ("joined", "requested", "not_found", "rejected")}


def import_entries(archive: Archive, uploads: Uploads, queue: JobQueue, owner: str, name: str, entries: list[Entry], *,
                   on_demand: bool, daily: int) -> ImportReport:  # fmt: skip
    """Each entry joins the owner's library when its paper is here (by arXiv id, DOI or exact title); an arXiv paper
    that is not here is requested (the on-demand job, its quota and switch) and joins under its id; the rest are
    listed as not found or rejected, each with its reason."""
    report, joining = ImportReport(name), []
    for e in entries:
        if e.problem:
            report.rejected.append((e.label, e.problem))
        elif e.arxiv_id:
            asked = request_paper(archive, queue, owner, e.arxiv_id, enabled=on_demand, daily=daily)
            if asked.paper_id:
                report.joined.append((e.label, asked.paper_id))
                joining.append(asked.paper_id)
            elif asked.job is not None:
                report.requested.append((e.label, e.arxiv_id))
                joining.append(e.arxiv_id)  # the id the paper will have once fetched
            else:
                report.not_found.append((e.label, f"arXiv {e.arxiv_id} is not here: {asked.refusal}"))
        elif found := (archive.catalog.paper_by_doi(e.doi) if e.doi else archive.catalog.paper_by_title(e.title)):
            report.joined.append((e.label, found))
            joining.append(found)
        elif e.doi:
            report.not_found.append((e.label, f"DOI {e.doi} is not in this archive, and only arXiv papers can be "
                                              "fetched on request"))  # fmt: skip
        else:
            report.not_found.append((e.label, "no arXiv id or DOI, and no paper here has this exact title"))
    uploads.join(owner, joining)
    return report
