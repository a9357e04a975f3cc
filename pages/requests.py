"""Papers fetched on request: POST /papers/request starts (or joins) the job, /papers/requests/<job> follows it.

The follow page reloads itself every two seconds (a meta refresh: our pages run no script) and, once the job is
done, sends the reader on to the new paper page.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from pages.addresses import paper_path
from pages.base import PageMeta, md_escape
from pages.http import PagesDeps, not_found, page_headers, respond, same_origin
from retrieval.jobs import Job, JobState
from retrieval.requests import KIND, request_paper


@dataclass(frozen=True)
class RequestPage:
    job_id: int
    arxiv_id: str
    state: str
    steps: list[str]
    error: str | None

    @property
    def path(self) -> str:
        return f"/papers/requests/{self.job_id}"

    @property
    def title(self) -> str:
        return f"Fetching {self.arxiv_id} from arXiv"

    @classmethod
    def of(cls, job: Job) -> RequestPage:
        steps = [f"{t['description']}: {t['completed']:g} of {t['total']:g}" if t.get("total") else t["description"]
                 for t in job.progress]  # fmt: skip
        return cls(job.id, job.arguments["arxiv_id"], job.state, steps, job.error)

    def meta(self, base_url: str) -> PageMeta:
        live = JobState(self.state).live
        return PageMeta(self.title, f"{self.arxiv_id}: {self.state}", self.path, noindex=True,
                        refresh_seconds=2 if live else None)  # fmt: skip

    def to_markdown(self) -> str:
        lines = [f"# {self.title}", "", f"State: {self.state}.", ""]
        lines += [f"- {md_escape(step)}" for step in self.steps]
        if self.error:
            lines += ["", md_escape(self.error)]
        return "\n".join(lines) + "\n"


def request_routes(router: APIRouter, deps: PagesDeps) -> None:
    @router.post("/papers/request", include_in_schema=False)
    def ask(request: Request, id: str = Form("", max_length=300)) -> Response:  # noqa: A002 - the form's field
        if not same_origin(request):
            return PlainTextResponse("Refused: the form did not come from this site.", status_code=403)
        if deps.jobs is None:
            return not_found(request, deps, "This server fetches no papers.")
        asked = request_paper(deps.library, deps.jobs, deps.viewer(request), id, enabled=deps.on_demand,
                              daily=deps.on_demand_daily)  # fmt: skip
        if asked.paper_id:
            return RedirectResponse(paper_path(deps.library.papers([asked.paper_id])[asked.paper_id]), status_code=303)
        if asked.job is not None:
            return RedirectResponse(f"/papers/requests/{asked.job.id}", status_code=303)
        meta = PageMeta(title="Not fetched", description=asked.refusal or "", path="/papers/request", noindex=True)
        html = deps.renderer.html("not_found.html", meta, message=asked.refusal)
        return HTMLResponse(html, status_code=400 if asked.arxiv_id is None else 403, headers=page_headers())

    @router.get("/papers/requests/{job_id}", include_in_schema=False)
    def follow(request: Request, job_id: int) -> Response:
        job = deps.jobs.get(job_id) if deps.jobs is not None and 0 < job_id < 2**62 else None
        if job is None or job.kind != KIND:
            return not_found(request, deps, "No such request.")
        if job.state == JobState.DONE and (paper_id := deps.library.resolve_paper_id(job.arguments["arxiv_id"])):
            return RedirectResponse(paper_path(deps.library.papers([paper_id])[paper_id]), status_code=303)
        return respond(request, deps, RequestPage.of(job), "paper_request.html")
