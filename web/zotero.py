"""`/me/zotero`: a signed-in user connects a Zotero user or group library (its id and an API key, or, for an admin,
Zotero 7 desktop's local API when the server allows it: the desktop's library is its owner's, not every user's), syncs
it (a `zotero` job, `jobs.zotero`, within the user's share of the queue and rate of writes), sees each library's
state and last error, and disconnects it; and exports their library, or one named list (a Zotero collection), as a
file Zotero imports (RIS or CSL-JSON; Zotero puts an imported file's items in a new collection named after the
file)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from typing import Annotated

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response

from jobs.arguments import JobKind, ZoteroArguments
from jobs.queue import JobRefused
from jobs.zotero import ADMINS_ONLY
from pages.base import PageMeta, md_escape
from retrieval.library.zotero import KINDS
from retrieval.scholarly.models import shown
from web.cite import CSL_JSON, RIS, csl_json, ris
from web.dependencies import Deps, Guarded, MaybeAdmin, Viewer, form_user, page_user
from web.http import WebDeps, page_headers, respond
from web.library import within_write_rate
from web.services import ZoteroSetup

_KEY = re.compile(r"^[A-Za-z0-9]{24}$")  # Zotero API keys: 24 letters and digits
_NUMBER = re.compile(r"^[0-9]{1,12}$")


@dataclass(frozen=True)
class LibraryRow:
    id: int
    title: str
    where: str
    state: str
    version: int
    synced: str
    error: str


@dataclass(frozen=True)
class ListRow:
    id: int
    name: str
    count: int


@dataclass(frozen=True)
class ZoteroPage:
    libraries: list[LibraryRow]
    lists: list[ListRow]
    local: bool  # the desktop offered: the server reaches one, and the viewer is an admin
    error: str = ""
    problem: str = "Not connected"  # what the error stopped
    path: str = "/me/zotero"

    def meta(self, base_url: str) -> PageMeta:
        return PageMeta(title="Zotero", description="Your Zotero libraries, synced into your library.",
                        path=self.path, noindex=True)  # fmt: skip

    def to_markdown(self) -> str:
        lines = ["# Zotero", ""]
        if self.error:
            lines += [f"**{self.problem}:** {md_escape(self.error)}", ""]
        if not self.libraries:
            lines.append("No Zotero library connected yet.")
        for r in self.libraries:
            lines.append(f"- {md_escape(r.title)} ({r.where}): {r.state}, version {r.version}, synced {r.synced}"
                         + (f"; {md_escape(r.error)}" if r.error else ""))  # fmt: skip
        if self.lists:
            lines += ["", "## Lists", ""]
            lines += [f"- {md_escape(x.name)}: {x.count} paper{'s' if x.count != 1 else ''} "
                      f"(/me/library/lists/{x.id}.ris, .json)" for x in self.lists]  # fmt: skip
        lines += ["", "Your whole library as one file: /me/library/export.ris, /me/library/export.json"]
        return "\n".join(lines) + "\n"


def _rows(libraries) -> list[LibraryRow]:
    rows = []
    for r in libraries:
        when = shown(r.last_synced_at)
        where = ("Zotero desktop" if r.source == "local" else "zotero.org") + f" {r.kind} {r.library_id}"
        rows.append(LibraryRow(r.id, r.name or f"{r.kind} {r.library_id}", where, r.state, r.version, when,
                               r.last_error or ""))  # fmt: skip
    return rows


def _page(deps: WebDeps, request: Request, user: str, status: int = 200, error: str = "",
          problem: str = "Not connected", headers: dict | None = None) -> Response:  # fmt: skip
    z = deps.zotero
    lists = [ListRow(r.id, r.name, len(ids)) for r, ids in z.libraries.lists(user)]
    shown = ZoteroPage(_rows(z.libraries.of(user)), lists, z.local and deps.is_admin(user), error, problem)
    response = respond(request, deps, shown, "zotero.html", status)
    response.headers.update({**(headers or {}), "Cache-Control": "private, no-store"})
    return response


def _too_fast(deps: WebDeps, request: Request, user: str, problem: str) -> Response | None:
    """The page with a 429 when the user is past their rate of writes (each can start a job), else None."""
    try:
        within_write_rate(deps, user)
    except HTTPException as slow:
        return _page(deps, request, user, slow.status_code, str(slow.detail), problem, slow.headers)
    return None


def _synced(deps: WebDeps, request: Request, user: str, library: int, problem: str) -> Response:
    try:
        _sync(deps, user, library)
    except JobRefused as refused:  # the user's share of the queue is taken: say so, keep the library
        return _page(deps, request, user, 429, str(refused), problem)
    return RedirectResponse("/me/zotero", status_code=303)


router = APIRouter(route_class=Guarded)


def _offered(deps: WebDeps) -> bool:
    return deps.zotero is not None and deps.jobs is not None


ZoteroUser = Annotated[str, Depends(page_user(_offered))]
ZoteroForm = Annotated[str, Depends(form_user(_offered))]


@router.get("/me/zotero", include_in_schema=False)
@router.get("/me/zotero.md", include_in_schema=False)
def zotero_overview(request: Request, deps: Deps, user: ZoteroUser) -> Response:
    return _page(deps, request, user)


@router.post("/me/zotero", include_in_schema=False)
def connect_zotero(request: Request, deps: Deps, user: ZoteroForm, admin: MaybeAdmin,
                   kind: str = Form("user", max_length=10), library_id: str = Form("", max_length=40),
                   source: str = Form("web", max_length=10),
                   key: str = Form("", max_length=100)) -> Response:  # fmt: skip
    """(A plain function: FastAPI reads the form, then runs it in a thread, away from the event loop.)"""
    if refused := _too_fast(deps, request, user, "Not connected"):
        return refused
    number, key = library_id.strip(), key.strip()
    z = deps.zotero
    problem = _problem(z, user, kind, number, source, key, admin is not None)
    if problem:
        return _page(deps, request, user, 400, problem)
    sealed = z.sealer.seal(key) if source == "web" else ""
    try:  # (the cap on libraries a user connects is counted under their lock)
        row = z.libraries.connect(user, kind, "0" if source == "local" and kind == "user" else number, source,
                                  sealed)  # fmt: skip
    except ValueError as refused:
        return _page(deps, request, user, 400, str(refused))
    return _synced(deps, request, user, row.id, "Connected, not synced")


@router.post("/me/zotero/{library}/{action}", include_in_schema=False)
def zotero_action(request: Request, deps: Deps, user: ZoteroForm, admin: MaybeAdmin, library: int,
                  action: str) -> Response:  # fmt: skip
    row = deps.zotero.libraries.get(user, library)
    if row is None or action not in ("sync", "disconnect"):
        return PlainTextResponse("No such library of yours.", status_code=404, headers=page_headers())
    if slow := _too_fast(deps, request, user, "Not done"):
        return slow
    if action == "disconnect":
        deps.zotero.libraries.disconnect(user, row.id)
    elif row.source == "local" and admin is None:  # as the sync itself would: switched off
        deps.zotero.libraries.update(row.id, state="off", last_error=ADMINS_ONLY)
        return _page(deps, request, user, 403, ADMINS_ONLY, "Not synced")
    else:
        return _synced(deps, request, user, row.id, "Not synced")
    return RedirectResponse("/me/zotero", status_code=303)


# The library, and each named list, as a file for Zotero.
@router.get("/me/library/export.{kind}", include_in_schema=False)
def export_library(deps: Deps, user: Viewer, kind: str) -> Response:
    if user is None or deps.uploads is None or kind not in ("ris", "json"):
        return PlainTextResponse("Not found", status_code=404, headers=page_headers())
    return _file(deps, user, deps.uploads.library_ids(user), kind, "scholarloom-library")


@router.get("/me/library/lists/{list_id}.{kind}", include_in_schema=False)
def export_reading_list(deps: Deps, user: Viewer, list_id: int, kind: str) -> Response:
    found = deps.zotero.libraries.list_of(user, list_id) if user and _offered(deps) else None
    if found is None or kind not in ("ris", "json"):
        return PlainTextResponse("Not found", status_code=404, headers=page_headers())
    listed, ids = found
    return _file(deps, user, ids, kind, re.sub(r"[^A-Za-z0-9 ._-]", "_", listed.name).strip()[:80] or "list")


def _problem(z: ZoteroSetup, user: str, kind: str, number: str, source: str, key: str, admin: bool) -> str:
    """Why a connection cannot be made as asked ("" when it can)."""
    if kind not in KINDS:
        return "Choose a user or a group library."
    if source not in ("web", "local"):
        return "Choose zotero.org or the Zotero desktop."
    if source == "local" and not admin:  # the desktop's library is its owner's: the form offers it to admins only
        return ("Only an admin may connect the Zotero desktop of this server: connect your library at zotero.org "
                "with a key.")  # fmt: skip
    if source == "local" and not z.local:
        return "This server does not reach a Zotero desktop."
    if not _NUMBER.match(number) and not (source == "local" and kind == "user"):
        return ("The library id is a number: your user id is shown beside your keys at zotero.org/settings/keys, "
                "a group's is in its address.")  # fmt: skip
    if source == "web" and not _KEY.match(key):
        return "A Zotero API key is 24 letters and digits (make one at zotero.org/settings/keys)."
    if z.sealer is None:
        return "This server has no secret to keep keys with (SCHOLARLOOM_AUTH_SECRET)."
    return ""


def _sync(deps: WebDeps, user: str, library: int) -> None:
    """The library's sync queued, within the user's share of the queue (JobRefused past it)."""
    sync = ZoteroArguments(library, user, on_demand=deps.on_demand, daily=deps.on_demand_daily)
    deps.jobs.submit(JobKind.ZOTERO, sync, user, key=sync.key(), for_user=True)


def _file(deps: WebDeps, user: str, ids: list[str], kind: str, name: str) -> Response:
    """Papers (and the user's own uploads) as RIS or CSL-JSON, named for Zotero's new collection."""
    papers = deps.archive.papers(ids, user)
    authors = deps.archive.author_names([i for i in ids if not i.startswith("upload:")])
    cited = [(papers[i], authors.get(i, [])) for i in ids if i in papers]
    text, media = (ris(cited), RIS) if kind == "ris" else (csl_json(cited), CSL_JSON)
    headers = {**page_headers(), "Cache-Control": "private, no-store",
               "Content-Disposition": f'attachment; filename="{name}.{kind}"'}  # fmt: skip
    return Response(text, media_type=media, headers=headers)
