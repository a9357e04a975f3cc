"""What every route answers alike (issue 66, finding 10): `OPTIONS` with every method its path has, 405 for a method
it has not (before any token is looked at: a `TRACE` is not a question of scope), validation errors that never echo
the request (a body may not even be text), and the refusals the middlewares add, in /openapi.json."""

from __future__ import annotations

import json

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.routing import Match, Router

from web.guards import EXPENSIVE


METHODS = ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")  # what a route of ours may take


def _answered(routes, scope, method: str) -> bool:
    """Whether a route takes `method` at the request's path (asked through each route's own `matches`, as the
    router does: FastAPI keeps included routers nested). A copy of the scope: matching marks it."""
    probe = {k: v for k, v in scope.items() if k != "fastapi"} | {"method": method}
    return any(route.matches(dict(probe))[0] is Match.FULL for route in routes)


def allowed_methods(router: Router, scope) -> set[str] | None:
    """The methods the routes at this path take; None when the request's own method is taken, when a mounted app
    (Chainlit's, the static files') decides for itself, or when no route is at the path (the router's 404 stands)."""
    routes = router.routes
    if _answered(routes, scope, scope["method"]) or _answered(routes, scope, "NO SUCH METHOD"):
        return None
    return {method for method in METHODS if _answered(routes, scope, method)} or None


class KnownMethods:
    """Pure ASGI middleware: `OPTIONS` is answered 204 with `Allow` (every method of every route at the path), and a
    method no route at the path has gets 405 with the same `Allow`, before `BearerTokens` looks at a token (so it
    is added outside it). Starlette alone answers 405 with the methods of the first route that matched only."""

    def __init__(self, app, router: Router) -> None:
        self.app = app
        self.router = router

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or (methods := allowed_methods(self.router, scope)) is None:
            return await self.app(scope, receive, send)
        allow = ", ".join(sorted(methods | {"OPTIONS"})).encode()
        if scope["method"] == "OPTIONS":
            await send({"type": "http.response.start", "status": 204, "headers": [(b"allow", allow)]})
            return await send({"type": "http.response.body", "body": b""})
        text = f"{scope['method'][:20]} is not a method of this address; it takes {allow.decode()}."
        path = scope.get("path", "")
        if path.startswith("/api/") or path == "/mcp":
            body, kind = json.dumps({"detail": text}).encode(), b"application/json"
        else:
            body, kind = text.encode(), b"text/plain; charset=utf-8"
        headers = [(b"allow", allow), (b"content-type", kind), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 405, "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 saying where and what (FastAPI's `loc`, `msg`, `type`), never the input: FastAPI's own answer echoes it,
    and bytes that are not UTF-8 made that answer a 500 with a traceback."""
    errors = [{"loc": [p if isinstance(p, int) else str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", "")),
               "type": str(e.get("type", ""))} for e in exc.errors()]  # fmt: skip
    return JSONResponse({"detail": errors}, status_code=422)


REFUSAL = {"type": "object", "properties": {"detail": {"type": "string"}}, "required": ["detail"]}
# What the middlewares answer on `/api/` besides the routes' own words (`auth.middleware.BearerTokens`,
# `web.bodies.BodyLimits`, `web.guards.ExpensivePages`).
ANY_OPERATION = {
    401: "The personal API token is unknown, revoked or expired",
    413: "The request's body is larger than this route takes (`web.bodies`)",
    429: "Too many requests: the token's rate a minute, or unknown tokens from this address; wait Retry-After "
         "seconds",  # fmt: skip
}
WRITES = {403: "The token's scope does not let it write here"}
EXPENSIVE_ONES = {429: "Too many searches from this address, or the token's rate; wait Retry-After seconds",
                  503: "The server is busy with other searches; try again in a moment"}  # fmt: skip


def describe_refusals(app: FastAPI) -> None:
    """/openapi.json lists, for every operation under `/api/`, each refusal a middleware may answer it with (an
    operation's own description of a status stands)."""
    build = app.openapi

    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = build()
            schema.setdefault("components", {}).setdefault("schemas", {})["Refusal"] = REFUSAL
            for path, operations in schema.get("paths", {}).items():
                if path.startswith("/api/"):
                    for method, operation in operations.items():
                        _refusals(operation, path, method.upper())
        return app.openapi_schema

    app.openapi = openapi


def _refusals(operation: dict, path: str, method: str) -> None:
    statuses = {**ANY_OPERATION, **(WRITES if method not in ("GET", "HEAD") else {}),
                **(EXPENSIVE_ONES if path in EXPENSIVE else {})}  # fmt: skip
    if "application/json" in operation.get("requestBody", {}).get("content", {}):
        statuses[400] = "The body could not be read as JSON (it is not UTF-8 text)"  # FastAPI's own answer
    content = {"application/json": {"schema": {"$ref": "#/components/schemas/Refusal"}}}
    for status, description in statuses.items():
        operation.setdefault("responses", {}).setdefault(str(status), {"description": description,
                                                                       "content": content})  # fmt: skip
