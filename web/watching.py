"""`/me/watching`: a signed-in user's saved questions (`retrieval.library.watches`) and what their runs found.

"Watch this" on the search page keeps the question with its scope (the archive, a category, or the user's own
papers); the papers that answer it then are not news. After every job that brings papers the questions are run
again (`jobs.watches`), and on demand from this page; each run that finds papers not seen before is a change, listed
here newest first with the sentences that matched, and in the user's private feed. The e-mail digests' form and
links are `web.digests`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response

from jobs.arguments import JobKind, WatchesArguments
from jobs.queue import JobRefused
from jobs.watches import keep_question
from pages.base import PageMeta, md_escape, paper_address
from retrieval.library.digests import Digests
from retrieval.library.watches import (
    JUDGED_A_DAY,
    MAX_QUESTIONS,
    Watches,
    describe_change,
    judgement_parts,
    shown_lines,
)
from retrieval.scholarly.models import shown
from web.dependencies import Deps, Guarded, admin_user, form_user, page_user
from web.http import WebDeps, page_headers, respond
from web.library import within_write_rate


@dataclass(frozen=True)
class ChangeRow:
    question: str
    at: str
    papers: list[tuple[str, str, list[str]]]  # (title, path, quotes)
    read: bool
    what: str = ""  # "1 new paper", "1 new version of a paper it cited"...
    # LLM mode: (relation, [(words, None) or ("[n]", the path of the paper n names)]), `judgement_parts`
    judgement: tuple[str, list[tuple[str, str | None]]] | None = None

    def judgement_markdown(self) -> str:
        if self.judgement is None:
            return ""
        relation, parts = self.judgement
        text = "".join(f"[{md_escape(words)}]({path})" if path else md_escape(words) for words, path in parts)
        return f"**The new evidence {relation} the earlier answer:** {text}"


@dataclass(frozen=True)
class QuestionRow:
    id: int
    query: str
    scope: str
    last_run: str
    answers: int


@dataclass(frozen=True)
class EveryQuestionPage:
    """For admins: every saved question, whose, its scope, its answers so far and its last run."""

    rows: list[tuple[str, QuestionRow]]
    limit: int
    judged: int = JUDGED_A_DAY
    judged_today: dict[str, int] = field(default_factory=dict)  # each user's changes the model wrote for today
    path: str = "/admin/watching"

    def meta(self, base_url: str) -> PageMeta:
        return PageMeta(title="Saved questions", description="Every user's saved questions.", path=self.path,
                        noindex=True)  # fmt: skip

    def to_markdown(self) -> str:
        lines = ["# Saved questions", "", f"Each user may keep {self.limit}; each is run again (one search among the "
                 "papers that came) after every job that brings papers; with a model, it writes its sentence for "
                 f"{self.judged} changes a day per user at most.", "",
                 "| user | question | where | answers so far | last run | the model's sentences today (the user's) |",
                 "| --- | --- | --- | --- | --- | --- |"]  # fmt: skip
        lines += [f"| {md_escape(owner)} | {md_escape(q.query)} | {md_escape(q.scope)} | {q.answers} | {q.last_run} | "
                  f"{self.judged_today.get(owner, 0)} of {self.judged} |" for owner, q in self.rows]  # fmt: skip
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class WatchingPage:
    questions: list[QuestionRow]
    changes: list[ChangeRow]
    error: str = ""
    mail: bool = False  # the server can e-mail digests
    digest: str = ""  # how the user gets them ("" : not by e-mail), `digest_state`
    digest_notice: str = ""  # why their digests were switched off without them asking
    refused: str = "Not saved"  # what `error` stopped
    path: str = "/me/watching"

    def meta(self, base_url: str) -> PageMeta:
        return PageMeta(title="Saved questions", description="Questions you watch, and what is new for them.",
                        path=self.path, noindex=True)  # fmt: skip

    def to_markdown(self) -> str:
        lines = ["# Saved questions", ""]
        if self.error:
            lines += [f"**{self.refused}:** {md_escape(self.error)}", ""]
        if not self.questions:
            lines.append("No saved question yet: search or ask in the chat, then \"Watch this\".")
        lines += [f"- {md_escape(q.query)} ({md_escape(q.scope)}): {q.answers} answers so far, last run {q.last_run}"
                  for q in self.questions]  # fmt: skip
        if self.mail:
            lines += ["", f"E-mail digest: {md_escape(self.digest) if self.digest else 'off'}"]
            lines += [f"**Switched off:** {md_escape(self.digest_notice)}"] if self.digest_notice else []
        lines += ["", "## What is new", ""]
        if not self.changes:
            lines.append("Nothing new yet.")
        for c in self.changes:
            lines.append(f"### {c.what} on {md_escape(c.question)} ({c.at})" + ("" if c.read else " (new)"))
            if c.judgement is not None:
                lines += ["", c.judgement_markdown(), ""]
            for title, path, quotes in c.papers:
                lines.append(f"- [{md_escape(title)}]({path})")
                lines += [f"    > {md_escape(q)}" for q in quotes]
        return "\n".join(lines) + "\n"


def _scope_label(scope: str) -> str:
    return "your papers" if scope == "mine" else f"category {scope.split(':', 1)[1]}" \
        if scope.startswith("category:") else "the archive"  # fmt: skip


def change_rows(watches: Watches, user: str) -> list[ChangeRow]:
    """The user's changes as their page lists them, newest first, each paper and cited number with its address."""
    rows = []
    for change, question in watches.changes(user):
        papers = [(*shown_lines(p)[:1], paper_address(str(p.get("id", "")), str(p.get("title", ""))),
                   shown_lines(p)[1]) for p in change.papers]  # fmt: skip
        said = judgement_parts(change.judgement)
        if said is not None:
            titles = {str(p.get("id", "")): str(p.get("title", "")) for p in change.papers}
            said = (said[0], [(words, paper_address(pid, titles.get(pid, "")) if pid else None)
                              for words, pid in said[1]])  # fmt: skip
        brought = describe_change(change.papers)
        rows.append(ChangeRow(question.query, shown(change.at), papers, change.read, brought, said))
    return rows


