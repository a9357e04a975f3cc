"""`/me/tokens`: a signed-in user's personal API tokens (`auth.tokens`, reached through `WebDeps.tokens`): make
one (shown once), see each one's name, scope, last use and expiry, revoke it. `/admin/tokens`: an admin sees every
user's and may revoke any. A token never opens these pages: they read the session cookie only (`BearerTokens` acts
on /api/ and /mcp)."""

from __future__ import annotations

from dataclasses import dataclass

from collections.abc import Callable, Iterable
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response

from pages.base import PageMeta, md_escape
from retrieval.scholarly.models import shown
from web.dependencies import Deps, FromThisSite, Guarded, MaybeAdmin, admin_user, form_user, page_user, refused_form
from web.http import WebDeps, not_found, page_headers, respond
from web.services import TokenRow

DAYS = (("", "never (until revoked)"), ("30", "30 days"), ("90", "90 days"), ("365", "a year"))


@dataclass(frozen=True)
class TokenListing:
    """A token as a listing shows it."""

    id: int
    username: str
    name: str
    prefix: str
    scope: str
    created: str
    expires: str
    last_used: str
    state: str  # live, expired, revoked (by whom)
    live: bool


def token_rows(tokens: Iterable[TokenRow], live: Callable[[TokenRow], bool]) -> list[TokenListing]:
    """The rows of a token listing; `live(token)` says whether one still works."""
    rows = []
    for t in tokens:
        state = "live" if live(t) else f"revoked by {t.revoked_by or 'its owner'}" if t.revoked_at else "expired"
        rows.append(TokenListing(t.id, t.username, t.name, t.prefix, t.scope, shown(t.created_at, ""),
                             shown(t.expires_at), shown(t.last_used_at), state, state == "live"))
    return rows


@dataclass(frozen=True)
class TokensPage:
    """A user's tokens (or every user's, for an admin), and a token just made: its only showing."""

    rows: list[TokenListing]
    base_url: str
    scopes: dict[str, str]  # what a token may do: name -> what it means
    fresh: str | None = None  # the token just made, shown this once
    fresh_name: str = ""
    error: str = ""
    admin: bool = False
    path: str = "/me/tokens"

    @property
    def days(self) -> tuple:
        return DAYS

    def meta(self, base_url: str) -> PageMeta:
        title = "Every API token" if self.admin else "API tokens"
        return PageMeta(title=title, description="Personal API tokens for scripts and MCP clients.", path=self.path,
                        noindex=True)  # fmt: skip

    def to_markdown(self) -> str:
        lines = [f"# {'Every API token' if self.admin else 'API tokens'}", ""]
        if self.error:
            lines += [f"**Not made:** {md_escape(self.error)}", ""]
        if self.fresh:
            lines += [f"New token **{md_escape(self.fresh_name)}** (copy it now: it is not shown again):", "",
                      f"    {self.fresh}", ""]  # fmt: skip
        if not self.admin:
            lines += [f"Send a token as `Authorization: Bearer <token>` to {self.base_url}/api/... or to the MCP "
                      f"server at {self.base_url}/mcp.", ""]  # fmt: skip
        if not self.rows:
            lines.append("No token yet.")
            return "\n".join(lines) + "\n"
        owner = "user | " if self.admin else ""
        lines += [f"| {owner}name | token | scope | made | expires | last used | state |",
                  f"| {'--- | ' if self.admin else ''}--- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
        for r in self.rows:
            who = f"{md_escape(r.username)} | " if self.admin else ""
            lines.append(f"| {who}{md_escape(r.name)} | {r.prefix}... | {r.scope} | {r.created} | {r.expires} | "
                         f"{r.last_used} | {md_escape(r.state)} |")  # fmt: skip
        return "\n".join(lines) + "\n"


# The account page's tokens, and the admins' list of every token.
router = APIRouter(route_class=Guarded)


def _offered(deps: WebDeps) -> bool:
    return deps.tokens is not None  # the server has users


TokenOwner = Annotated[str, Depends(page_user(_offered))]
TokenForm = Annotated[str, Depends(form_user(_offered))]
TokensAdmin = Annotated[str, Depends(admin_user(_offered))]
TOO_MANY = "You made or revoked too many tokens this minute: wait a moment."


def _listing(request: Request, deps: WebDeps, user: str, status: int = 200, **fields) -> Response:
    rows = token_rows(deps.tokens.of(user), deps.tokens.live)
    listing = TokensPage(rows, deps.renderer.base_url, deps.tokens.scopes, **fields)
    response = respond(request, deps, listing, "tokens.html", status)
    response.headers["Cache-Control"] = "private, no-store"
    return response


@router.get("/me/tokens", include_in_schema=False)
@router.get("/me/tokens.md", include_in_schema=False)
def own_tokens(request: Request, deps: Deps, user: TokenOwner) -> Response:
    return _listing(request, deps, user)


@router.post("/me/tokens", include_in_schema=False)
def make_token(request: Request, deps: Deps, user: TokenForm, name: str = Form("", max_length=200),
               days: str = Form("", max_length=4), scope: str = Form("read", max_length=20)) -> Response:  # fmt: skip
    """(A plain function: FastAPI reads the form, then runs it in a thread, away from the event loop.)"""
    if wait := deps.writes.take(user):
        response = _listing(request, deps, user, 429, error=TOO_MANY)
        response.headers["Retry-After"] = str(max(1, round(wait)))
        return response
    try:
        row, token = deps.tokens.create(user, name, int(days) if days.isdigit() else None, scope)
    except ValueError as error:  # (auth.tokens.TokenError: what to change)
        return _listing(request, deps, user, 400, error=str(error))
    return _listing(request, deps, user, 201, fresh=token, fresh_name=row.name)


@router.post("/me/tokens/{token_id}/revoke", include_in_schema=False)
def revoke_own_token(request: Request, deps: Deps, user: TokenForm, token_id: int) -> Response:
    if wait := deps.writes.take(user):
        return PlainTextResponse(TOO_MANY, status_code=429,
                                 headers={**page_headers(), "Retry-After": str(max(1, round(wait)))})  # fmt: skip
    if not 0 < token_id < 2**62 or deps.tokens.revoke(token_id, by=user) is None:
        return not_found(request, deps, "No such token of yours.")
    return RedirectResponse("/me/tokens", status_code=303)


@router.get("/admin/tokens", include_in_schema=False)
@router.get("/admin/tokens.md", include_in_schema=False)
def every_token(request: Request, deps: Deps, _admin: TokensAdmin) -> Response:
    listing = TokensPage(token_rows(deps.tokens.of(None), deps.tokens.live), deps.renderer.base_url,
                         deps.tokens.scopes, admin=True, path="/admin/tokens")  # fmt: skip
    response = respond(request, deps, listing, "tokens.html")
    response.headers["Cache-Control"] = "private, no-store"
    return response


@router.post("/admin/tokens/{token_id}/revoke", include_in_schema=False)
def revoke_any_token(request: Request, deps: Deps, user: MaybeAdmin, here: FromThisSite, token_id: int) -> Response:
    if user is None or deps.tokens is None or not 0 < token_id < 2**62:
        return not_found(request, deps, f"Nothing lives at {request.url.path}.")
    if not here:
        return refused_form()
    if deps.tokens.revoke(token_id, by=user, admin=True) is None:
        return not_found(request, deps, "No such token.")
    return RedirectResponse("/admin/tokens", status_code=303)
