"""/admin/jobs (what the server is doing and has done) and /admin/usage (what the language model cost, per user and
day): admins only, built once and rendered as HTML or markdown."""

from __future__ import annotations

from dataclasses import dataclass

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response

from jobs.queue import Job, JobState
from pages.base import PageMeta, md_escape
from web.dependencies import Deps, FromThisSite, Guarded, MaybeAdmin, admin_user, refused_form
from web.http import not_found, respond
from web.services import ModelUseRow


@dataclass(frozen=True)
class JobRow:
    id: int
    kind: str
    state: str
    asked_by: str
    created: str
    progress: str
    counts: str
    error: str
    can_cancel: bool
    can_retry: bool


def _row(job: Job) -> JobRow:
    def step(task: dict) -> str:
        total = f"/{task['total']:g}" if task.get("total") else ""
        return f"{task['description']}: {task['completed']:g}{total}"

    state = JobState(job.state)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(job.counts.items()))
    return JobRow(job.id, job.kind, job.state, job.asked_by, job.created_at.strftime("%Y-%m-%d %H:%M UTC"),
                  "; ".join(step(t) for t in job.progress), counts, job.error or "", state.live,
                  state in (JobState.FAILED, JobState.CANCELLED))  # fmt: skip


@dataclass(frozen=True)
class JobsPage:
    rows: list[JobRow]
    worker: str  # whether a server is taking jobs, in words
    llm: str = ""  # what the language model could do when the server last asked it
    path: str = "/admin/jobs"
    title: str = "Jobs"

    @classmethod
    def of(cls, jobs: list[Job], workers: list, llm: str = "") -> JobsPage:
        """`workers`: the servers taking jobs (`jobs.queue.JobWorker`); `llm`: this server's model line, shown
        when no server has said what its model can do."""
        if not workers:
            worker = "No server is taking jobs right now."
        elif len(workers) == 1:
            worker = "A server is taking jobs."
        else:
            worker = f"{len(workers)} servers are taking jobs: {', '.join(w.name for w in workers)}."
        said = [f"{w.name}: {w.model}" if len(workers) > 1 else w.model for w in workers if w.model]
        return cls([_row(j) for j in jobs], worker, "; ".join(said) or llm)

    def meta(self, base_url: str) -> PageMeta:
        return PageMeta(title=self.title, description="Ingest jobs and their progress.", path=self.path, noindex=True)

    def to_markdown(self) -> str:
        lines = [f"# {self.title}", "", self.worker, ""]
        if self.llm:
            lines += [f"Language model: {md_escape(self.llm)}", ""]
        if not self.rows:
            lines.append("No jobs yet.")
        for r in self.rows:
            lines.append(f"- **{r.id}** {r.kind}, {r.state}, asked by {md_escape(r.asked_by)} at {r.created}")
            for label, value in (("progress", r.progress), ("counts", r.counts), ("error", r.error)):
                if value:
                    lines.append(f"  - {label}: {md_escape(value)}")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class UsagePage:
    rows: list[ModelUseRow]
    budget: str
    path: str = "/admin/usage"
    title: str = "Language-model use"

    def meta(self, base_url: str) -> PageMeta:
        return PageMeta(title=self.title, description="Tokens and cost per user and day.", path=self.path, noindex=True)

    @staticmethod
    def cost(row: ModelUseRow) -> str:
        return "unknown" if row.cost_usd is None else f"${row.cost_usd:.4f}"

    def to_markdown(self) -> str:
        lines = [f"# {self.title}", "", self.budget, ""]
        if not self.rows:
            lines.append("No chat turn has used the language model yet.")
        else:
            lines += ["| day | user | turns | prompt tokens | answer tokens | cost |", "|" + " --- |" * 6]
        for r in self.rows:
            estimated = f" ({r.estimated_turns} estimated)" if r.estimated_turns else ""
            lines.append(f"| {r.day} | {md_escape(r.username)} | {r.turns}{estimated} | {r.prompt_tokens:,} | "
                         f"{r.completion_tokens:,} | {self.cost(r)} |")  # fmt: skip
        return "\n".join(lines) + "\n"


# Admins see every job and may cancel or retry one; anyone else gets the 404 page (nothing to learn here).
router = APIRouter(route_class=Guarded)
JobsAdmin = Annotated[str, Depends(admin_user(lambda deps: deps.jobs is not None))]


@router.get("/admin/jobs", include_in_schema=False)
@router.get("/admin/jobs.md", include_in_schema=False)
def every_job(request: Request, deps: Deps, _admin: JobsAdmin) -> Response:
    page = JobsPage.of(deps.jobs.recent(100), deps.jobs.workers(), deps.llm_status())
    return respond(request, deps, page, "admin_jobs.html")


@router.get("/admin/usage", include_in_schema=False)
@router.get("/admin/usage.md", include_in_schema=False)
def model_usage(request: Request, deps: Deps, _admin: JobsAdmin) -> Response:
    page = UsagePage(deps.usage(), deps.budget)
    return respond(request, deps, page, "admin_usage.html")


@router.post("/admin/jobs/{job_id}/{action}", include_in_schema=False)
def job_action(request: Request, deps: Deps, user: MaybeAdmin, here: FromThisSite, job_id: int,
               action: str) -> Response:  # fmt: skip
    if user is None or deps.jobs is None or action not in ("cancel", "retry") or not 0 < job_id < 2**62:
        return not_found(request, deps, f"Nothing lives at {request.url.path}.")
    if not here:
        return refused_form()
    if action == "cancel":
        deps.jobs.cancel(job_id)
    else:
        deps.jobs.retry(job_id, asked_by=user)
    return RedirectResponse("/admin/jobs", status_code=303)