def digest_state(deps: WebDeps, user: str) -> tuple[str, str]:
    """How the user gets digests, as their page says it ("daily to x", "weekly, waiting for confirmation at x", ""
    for off), and why they were switched off without asking ("" when they were not)."""
    row = Digests(deps.archive.catalog.engine).of(user) if deps.mail else None
    if row is None:
        return "", ""
    if row.notice:
        return "", row.notice
    how = "daily" if row.every == "day" else "weekly"
    if row.confirmed_at is None:
        return f"{how}, waiting for confirmation at {row.email} (follow the link mailed to it)", ""
    return f"{how} to {row.email}", ""


router = APIRouter(route_class=Guarded)


def _offered(deps: WebDeps) -> bool:
    return deps.uploads is not None and deps.jobs is not None  # the server keeps libraries and runs jobs


Watcher = Annotated[str, Depends(page_user(_offered))]
WatcherForm = Annotated[str, Depends(form_user(_offered))]
WatchesAdmin = Annotated[str, Depends(admin_user(_offered))]


def _store(deps: WebDeps) -> Watches:
    return Watches(deps.archive.catalog.engine)


def watching_page(request: Request, deps: WebDeps, user: str, status: int = 200, error: str = "",
                  refused: str = "Not saved") -> Response:  # fmt: skip
    """`/me/watching` for its user (their changes then marked read), with what refused a form, if anything."""
    watches = _store(deps)
    questions = [QuestionRow(q.id, q.query, _scope_label(q.scope), shown(q.last_run_at), len(q.seen))
                 for q in watches.of(user)]  # fmt: skip
    listed = WatchingPage(questions, change_rows(watches, user), error, deps.mail, *digest_state(deps, user),
                          refused)  # fmt: skip
    response = respond(request, deps, listed, "watching.html", status)
    response.headers["Cache-Control"] = "private, no-store"
    watches.mark_read(user)
    return response


