"""What a route asks for in its signature: the web layer's services (`Deps`), who is reading (`Viewer`), whether a
form came from our own pages (`FromThisSite`), and the guards, each written once: a page for the signed-in reader
(`page_user`), a form of theirs (`form_user`), an admin's page (`admin_user`). A guard that refuses raises `Refusal`
with the answer the route gave by hand before (a redirect, 401, 403 or the 404 page); `Guarded` routes return it.

The services reach module-level routes through the request: `routes_with(deps)` makes a router whose every route
first puts them on `request.state` (`web_deps` reads them there), so any app, the server's or a test's, that
includes it needs nothing else."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response
from fastapi.routing import APIRoute

from web.http import WebDeps, not_found, page_headers, same_origin

Available = Callable[[WebDeps], bool]  # whether this server offers what a route serves (users, jobs, Zotero...)
NOT_FROM_HERE = "Refused: the form did not come from this site."


class Refusal(Exception):
    """A guard's answer instead of the route's."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


class Guarded(APIRoute):
    """A route whose guards may answer for it (`Refusal`)."""

    def get_route_handler(self):
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except Refusal as refusal:
                return refusal.response

        return guarded


def routes_with(deps: WebDeps) -> APIRouter:
    """A router that hands `deps` to each route it includes (through `request.state`)."""

    async def provide(request: Request) -> None:  # (async: an attribute set, no reason to take a thread)
        request.state.web_deps = deps

    return APIRouter(dependencies=[Depends(provide)], route_class=Guarded)


async def web_deps(request: Request) -> WebDeps:
    return request.state.web_deps


Deps = Annotated[WebDeps, Depends(web_deps)]


def viewer(request: Request, deps: Deps) -> str | None:
    """The signed-in user, or None (a plain function: the session's check reads the database, in a thread)."""
    return deps.viewer(request)


def from_this_site(request: Request) -> bool:
    return same_origin(request)


Viewer = Annotated[str | None, Depends(viewer)]
FromThisSite = Annotated[bool, Depends(from_this_site)]


def refused_form() -> Response:
    """The answer to a form posted from another site."""
    return PlainTextResponse(NOT_FROM_HERE, status_code=403)


def page_user(available: Available = lambda _deps: True) -> Callable[..., str]:
    """A page of the signed-in reader's own: anyone else is sent to sign in."""

    def reader(deps: Deps, user: Viewer) -> str:
        if user is None or not available(deps):
            raise Refusal(RedirectResponse("/chat/login", status_code=303))
        return user

    return reader


def form_user(available: Available = lambda _deps: True) -> Callable[..., str]:
    """A form of the signed-in reader's, posted from our own pages: 401 for nobody, 403 from another site."""

    def writer(deps: Deps, user: Viewer, here: FromThisSite) -> str:
        if user is None or not available(deps):
            raise Refusal(PlainTextResponse("Sign in first.", status_code=401, headers=page_headers()))
        if not here:
            raise Refusal(refused_form())
        return user

    return writer


def admin_viewer(deps: Deps, user: Viewer) -> str | None:
    """The reader when they are an admin, else None."""
    return user if user and deps.is_admin(user) else None


MaybeAdmin = Annotated[str | None, Depends(admin_viewer)]


def admin_user(available: Available = lambda _deps: True) -> Callable[..., str]:
    """An admin's page: anyone else gets the 404 page (nothing to learn here)."""

    def admin(request: Request, deps: Deps, user: MaybeAdmin) -> str:
        if user is None or not available(deps):
            raise Refusal(not_found(request, deps, f"Nothing lives at {request.url.path}."))
        return user

    return admin
