"""`/me/watching`: a signed-in user's saved questions (`retrieval.library.watches`) and what their runs found.

"Watch this" on the search page keeps the question with its scope (the archive, a category, or the user's own
papers); the papers that answer it then are not news. After every job that brings papers the questions are run
again (`jobs.watches`), and on demand from this page; each run that finds papers not seen before is a change, listed
here newest first with the sentences that matched, and in the user's private feed. The e-mail digests' form and
links are `web.digests`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from fastapi import APIRouter, Form, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response

from jobs.queue import JobRefused
from jobs.watches import WATCHES_KIND, keep_question
from retrieval.library.watches import JUDGED_A_DAY, MAX_QUESTIONS, Watches, describe, judgement_parts, shown_lines
from retrieval.scholarly.models import shown
from web.addresses import paper_address
from web.base import PageMeta, md_escape
from web.digests import digest_routes, digest_state
from web.http import WebDeps, not_found, page_headers, respond, same_origin
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
    digest: str = ""  # how the user gets them ("" : not by e-mail), `web.digests.digest_state`
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
        rows.append(ChangeRow(question.query, shown(change.at), papers, change.read, describe(change.papers), said))
    return rows


def watching_routes(router: APIRouter, deps: WebDeps) -> None:
    def store() -> Watches | None:
        return Watches(deps.archive.catalog.engine) if deps.uploads is not None and deps.jobs is not None else None

    def page(request: Request, user: str, status: int = 200, error: str = "", refused: str = "Not saved") -> Response:
        watches = store()
        questions = [QuestionRow(q.id, q.query, _scope_label(q.scope), shown(q.last_run_at), len(q.seen))
                     for q in watches.of(user)]  # fmt: skip
        listed = WatchingPage(questions, change_rows(watches, user), error, deps.mail, *digest_state(deps, user),
                              refused)  # fmt: skip
        response = respond(request, deps, listed, "watching.html", status)
        response.headers["Cache-Control"] = "private, no-store"
        watches.mark_read(user)
        return response

    def form_user(request: Request) -> tuple[str | None, Response | None]:
        user = deps.viewer(request) if store() else None
        if user is None:
            return None, PlainTextResponse("Sign in first.", status_code=401, headers=page_headers())
        if not same_origin(request):
            return None, PlainTextResponse("Refused: the form did not come from this site.", status_code=403)
        return user, None

    digest_routes(router, deps, page, form_user)
    _admin_route(router, deps, store)
    _question_route(router, deps, store, page, form_user)

    @router.get("/me/watching", include_in_schema=False)
    @router.get("/me/watching.md", include_in_schema=False)
    def watching(request: Request) -> Response:
        user = deps.viewer(request) if store() else None
        if user is None:
            return RedirectResponse("/chat/login", status_code=303)
        return page(request, user)

    @router.post("/me/watching", include_in_schema=False)
    def save(request: Request, q: str = Form("", max_length=2000), scope: str = Form("all", max_length=20),
             category: str = Form("", max_length=60)) -> Response:  # fmt: skip
        """(A plain function: FastAPI reads the form, then runs it in a thread, away from the event loop.)"""
        user, refused = form_user(request)
        if refused:
            return refused
        within_write_rate(deps, user)
        if scope == "category":
            scope = f"category:{category.strip()}"
        try:
            keep_question(deps.archive, store(), deps.uploads.library_ids, user, q, scope)
        except ValueError as exc:
            return page(request, user, 400, str(exc))
        return RedirectResponse("/me/watching", status_code=303)


def _admin_route(router: APIRouter, deps: WebDeps, store: Callable[[], Watches | None]) -> None:
    @router.get("/admin/watching", include_in_schema=False)
    @router.get("/admin/watching.md", include_in_schema=False)
    def every(request: Request) -> Response:
        user = deps.viewer(request) if store() else None
        if not user or not deps.is_admin(user):
            return not_found(request, deps, f"Nothing lives at {request.url.path}.")
        rows = [(q.owner, QuestionRow(q.id, q.query, _scope_label(q.scope), shown(q.last_run_at), len(q.seen)))
                for q in store().every()]  # fmt: skip
        judged = {owner: store().judged_today(owner) for owner in {owner for owner, _ in rows}}
        listed = EveryQuestionPage(rows, MAX_QUESTIONS, judged_today=judged)
        response = respond(request, deps, listed, "admin_watching.html")
        response.headers["Cache-Control"] = "private, no-store"
        return response


def _question_route(router: APIRouter, deps: WebDeps, store: Callable[[], Watches | None],
                    page: Callable[..., Response], form_user: Callable[..., tuple[str | None, Response | None]]
                    ) -> None:  # fmt: skip
    """Run now (a job within the user's share of the queue) and Stop watching."""
    @router.post("/me/watching/{question_id}/{action}", include_in_schema=False)
    def act(request: Request, question_id: int, action: str) -> Response:
        user, refused = form_user(request)
        if refused:
            return refused
        question = store().get(user, question_id)
        if question is None or action not in ("run", "delete"):
            return PlainTextResponse("No such question of yours.", status_code=404, headers=page_headers())
        within_write_rate(deps, user)
        if action == "run":
            try:  # within the user's share of the queue, as every job a user asks for
                deps.jobs.submit(WATCHES_KIND, {"owner": user, "question": question.id}, user,
                                 key=f"{WATCHES_KIND}:{question.id}", for_user=True)  # fmt: skip
            except JobRefused as exc:
                said = f"{exc} (A saved question's run is one of them.)"
                return page(request, user, 429, said, refused="Not run")
        else:
            store().forget(user, question.id)
        return RedirectResponse("/me/watching", status_code=303)


def changed_paper_ids(deps: WebDeps, user: str, limit: int = 30) -> list[str]:
    """The public papers the user's saved questions found lately, newest first (for the private feed)."""
    ids = [p.get("id", "") for change, _ in Watches(deps.archive.catalog.engine).changes(user) for p in change.papers]
    return list(dict.fromkeys(i for i in ids if i and not i.startswith("upload:")))[:limit]
