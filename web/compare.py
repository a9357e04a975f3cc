"""The comparison page's route: `/compare` as HTML or markdown, `/compare.csv` as a file (the page is
`pages.compare`)."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.responses import PlainTextResponse, Response

from pages.compare import build_compare_page
from web.dependencies import Deps, Guarded, Viewer
from web.http import page_headers, respond

CSV_TYPE = "text/csv; charset=utf-8"
router = APIRouter(route_class=Guarded)


@router.get("/compare", include_in_schema=False)
@router.get("/compare.md", include_in_schema=False)
@router.get("/compare.csv", include_in_schema=False)
def compare_page(
    request: Request, deps: Deps, user: Viewer, ids: str = Query("", max_length=2000),
    aspects: str = Query("", max_length=500),
) -> Response:  # fmt: skip
    asked = [i.strip() for i in ids.split(",") if i.strip()]
    named = aspects.split(",") if aspects.strip() else None
    page = build_compare_page(deps.archive, asked, named, signed_in=bool(user))
    if request.url.path.endswith(".csv"):
        return PlainTextResponse(page.to_csv(), media_type=CSV_TYPE, headers={
            **page_headers(), "Content-Disposition": 'attachment; filename="comparison.csv"'})  # fmt: skip
    return respond(request, deps, page, "compare.html")
