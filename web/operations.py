"""What operators and their tools read: `/readyz` (the stores and models answer) and `/metrics` (Prometheus's text
format, for an admin's session or the scraper's bearer token, SCHOLARLOOM_METRICS_TOKEN; anyone else gets 404).
`/healthz` (the process is alive) is the app's own."""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from web.dependencies import Deps, Guarded, MaybeAdmin
from web.http import WebDeps, not_found

PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8"
router = APIRouter(route_class=Guarded)


def readiness(deps: WebDeps) -> tuple[bool, dict]:
    """Whether every store the pages and the chat read answers now: the catalog, the vector index, the encoder's
    model files. Each check says what failed, never a trace."""
    checks: dict[str, str] = {}
    try:
        checks["catalog"] = f"{deps.archive.counts()['papers']} papers"
    except Exception as exc:  # the database is down or unreadable
        checks["catalog"] = f"failed: {type(exc).__name__}"
    try:
        checks["index"] = f"{sum(deps.archive.index_points().values())} points"
    except Exception as exc:
        checks["index"] = f"failed: {type(exc).__name__}"
    try:
        checks["models"] = deps.archive.embedder.model_id()
    except Exception as exc:  # the prepared model files are missing
        checks["models"] = f"failed: {type(exc).__name__}"
    return not any(v.startswith("failed") for v in checks.values()), checks


@router.get("/readyz", include_in_schema=False)
def ready(deps: Deps) -> JSONResponse:
    ok, checks = readiness(deps)
    return JSONResponse({"ready": ok, **checks}, status_code=200 if ok else 503)


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request, deps: Deps, admin: MaybeAdmin) -> Response:
    token = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    by_token = bool(deps.metrics_token) and hmac.compare_digest(token.encode(), deps.metrics_token.encode())
    if deps.metrics is None or not (by_token or admin):
        return not_found(request, deps, f"Nothing lives at {request.url.path}.")
    return Response(deps.metrics(), media_type=PROMETHEUS, headers={"Cache-Control": "no-store"})
