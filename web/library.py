"""A user's own PDFs: `POST/GET /api/library`, `GET/DELETE /api/library/{id}`, and the pages `/me/library` and
`/me/library/{id}` (with a plain form to upload and one to delete: our pages run no script).

A file is refused before its body is read when its declared length is over the cap (`web.bodies`, for every route)
or over what is left of the owner's quota; a body that keeps coming past either is cut off (it was spooled to disk,
never held in memory). `{upload_id:int}`: `/api/library/import` and `/api/library/papers` are not items.
It must start with `%PDF-`. It is stored under its row's id and indexed by an `upload` job (`jobs.kinds.index_upload`).
Another user's item answers exactly like one that does not exist (404).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path as FilePath
from typing import Annotated

from fastapi import APIRouter, Depends, Form, HTTPException, Path, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from pages.base import LIBRARY, PageMeta, paper_path
from pages.library import LibraryPage, UploadPage
from retrieval.library.uploads import MB, Upload, UploadRefused
from web.dependencies import NOT_FROM_HERE, Deps, FromThisSite, Guarded, Viewer
from web.http import WebDeps, not_found, page_headers, respond, same_origin

_FILE_FIELD = {"type": "object", "required": ["file"], "properties": {"file": {"type": "string", "format": "binary"}}}
MULTIPART_FILE = {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": _FILE_FIELD}}}}


Refused = UploadRefused  # pages' name for it
SIGNED_IN = {401: {"description": "Not signed in"}, 403: {"description": "Sent from another site"},
             503: {"description": "This server keeps no libraries"}}  # fmt: skip
MISSING = {404: {"description": "No such item of yours (another user's is the same 404)"}}


class UploadOut(BaseModel):
    id: int
    filename: str
    size: int
    state: str
    error: str | None
    pages: int
    passages: int
    title: str
    authors: list[str]
    abstract: str
    arxiv_id: str | None
    doi: str | None
    paper_id: str | None
    job: int | None
    created_at: datetime
    url: str

    @classmethod
    def of(cls, u: Upload) -> UploadOut:
        return cls(id=u.id, filename=u.filename, size=u.size, state=u.state, error=u.error, pages=u.pages,
                   passages=u.passages, title=u.title, authors=u.authors, abstract=u.abstract, arxiv_id=u.arxiv_id,
                   doi=u.doi, paper_id=u.paper_id, job=u.job_id, created_at=u.created_at, url=u.path)  # fmt: skip


class Correction(BaseModel):
    """What the user corrects of what was read from the file (fields left out stay as they are)."""

    title: str | None = Field(None, min_length=1, max_length=500)
    authors: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = Field(None, max_length=100)
    abstract: str | None = Field(None, max_length=5000)


def _capped(receive, cap: int):
    seen = 0

    async def wrapped():
        nonlocal seen
        message = await receive()
        seen += len(message.get("body", b""))
        if seen > cap:
            raise Refused(413, f"The file is larger than the limit of {cap // MB} MB.")
        return message

    return wrapped


async def receive_pdf(request: Request, deps: WebDeps, owner: str) -> Upload:
    """Spool the multipart field `file` (refused before reading when its declared length is over what is left of
    the owner's quota, cut off when it keeps coming), then store it with its job (`Uploads.accept`). Raises Refused.
    A body over the upload limit never reaches the route (`web.bodies`)."""
    limits = deps.upload_limits
    # The database work runs in a thread: in the event loop, a write waiting for SQLite's lock would stall the
    # very loop whose other requests (the chat's history) hold it.
    room = await run_in_threadpool(deps.uploads.room, owner, limits)
    declared = request.headers.get("content-length", "")  # (over the upload limit: refused by `web.bodies`)
    size = int(declared) if declared.isascii() and declared.isdigit() else None
    if room <= 0 or (size is not None and size > limits.request_bytes(room)):
        raise Refused(413, f"Your library is full ({limits.quota_mb} MB); delete items to make room.")
    capped = Request(request.scope, _capped(request.receive, room + 64 * 1024))
    async with capped.form(max_files=1, max_fields=4) as form:
        field = form.get("file")
        if not isinstance(field, UploadFile):
            raise Refused(400, "Send the PDF as the multipart form field `file`.")
        spooled = await _spool(field, deps.uploads.folder, room)
    name = field.filename or "upload.pdf"
    return await run_in_threadpool(deps.uploads.accept, owner, name, spooled, limits, deps.jobs)


async def _spool(field: UploadFile, folder: FilePath, cap: int) -> FilePath:
    length = 0
    handle = tempfile.NamedTemporaryFile(dir=folder, prefix=".incoming-", suffix=".pdf", delete=False)
    with handle:
        while chunk := await field.read(1 << 20):
            length += len(chunk)
            if length > cap:
                handle.close()
                FilePath(handle.name).unlink(missing_ok=True)
                raise Refused(413, f"The file is larger than the limit of {cap // MB} MB.")
            handle.write(chunk)
    return FilePath(handle.name)


def _private(response: Response) -> Response:
    response.headers["Cache-Control"] = "private, no-store"
    return response


def within_write_rate(deps: WebDeps, user: str) -> None:
    """A user's writes to their library, at most `deps.writes` a minute: 429 with Retry-After past it (each write can
    start a job, take disk or fetch from arXiv; the queue's share caps what waits, this what arrives)."""
    if wait := deps.writes.take(user):
        raise HTTPException(429, "Too many changes to your library in a minute; wait a moment.",
                            headers={"Retry-After": str(max(1, round(wait)))})  # fmt: skip


def library_owner(deps: Deps, owner: Viewer) -> str:
    """The signed-in user whose library a JSON route reads or writes: 401 for nobody, 503 for a server without."""
    if not owner:
        raise HTTPException(401, "Sign in to use your library.")
    if deps.uploads is None or deps.jobs is None:
        raise HTTPException(503, "This server keeps no libraries.")
    return owner


LibraryOwner = Annotated[str, Depends(library_owner)]


def library_writer(what: str) -> Callable[..., str]:
    """`library_owner`, within the user's rate of writes, refusing `what` ("the upload") when a browser says it came
    from another site (a script, curl or a client library, names no page)."""

    def writer(request: Request, deps: Deps, owner: LibraryOwner) -> str:
        within_write_rate(deps, owner)
        if (request.headers.get("origin") or request.headers.get("referer")) and not same_origin(request):
            raise HTTPException(403, f"Refused: {what} did not come from this site.")
        return owner

    return writer


LibraryWriter = Annotated[str, Depends(library_writer("the request"))]
router = APIRouter(route_class=Guarded)


def _refused() -> Response:
    return Response(NOT_FROM_HERE, status_code=403)


@router.post("/api/library", status_code=201, openapi_extra=MULTIPART_FILE, tags=["library"],
             responses={**SIGNED_IN, 400: {"description": "No file field"}, 413: {"description": "Too large, or "
                        "the library is full"}, 415: {"description": "Not a PDF"}}, name="add")  # fmt: skip
async def add_upload(request: Request, deps: Deps,
                     owner: Annotated[str, Depends(library_writer("the upload"))]) -> Response:  # fmt: skip
    """Add a PDF to your library (signed in: the same cookie as the pages); it is indexed by a job."""
    html = "text/html" in request.headers.get("accept", "")
    try:
        upload = await receive_pdf(request, deps, owner)
    except Refused as refused:
        if html:
            meta = PageMeta(title="Not added", description=str(refused), path=LIBRARY, noindex=True)
            page = deps.renderer.html("not_found.html", meta, message=str(refused), signed_in=True)
            return _private(Response(page, status_code=refused.status, media_type="text/html",
                                     headers=page_headers()))  # fmt: skip
        return JSONResponse({"detail": str(refused)}, status_code=refused.status)
    if html:  # the page's form
        return RedirectResponse(upload.path, status_code=303)
    return _private(JSONResponse(UploadOut.of(upload).model_dump(mode="json"), status_code=201,
                                 headers={"Location": f"/api/library/{upload.id}"}))  # fmt: skip


@router.get("/api/library", response_model=list[UploadOut], tags=["library"], responses=SIGNED_IN, name="listing")
def list_uploads(deps: Deps, owner: LibraryOwner) -> Response:
    """Your uploads, newest first."""
    items = deps.uploads.mine(owner)
    return _private(JSONResponse([UploadOut.of(u).model_dump(mode="json") for u in items]))


@router.get("/api/library/{upload_id:int}", response_model=UploadOut, tags=["library"],
            responses={**SIGNED_IN, **MISSING}, name="one")
def get_upload(deps: Deps, owner: LibraryOwner, upload_id: int = Path(ge=1, lt=2**62)) -> Response:
    found = deps.uploads.get(owner, upload_id)
    if found is None:
        raise HTTPException(404, "no such item in your library")
    return _private(JSONResponse(UploadOut.of(found).model_dump(mode="json")))


@router.patch("/api/library/{upload_id:int}", response_model=UploadOut, tags=["library"],
              responses={**SIGNED_IN, **MISSING}, name="correct")
def correct_upload(deps: Deps, owner: LibraryWriter, fields: Correction,
                   upload_id: int = Path(ge=1, lt=2**62)) -> Response:  # fmt: skip
    """Correct the title, authors or abstract read from the file; the item is indexed again with them."""
    try:
        found = deps.uploads.correct(owner, upload_id, deps.jobs, fields.title, fields.authors, fields.abstract)
    except Refused as refused:
        return JSONResponse({"detail": str(refused)}, status_code=refused.status)
    if found is None:
        raise HTTPException(404, "no such item in your library")
    return _private(JSONResponse(UploadOut.of(found).model_dump(mode="json")))


@router.delete("/api/library/{upload_id:int}", status_code=204, tags=["library"],
               responses={**SIGNED_IN, **MISSING}, name="delete")
def delete_upload(deps: Deps, owner: LibraryWriter, upload_id: int = Path(ge=1, lt=2**62)) -> Response:
    """Remove the file, its row and its index points."""
    found = deps.uploads.get(owner, upload_id)
    if found is None:
        raise HTTPException(404, "no such item in your library")
    deps.uploads.delete(found, deps.archive.index)
    return Response(status_code=204)


# The signed-in user's library as pages, and their forms.
@router.get("/me/library", include_in_schema=False)
def library_page(request: Request, deps: Deps, owner: Viewer) -> Response:
    if not owner or deps.uploads is None:
        return not_found(request, deps, "Sign in to see your library.")
    limits = deps.upload_limits
    ids = deps.uploads.joined(owner)
    found = deps.archive.papers(ids)
    papers = [(pid, found[pid].title, paper_path(found[pid])) if pid in found else (pid, None, f"/papers/{pid}")
              for pid in ids]  # fmt: skip
    view = LibraryPage(owner, deps.uploads.mine(owner), deps.uploads.used_bytes(owner) / MB, limits.quota_mb,
                       limits.max_mb, papers)  # fmt: skip
    return _private(respond(request, deps, view, "my_library.html"))


@router.get("/me/library/{upload_id}", include_in_schema=False)
def upload_page(request: Request, deps: Deps, user: Viewer, upload_id: int) -> Response:
    found = deps.uploads.get(user, upload_id) if deps.uploads is not None else None
    if found is None:
        return not_found(request, deps, "No such item in your library.")
    if found.arxiv_id and not found.paper_id and (known := deps.archive.resolve_paper_id(found.arxiv_id)):
        deps.uploads.update(found.id, paper_id=known)  # the paper it names has arrived since (fetched on request)
        found = deps.uploads.get(found.owner, found.id)
    offer = found.arxiv_id if found.arxiv_id and not found.paper_id and deps.on_demand else None
    return _private(respond(request, deps, UploadPage(found), "my_upload.html", fetch_id=offer))


@router.post("/me/library/{upload_id}/edit", include_in_schema=False)
def correct_form(
    request: Request, deps: Deps, owner: Viewer, here: FromThisSite, upload_id: int,
    title: str = Form("", max_length=500), authors: str = Form("", max_length=20_000),
    abstract: str = Form("", max_length=5000),
) -> Response:  # fmt: skip
    if not here or not owner or deps.uploads is None or deps.jobs is None:
        return _refused()
    within_write_rate(deps, owner)
    names = [n.strip()[:200] for n in authors.splitlines() if n.strip()][:100]
    try:
        found = deps.uploads.correct(owner, upload_id, deps.jobs, title.strip() or None, names, abstract.strip())
    except Refused as refused:
        return Response(str(refused), status_code=refused.status, media_type="text/plain")
    if found is None:
        return not_found(request, deps, "No such item in your library.")
    return RedirectResponse(found.path, status_code=303)


@router.post("/me/library/{upload_id}/delete", include_in_schema=False)
def delete_form(request: Request, deps: Deps, user: Viewer, here: FromThisSite, upload_id: int) -> Response:
    if not here:
        return _refused()
    found = deps.uploads.get(user, upload_id) if deps.uploads is not None else None
    if found is None:
        return not_found(request, deps, "No such item in your library.")
    within_write_rate(deps, found.owner)
    deps.uploads.delete(found, deps.archive.index)
    return RedirectResponse(LIBRARY, status_code=303)
