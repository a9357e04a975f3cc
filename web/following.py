"""Signed-in users follow researchers and read what they published since (a page and a private feed); and the
account's forms beside them: a new feed key, every session ended."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response

from pages.following import following_page
from pages.people import researcher_page
from web.dependencies import Deps, FromThisSite, Guarded, Viewer, form_user, page_user, refused_form
from web.feeds import rss_of
from web.http import not_found, page_headers, respond
from web.watching import changed_paper_ids

router = APIRouter(route_class=Guarded)
Follower = Annotated[str, Depends(page_user(lambda deps: deps.follows is not None))]
FollowerForm = Annotated[str, Depends(form_user(lambda deps: deps.follows is not None))]
SessionsForm = Annotated[str, Depends(form_user(lambda deps: deps.end_sessions is not None))]


@router.post("/researchers/{researcher_id}/{action}", include_in_schema=False)
def follow_researcher(request: Request, deps: Deps, user: Viewer, here: FromThisSite, researcher_id: int,
           action: str) -> Response:  # fmt: skip
    page = researcher_page(deps.archive, researcher_id) if 0 < researcher_id < 2**62 else None
    if action not in ("follow", "unfollow") or page is None:
        return not_found(request, deps, "No such researcher.")
    if user is None or deps.follows is None:
        return PlainTextResponse("Sign in to follow researchers.", status_code=401, headers=page_headers())
    if not here:
        return refused_form()
    (deps.follows.follow if action == "follow" else deps.follows.unfollow)(user, researcher_id)
    return RedirectResponse(page.path, status_code=303)


@router.get("/me/following", include_in_schema=False)
@router.get("/me/following.md", include_in_schema=False)
def followed(request: Request, deps: Deps, user: Follower) -> Response:
    page = following_page(deps.archive, deps.follows.followed(user), deps.follows.feed_key(user))
    return respond(request, deps, page, "following.html")


@router.post("/me/feed-key", include_in_schema=False)
def rotate_feed_key(deps: Deps, user: FollowerForm) -> Response:
    deps.follows.rotate(user)
    return RedirectResponse("/me/following", status_code=303)


@router.post("/me/sign-out-everywhere", include_in_schema=False)
def sign_out_everywhere(request: Request, deps: Deps, user: SessionsForm) -> Response:
    """Every session of the user ends (this browser's too), wherever it was opened."""
    deps.end_sessions(user)
    response = RedirectResponse("/chat/login", status_code=303)
    for name in request.cookies:
        if name == "access_token" or name.startswith("access_token_"):
            response.delete_cookie(name, httponly=True, samesite="lax")
    return response


@router.get("/me/feed.xml", include_in_schema=False)
def private_feed(deps: Deps, key: str = Query("", max_length=100)) -> Response:
    user = deps.follows.user_for_key(key) if deps.follows else None
    if user is None:
        return PlainTextResponse("Unknown feed address.", status_code=404)
    papers = deps.archive.newest_papers_of(deps.follows.followed(user))
    if deps.uploads is not None:  # and what the user's saved questions found lately, first
        found = deps.archive.papers(changed_paper_ids(deps, user))
        papers = [*found.values(), *(p for p in papers if p.id not in found)]
    base = deps.renderer.base_url
    body = rss_of(deps.archive, base, papers, "ScholarLoom: new for your saved questions and the researchers you "
                  "follow", base + "/me/following", f"{base}/me/feed.xml")  # fmt: skip
    return Response(body, media_type="application/rss+xml; charset=utf-8", headers={"Cache-Control": "private"})
