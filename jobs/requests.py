"""Asking for a paper that is not here: the rules shared by the web pages, the chat and a reading list's import.

A request names an arXiv id (any form a person pastes); the paper is fetched by a `paper` job that the server's
worker runs. Requests for the same paper share one job; each user may start `daily` requests a day (and has at most
the queue's share of jobs waiting at once); an admin switch turns the feature off.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jobs.arguments import JobKind, PaperArguments, ReferencesArguments
from jobs.queue import Job, JobQueue, JobRefused
from retrieval.archive import Archive
from retrieval.library.reading_lists import Entry
from retrieval.library.uploads import Uploads
from retrieval.scholarly.citations import not_held
from retrieval.scholarly.records import arxiv_id_of

@dataclass(frozen=True)
class PaperRequest:
    arxiv_id: str | None = None
    paper_id: str | None = None  # already here: no job needed
    job: Job | None = None  # the job fetching it (new or shared)
    refusal: str | None = None  # why nothing happens

    @property
    def key(self) -> str:
        return PaperArguments(str(self.arxiv_id)).key()


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
        job, _ = queue.submit(JobKind.PAPER, PaperArguments(arxiv_id), user, key=asked.key, for_user=True,
                              daily=daily)  # fmt: skip
    except JobRefused as refused:
        return PaperRequest(arxiv_id, refusal=str(refused))
    return PaperRequest(arxiv_id, job=job)


@dataclass(frozen=True)
class ReferencesRequest:
    """Fetching the papers a paper's reference list names that are not here, in one job."""

    paper_id: str
    missing: list[str]  # the arXiv ids not held, in the list's order
    fetching: list[str] = field(default_factory=list)  # those the job fetches (the rest wait for the user's share)
    job: Job | None = None
    refusal: str | None = None

    @property
    def key(self) -> str:
        return ReferencesArguments(self.paper_id, ()).key()


def references_not_held(archive: Archive, raw_id: str) -> tuple[str | None, list[str]]:
    """The paper an id names, and the arXiv ids its references name that are not here (what the chat offers)."""
    paper_id = archive.resolve_paper_id(raw_id)
    return paper_id, (not_held(archive.references(paper_id)) if paper_id else [])


def request_references(archive: Archive, queue: JobQueue, user: str | None, paper_id: str, *, enabled: bool,
                       daily: int) -> ReferencesRequest:  # fmt: skip
    """One job fetching every reference of `paper_id` that has an arXiv id and is not here: each paper once, as
    many as the user's daily share of papers still allows (the rest are said to wait); a job already fetching this
    paper's references is joined (it costs nothing)."""
    missing = not_held(archive.references(paper_id))
    asked = ReferencesRequest(paper_id, missing)
    if not missing:
        return ReferencesRequest(paper_id, missing, refusal="Every reference with an arXiv id is already here.")
    if not enabled:
        return ReferencesRequest(paper_id, missing,
                                 refusal="Fetching papers on request is switched off on this server.")  # fmt: skip
    if not user:
        return ReferencesRequest(paper_id, missing, refusal="Sign in to fetch papers from arXiv.")
    if (live := queue.live(asked.key)) is not None:
        return ReferencesRequest(paper_id, missing, list(live.arguments["arxiv_ids"]), live)
    left = daily - queue.daily_used(JobKind.REFERENCES, user)
    if left <= 0:
        return ReferencesRequest(paper_id, missing, refusal=f"You have asked for {daily} papers in the last day; "
                                                             "try again later.")  # fmt: skip
    coming = {i for i in missing if queue.live(PaperRequest(i).key) is not None}  # a `paper` job fetches it already
    fetching = [i for i in missing if i not in coming][:left]
    if not fetching:
        return ReferencesRequest(paper_id, missing, refusal="Every reference not held here is being fetched already.")
    try:
        job, _ = queue.submit(JobKind.REFERENCES, ReferencesArguments(paper_id, tuple(fetching)), user,
                              key=asked.key, for_user=True, daily=daily)  # fmt: skip
    except JobRefused as refused:
        return ReferencesRequest(paper_id, missing, refusal=str(refused))
    return ReferencesRequest(paper_id, missing, list(job.arguments["arxiv_ids"]), job)


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
