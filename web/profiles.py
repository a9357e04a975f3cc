"""The researcher and institution pages' routes: the canonical address (an id and its slug; an institution also by
its ROR id or name), a page of their papers, maybe of one category."""

from __future__ import annotations

import re
from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from pages.people import MATCHING_NOTE, institution_page, researcher_page
from retrieval.scholarly.affiliations import MatchedBy
from web.dependencies import Deps, Guarded, Viewer
from web.http import WebDeps, not_found, page_number, respond

router = APIRouter(route_class=Guarded)


def _profile(request: Request, deps: WebDeps, address: str, kind: str, build, template: str,
             resolve: Callable[[str], int | None] | None = None, **context) -> Response:  # fmt: skip
    markdown_suffix = address.endswith(".md")
    bare = address.removesuffix(".md")
    leading = re.match(r"^(\d{1,12})(?:-|$)", bare)
    number = int(leading.group(1)) if leading else resolve(bare) if resolve else None
    at = page_number(request.query_params.get("page"))
    category = (request.query_params.get("category") or "")[:40] or None
    page = build(deps.archive, number, at, category) if number is not None else None
    if page is None:
        return not_found(request, deps, f"No {kind} with the address /{kind}s/{address[:200]} in this archive.")
    if f"/{kind}s/{bare}" != page.path:
        query = f"?{request.url.query}" if request.url.query else ""
        return RedirectResponse(page.path + (".md" if markdown_suffix else "") + query, status_code=301)
    return respond(request, deps, page, template, **context)


@router.get("/researchers/{address:path}", include_in_schema=False)
def researcher(request: Request, deps: Deps, user: Viewer, address: str) -> Response:
    leading = re.match(r"^(\d{1,12})", address)
    following = bool(user and deps.follows and leading and int(leading.group(1)) in deps.follows.followed(user))
    return _profile(
        request, deps, address, "researcher", researcher_page, "researcher.html",
        matching_note=MATCHING_NOTE, viewer=user, following=following,
    )  # fmt: skip


@router.get("/institutions/{address:path}", include_in_schema=False)
def institution(request: Request, deps: Deps, address: str) -> Response:
    def number(text: str) -> int | None:
        found = deps.archive.find_institution(text.replace("-", " ") if not text.startswith("0") else text)
        return found.institution.id if found.institution is not None and found.how is not MatchedBy.WORDS else None

    return _profile(request, deps, address, "institution", institution_page, "institution.html", number)
