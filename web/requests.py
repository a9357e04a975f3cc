"""Papers fetched on request: POST /papers/request starts (or joins) the job, /papers/requests/<job> follows it.

The follow page reloads itself every two seconds (a meta refresh: our pages run no script) and, once the job is
done, sends the reader on to the new paper page. It is the requester's: the address the request sends them to
carries a signature of the job and the user (`?for=`), so someone who joined another's job follows it too, and
nobody else reads what others asked for by counting job numbers (admins see every job on `/admin/jobs`). What went
wrong is said in words: a job's own error names internal addresses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from jobs.arguments import JobKind
from jobs.queue import Job, JobState
from jobs.requests import request_paper, request_references
from pages.base import PageMeta, md_escape, paper_path, request_path
from web.dependencies import Deps, FromThisSite, Guarded, Viewer, refused_form
from web.http import WebDeps, not_found, page_headers, respond
from web.library import within_write_rate


@dataclass(frozen=True)
class RequestPage:
    """A `paper` job (one arXiv id) or a `references` job (the papers a paper's list names that are not here)."""

    job_id: int
    arxiv_id: str  # the paper fetched; for a references job, the paper whose references are fetched
    state: str
    steps: list[str]
    error: str | None
    signature: str = ""
    papers: int = 0  # a references job: how many papers it fetches
    not_fetched: list[str] = field(default_factory=list)  # a references job: each paper that failed, in words

    @property
    def path(self) -> str:
        return request_path(self.job_id, self.signature)

    @property
    def title(self) -> str:
        if self.papers:
            return f"Fetching {self.papers} references of {self.arxiv_id} from arXiv"
        return f"Fetching {self.arxiv_id} from arXiv"

    @classmethod
    def of(cls, job: Job, signature: str = "") -> RequestPage:
        steps = [f"{t['description']}: {t['completed']:g} of {t['total']:g}" if t.get("total") else t["description"]
                 for t in job.progress]  # fmt: skip
        if job.kind == JobKind.REFERENCES:
            failed = [f"{f.get('key', '?')}: {failure_in_words(f.get('reason')) or ''}" for f in job.failures[:50]]
            return cls(job.id, job.arguments["paper_id"], job.state, steps, failure_in_words(job.error), signature,
                       len(job.arguments["arxiv_ids"]), failed)  # fmt: skip
        return cls(job.id, job.arguments["arxiv_id"], job.state, steps, failure_in_words(job.error), signature)

    def meta(self, base_url: str) -> PageMeta:
        live = JobState(self.state).live
        return PageMeta(self.title, f"{self.arxiv_id}: {self.state}", self.path, noindex=True,
                        refresh_seconds=2 if live else None)  # fmt: skip

    def to_markdown(self) -> str:
        lines = [f"# {self.title}", "", f"State: {self.state}.", ""]
        lines += [f"- {md_escape(step)}" for step in self.steps]
        if self.not_fetched:
            lines += ["", "Not fetched:", ""] + [f"- {md_escape(line)}" for line in self.not_fetched]
        if self.error:
            lines += ["", md_escape(self.error)]
        return "\n".join(lines) + "\n"


_NO_PAPER = re.compile(r"arXiv has no paper ([\w./-]{1,40})$")


def failure_in_words(error: str | None) -> str | None:
    """What a failed request says to its reader: what happened, never the job's own message (it names addresses)."""
    if not error:
        return None
    first = error.splitlines()[0]
    if found := _NO_PAPER.search(first):
        return f"arXiv has no paper {found[1]}."
    if first.startswith("arXiv refused the id"):
        return "arXiv refused this id."
    if "could not be stored" in first:
        return "arXiv's record of this paper could not be stored."
    return "The paper could not be fetched: arXiv or the network failed. Ask again later."


router = APIRouter(route_class=Guarded)


@router.post("/papers/request", include_in_schema=False)
def ask_for_paper(request: Request, deps: Deps, viewer: Viewer, here: FromThisSite,
                  id: str = Form("", max_length=300)) -> Response:  # noqa: A002 - the form's field
    if not here:
        return refused_form()
    if deps.jobs is None:
        return not_found(request, deps, "This server fetches no papers.")
    if viewer:
        within_write_rate(deps, viewer)
    asked = request_paper(deps.archive, deps.jobs, viewer, id, enabled=deps.on_demand,
                          daily=deps.on_demand_daily)  # fmt: skip
    if asked.paper_id:
        return RedirectResponse(paper_path(deps.archive.papers([asked.paper_id])[asked.paper_id]), status_code=303)
    if asked.job is not None:
        return RedirectResponse(RequestPage.of(asked.job, _signature(deps, asked.job.id, viewer)).path,
                                status_code=303)  # fmt: skip
    meta = PageMeta(title="Not fetched", description=asked.refusal or "", path="/papers/request", noindex=True)
    html = deps.renderer.html("not_found.html", meta, message=asked.refusal)
    return HTMLResponse(html, status_code=400 if asked.arxiv_id is None else 403, headers=page_headers())


@router.post("/papers/{paper_id:path}/references/fetch", include_in_schema=False)
def ask_for_references(request: Request, deps: Deps, viewer: Viewer, here: FromThisSite, paper_id: str) -> Response:
    """Every reference of the paper that has an arXiv id and is not here, fetched by one job."""
    if not here:
        return refused_form()
    held = deps.archive.papers([paper_id]).get(paper_id) if len(paper_id) <= 200 else None
    if deps.jobs is None or held is None:
        return not_found(request, deps, "No such paper here, or this server fetches no papers.")
    if viewer:
        within_write_rate(deps, viewer)
    asked = request_references(deps.archive, deps.jobs, viewer, held.id, enabled=deps.on_demand,
                               daily=deps.on_demand_daily)  # fmt: skip
    if asked.job is not None:
        return RedirectResponse(RequestPage.of(asked.job, _signature(deps, asked.job.id, viewer)).path,
                                status_code=303)  # fmt: skip
    meta = PageMeta(title="Not fetched", description=asked.refusal or "", path=request.url.path, noindex=True)
    html = deps.renderer.html("not_found.html", meta, message=asked.refusal)
    return HTMLResponse(html, status_code=403 if asked.missing else 400, headers=page_headers())


@router.get("/papers/requests/{job_id}", include_in_schema=False)
def request_progress(request: Request, deps: Deps, viewer: Viewer, job_id: int,
                   signed: str = Query("", alias="for", max_length=64)) -> Response:  # fmt: skip
    job = deps.jobs.get(job_id) if deps.jobs is not None and 0 < job_id < 2**62 else None
    fetching = job is not None and job.kind in (JobKind.PAPER, JobKind.REFERENCES)
    if not fetching or not _may_follow(deps, job, viewer, signed):
        return not_found(request, deps, "No such request of yours.")  # the same for another's and for none
    if job.kind == JobKind.REFERENCES and job.state == JobState.DONE and not job.failures:
        held = deps.archive.papers([job.arguments["paper_id"]])
        if paper := held.get(job.arguments["paper_id"]):
            return RedirectResponse(paper_path(paper) + "#references", status_code=303)
    if job.kind == JobKind.PAPER and job.state == JobState.DONE and (
        paper_id := deps.archive.resolve_paper_id(job.arguments["arxiv_id"])
    ):
        return RedirectResponse(paper_path(deps.archive.papers([paper_id])[paper_id]), status_code=303)
    page = RequestPage.of(job, signed if signed else "")
    return _private(respond(request, deps, page, "paper_request.html"))


def _signature(deps: WebDeps, job_id: int, viewer: str | None) -> str:
    return deps.sign(f"request:{job_id}:{viewer}") if deps.sign and viewer else ""


def _may_follow(deps: WebDeps, job: Job, viewer: str | None, signed: str) -> bool:
    """The user who asked, one who joined the job (the signed address the request sent them to), or an admin."""
    import hmac

    if not viewer:
        return False
    if viewer == job.asked_by or deps.is_admin(viewer):
        return True
    return bool(signed) and hmac.compare_digest(signed, _signature(deps, job.id, viewer))


def _private(response: Response) -> Response:
    response.headers["Cache-Control"] = "private, no-store"
    return response
