"""Reading lists into a user's library: `POST /api/library/import` (a BibTeX, RIS or CSL-JSON export, or a list of
arXiv ids and DOIs, as the multipart field `file`), `GET /api/library/papers`, `DELETE /api/library/papers/{id}`,
and the same from `/me/library`'s forms. What each entry became is answered with its reason
(`retrieval.library.reading_lists`)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from jobs.requests import ImportReport, import_entries
from pages.base import LIBRARY, PageMeta, md_escape
from retrieval.library.reading_lists import ReadingListBusy, read_reading_list_bounded
from web.bodies import READING_LIST
from web.dependencies import NOT_FROM_HERE, Deps, FromThisSite, Guarded, Viewer
from web.http import respond
from web.library import (MISSING, MULTIPART_FILE, SIGNED_IN, LibraryOwner, LibraryWriter, Refused, _private,
                         library_writer, within_write_rate)  # fmt: skip

MAX_LIST_BYTES = READING_LIST  # (a body much larger never reaches the route: `web.bodies`)


class Outcome(BaseModel):
    entry: str
    detail: str


class ImportOut(BaseModel):
    format: str
    counts: dict[str, int]
    joined: list[Outcome]
    requested: list[Outcome]
    not_found: list[Outcome]
    rejected: list[Outcome]

    @classmethod
    def of(cls, r: ImportReport) -> ImportOut:
        pairs = lambda rows: [Outcome(entry=a, detail=b) for a, b in rows]  # noqa: E731
        return cls(format=r.format, counts=r.counts(), joined=pairs(r.joined), requested=pairs(r.requested),
                   not_found=pairs(r.not_found), rejected=pairs(r.rejected))  # fmt: skip


@dataclass(frozen=True)
class ImportPage:
    report: ImportOut
    path: str = LIBRARY
    title: str = "Reading list imported"

    def meta(self, base_url: str) -> PageMeta:
        return PageMeta(self.title, f"{self.report.counts}", self.path, noindex=True)

    def to_markdown(self) -> str:
        lines = [f"# {self.title}", "", f"A {self.report.format} file: " +
                 ", ".join(f"{n.replace('_', ' ')} {c}" for n, c in self.report.counts.items()) + "."]  # fmt: skip
        for name in ("joined", "requested", "not_found", "rejected"):
            for o in getattr(self.report, name):
                lines.append(f"- {name.replace('_', ' ')}: {md_escape(o.entry)}: {md_escape(o.detail)}")
        return "\n".join(lines) + "\n"


async def _read_list(request: Request) -> str:
    async with request.form(max_files=1, max_fields=4) as form:
        field = form.get("file")
        if not isinstance(field, UploadFile):
            raise Refused(400, "Send the reading list as the multipart form field `file`.")
        data = await field.read(MAX_LIST_BYTES + 1)
    if len(data) > MAX_LIST_BYTES:
        raise Refused(413, "A reading list may be at most 2 MB.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Refused(400, "A reading list is a text file (UTF-8).") from None


router = APIRouter(route_class=Guarded)


@router.post("/api/library/import", response_model=ImportOut, tags=["library"], openapi_extra=MULTIPART_FILE,
             responses={**SIGNED_IN, 400: {"description": "Not a reading list"}, 413: {"description": "Over 2 MB"}},
             name="import_list")  # fmt: skip
async def import_reading_list(request: Request, deps: Deps,
                              owner: Annotated[str, Depends(library_writer("the import"))]) -> Response:  # fmt: skip
    """Import a reading list (BibTeX, RIS, CSL-JSON, or arXiv ids and DOIs one per line) into your library."""
    try:  # parsed in a child process with a time limit: never in this event loop, never unbounded
        name, entries = await run_in_threadpool(read_reading_list_bounded, await _read_list(request))
    except Refused as refused:
        return JSONResponse({"detail": str(refused)}, status_code=refused.status)
    except ValueError as exc:
        return JSONResponse({"detail": str(exc)}, status_code=400)
    except ReadingListBusy as exc:
        return JSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": "30"})
    imported = await run_in_threadpool(  # database writes: never in the event loop (see `receive_pdf`)
        functools.partial(import_entries, deps.archive, deps.uploads, deps.jobs, owner, name, entries,
                          on_demand=deps.on_demand, daily=deps.on_demand_daily)
    )  # fmt: skip
    if deps.zotero is not None:  # (what the owner imported is theirs: a Zotero deletion no longer takes it)
        await run_in_threadpool(deps.zotero.libraries.kept, owner,
                                [pid for _, pid in imported.joined + imported.requested])  # fmt: skip
    report = ImportOut.of(imported)
    if "text/html" in request.headers.get("accept", ""):
        return _private(respond(request, deps, ImportPage(report), "import_report.html"))
    return _private(JSONResponse(report.model_dump()))


@router.get("/api/library/papers", tags=["library"], responses=SIGNED_IN, name="papers")
def library_papers(deps: Deps, owner: LibraryOwner) -> Response:
    """The public papers in your library (ids; one still being fetched from arXiv has no title yet)."""
    ids = deps.uploads.joined(owner)
    found = deps.archive.papers(ids)
    return _private(JSONResponse([{"id": pid, "title": found[pid].title if pid in found else None,
                                   "here": pid in found} for pid in ids]))  # fmt: skip


@router.delete("/api/library/papers/{paper_id:path}", status_code=204, tags=["library"],
               responses={**SIGNED_IN, **MISSING}, name="leave")
def leave_library(deps: Deps, owner: LibraryWriter, paper_id: str) -> Response:
    if not deps.uploads.leave(owner, paper_id[:200]):
        raise HTTPException(404, "no such paper in your library")
    return Response(status_code=204)


@router.post("/me/library/papers/{paper_id:path}/remove", include_in_schema=False)
def leave_library_form(deps: Deps, owner: Viewer, here: FromThisSite, paper_id: str) -> Response:
    if not here or not owner or deps.uploads is None:
        return Response(NOT_FROM_HERE, status_code=403)
    within_write_rate(deps, owner)
    deps.uploads.leave(owner, paper_id[:200])
    return RedirectResponse(LIBRARY, status_code=303)