def too_fast(request: Request, deps: WebDeps, user: str, refused: str) -> Response | None:
    """The page with a 429 and the reason when the user is past their rate of writes, else None (a form's answer
    is a page, never the JSON body `within_write_rate` raises with)."""
    try:
        within_write_rate(deps, user)
    except HTTPException as slow:
        response = watching_page(request, deps, user, slow.status_code, str(slow.detail), refused)
        response.headers.update(slow.headers or {})
        return response
    return None


@router.get("/admin/watching", include_in_schema=False)
@router.get("/admin/watching.md", include_in_schema=False)
def every_question(request: Request, deps: Deps, _admin: WatchesAdmin) -> Response:
    store = _store(deps)
    rows = [(q.owner, QuestionRow(q.id, q.query, _scope_label(q.scope), shown(q.last_run_at), len(q.seen)))
            for q in store.every()]  # fmt: skip
    judged = {owner: store.judged_today(owner) for owner in {owner for owner, _ in rows}}
    listed = EveryQuestionPage(rows, MAX_QUESTIONS, judged_today=judged)
    response = respond(request, deps, listed, "admin_watching.html")
    response.headers["Cache-Control"] = "private, no-store"
    return response


@router.post("/me/watching/{question_id}/{action}", include_in_schema=False)
def question_action(request: Request, deps: Deps, user: WatcherForm, question_id: int, action: str) -> Response:
    """Run now (a job within the user's share of the queue) and Stop watching."""
    question = _store(deps).get(user, question_id)
    if question is None or action not in ("run", "delete"):
        return PlainTextResponse("No such question of yours.", status_code=404, headers=page_headers())
    if slow := too_fast(request, deps, user, "Not run" if action == "run" else "Not deleted"):
        return slow
    if action == "run":
        run = WatchesArguments(owner=user, question=question.id)
        try:  # within the user's share of the queue, as every job a user asks for
            deps.jobs.submit(JobKind.WATCHES, run, user, key=run.key(), for_user=True)
        except JobRefused as exc:
            said = f"{exc} (A saved question's run is one of them.)"
            return watching_page(request, deps, user, 429, said, refused="Not run")
    else:
        _store(deps).forget(user, question.id)
    return RedirectResponse("/me/watching", status_code=303)


@router.get("/me/watching", include_in_schema=False)
@router.get("/me/watching.md", include_in_schema=False)
def saved_questions(request: Request, deps: Deps, user: Watcher) -> Response:
    return watching_page(request, deps, user)


@router.post("/me/watching", include_in_schema=False)
def save_question(deps: Deps, request: Request, user: WatcherForm, q: str = Form("", max_length=2000),
                  scope: str = Form("all", max_length=20), category: str = Form("", max_length=60)) -> Response:
    """(A plain function: FastAPI reads the form, then runs it in a thread, away from the event loop.)"""
    if slow := too_fast(request, deps, user, "Not saved"):
        return slow
    if scope == "category":
        scope = f"category:{category.strip()}"
    try:
        keep_question(deps.archive, _store(deps), deps.uploads.library_ids, user, q, scope)
    except ValueError as exc:
        return watching_page(request, deps, user, 400, str(exc))
    return RedirectResponse("/me/watching", status_code=303)


def changed_paper_ids(deps: WebDeps, user: str, limit: int = 30) -> list[str]:
    """The public papers the user's saved questions found lately, newest first (for the private feed)."""
    ids = [p.get("id", "") for change, _ in Watches(deps.archive.catalog.engine).changes(user) for p in change.papers]
    return list(dict.fromkeys(i for i in ids if i and not i.startswith("upload:")))[:limit]
