"""The one FastAPI application: pages, health, and Chainlit mounted at /chat."""

from __future__ import annotations

import functools
import logging
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from auth.accounts import address_key, end_sessions, is_admin, session_is_live
from auth.follows import Follows
from auth.middleware import BearerTokens, ClientAddress, HideFeedKeys, RequestUser
from auth.sessions import signed_in_session
from auth.tokens import Tokens
from auth.usage import usage_by_user_and_day
from chatui.export import thread_markdown, thread_papers
from chatui.files import LocalFiles
from chatui.intent import ChatPaperIntent
from chatui.origin import ChatContentPolicy, ClosedRoutes, SameOriginSignIn, upload_limit
from chatui.busy import SignInTurns
from chatui.root import point_chainlit_at, prepare_chainlit_root
from chatui.tables import create_history_tables, user_key
from common.logs import RequestIds
from common.metrics import CountRequests
from retrieval.library.watches import Watches
from retrieval.library.zotero import Libraries
from scholarloom.runtime import Runtime
from scholarloom.settings import Settings
from web.api import make_api
from web.bodies import BodyLimits, body_caps
from web.cite import BIBTEX, bibtex, cited_papers
from web.dependencies import Viewer, routes_with
from web.guards import ExpensivePages, PrivatePages, PublicLimits, RateLimiter
from web.http import WebDeps, not_found, signer
from web.protocol import KnownMethods, describe_refusals, validation_error
from web.render import STATIC, Renderer
from web.routes import make_router
from web.services import ZoteroSetup

CHAT_HANDLERS = Path(__file__).resolve().parent / "chat.py"


def _viewer(settings: Settings, runtime: Runtime):
    """Who is signed in, for plain pages: the user of a valid personal API token (on `/api/*`, checked by
    `BearerTokens`), else the chat's session cookie, verified with our secret, naming an active account whose
    sessions have not been ended since; and the signer of links for one user. Without a usable secret nobody is
    signed in by cookie, and nothing is signed."""
    try:
        secret = settings.require_secret()
    except RuntimeError:
        return request_token_user, None

    def viewer(request: Request) -> str | None:
        if by_token := request_token_user(request):
            return by_token
        found = signed_in_session(request.cookies, secret)
        return found[0] if found and session_is_live(runtime.engine, *found) else None

    return viewer, signer(secret)


def request_token_user(request: Request) -> str | None:
    """The user whose valid API token the request carries (`auth.middleware.BearerTokens` put it there)."""
    return request.scope.get("state", {}).get("token_user")


def server_config(settings: Settings, application, **overrides):
    """How uvicorn serves the app: the client's address comes from X-Forwarded-For only when the request
    arrives from a trusted proxy (`forwarded_allow_ips`), so nobody else can pick the address they are
    throttled under."""
    import uvicorn

    options = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "log_config": None,  # uvicorn's loggers reach the root's handler (`common.logs`: the format, no secrets)
        "proxy_headers": True,
        "forwarded_allow_ips": settings.forwarded_allow_ips,
    }
    config = uvicorn.Config(application, **{**options, **overrides})
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, HideFeedKeys) for f in access.filters):  # private feed addresses stay out of logs
        access.addFilter(HideFeedKeys())
    return config


def build_web_deps(settings: Settings, runtime: Runtime) -> WebDeps:
    """The web layer's services, built from the settings and the runtime."""
    viewer, sign = _viewer(settings, runtime)
    budget = (f"Each user may use {settings.llm_daily_tokens:,} tokens a day (SCHOLARLOOM_LLM_DAILY_TOKENS)."
              if settings.llm_daily_tokens else WebDeps.budget)  # fmt: skip
    return WebDeps(
        runtime.archive,
        Renderer(settings.base_url),
        viewer=viewer,
        follows=Follows(runtime.engine),
        jobs=runtime.jobs,
        is_admin=lambda user: is_admin(runtime.engine, user),
        end_sessions=functools.partial(end_sessions, runtime.engine),
        on_demand=settings.on_demand == "signed-in",
        on_demand_daily=settings.on_demand_daily,
        llm_status=runtime.llm_status,
        usage=functools.partial(usage_by_user_and_day, runtime.engine),
        budget=budget,
        metrics=runtime.metrics.render,
        metrics_token=settings.metrics_token.get_secret_value() if settings.metrics_token else None,
        uploads=runtime.uploads,
        upload_limits=runtime.upload_limits,
        sign=sign,
        tokens=Tokens(runtime.engine),
        news=Watches(runtime.engine).unread,
        digests=settings.digest_post(mailing=bool(settings.smtp_host)),
        mail=bool(settings.smtp_host),
        zotero=ZoteroSetup(Libraries(runtime.engine), settings.sealer(), local=bool(settings.sources.zotero_local_url)),
    )


def create_app(settings: Settings, runtime: Runtime | None = None, with_chat: bool = True) -> FastAPI:
    runtime = runtime or Runtime.build(settings)
    create_history_tables(runtime.engine)
    deps = build_web_deps(settings, runtime)
    app = FastAPI(
        title="ScholarLoom",
        description="Papers, researchers and institutions, woven together: browse, search and chat with research papers.",
        version="0.1.0",
    )
    app.state.runtime = runtime
    _middlewares(app, settings, runtime, deps, with_chat)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    app.include_router(_health_and_files(settings, runtime, deps, with_chat))
    _mcp(app, settings, runtime)
    app.include_router(make_router(deps))
    app.include_router(make_api(deps))
    app.add_exception_handler(RequestValidationError, validation_error)  # never echoes the request's input
    describe_refusals(app)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 404 and not request.url.path.startswith("/api/"):
            return not_found(request, deps, f"Nothing lives at {request.url.path[:200]}.")
        from fastapi.exception_handlers import http_exception_handler

        return await http_exception_handler(request, exc)

    if with_chat:
        _mount_chat(app, settings, runtime)
    return app


def _middlewares(app: FastAPI, settings: Settings, runtime: Runtime, deps: WebDeps, with_chat: bool) -> None:
    """Every middleware, the outermost last."""
    app.add_middleware(ClientAddress)
    app.add_middleware(SameOriginSignIn)
    app.add_middleware(ClosedRoutes)
    app.add_middleware(ChatPaperIntent)
    app.add_middleware(ExpensivePages, limits=PublicLimits(per_minute=settings.public_rate),
                       generation=lambda: runtime.archive.index.writes)  # fmt: skip
    app.add_middleware(PrivatePages)  # (outside the memory of anonymous answers: each replay is marked too)
    app.add_middleware(BearerTokens, check=Tokens(runtime.engine).check, throttle=runtime.throttle,
                       address_key=address_key,
                       limit=RateLimiter(settings.token_rate).take if settings.token_rate else None)  # fmt: skip
    # Outside the token checks, so nothing reads a body over its route's cap (`web.bodies`), signed in or not, and
    # a method no route has is a 405, not a token's scope refusal.
    app.add_middleware(BodyLimits, caps=body_caps(settings.upload_limits(), upload_limit if with_chat else lambda: 0))
    app.add_middleware(KnownMethods, router=app.router)
    app.add_middleware(CountRequests, metrics=runtime.metrics)
    app.add_middleware(RequestIds)  # the outermost: every log line of a request carries its id


def _mcp(app: FastAPI, settings: Settings, runtime: Runtime) -> None:
    """The MCP server at /mcp (`assistant.mcp_server`), for requests with a personal API token; its session manager
    runs for the app's lifetime. Its calls take turns per user (`settings.mcp`), counted in /metrics."""
    from contextlib import asynccontextmanager

    from starlette.routing import Route

    from assistant.mcp_server import McpEndpoint, build_server, token_user
    from common.admission import Admission

    library = runtime.uploads.library_ids if runtime.uploads is not None else None
    app.state.mcp_admission = admission = Admission("mcp", settings.mcp, noun="call")
    runtime.metrics.watch(admission)
    endpoint = McpEndpoint(build_server(runtime.archive, settings.base_url, token_user, library, admission))
    app.router.routes.append(Route("/mcp", endpoint=endpoint, methods=list(endpoint.methods)))
    before = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application):
        async with endpoint.running(), before(application) as state:
            yield state

    app.router.lifespan_context = lifespan


def chat_origins(settings: Settings) -> list[str]:
    """The origins the chat is served at: the public URL and the address it listens on."""
    return sorted({settings.base_url, f"http://{settings.host}:{settings.port}"})


def prepare_chat_root(settings: Settings) -> Path:
    """Chainlit's root in the data directory, configured from the settings (origins, session lifetime)."""
    lifetime = int(settings.session_hours * 3600)
    return prepare_chainlit_root(settings.data_dir / "chainlit", chat_origins(settings), lifetime)


def _health_and_files(settings: Settings, runtime: Runtime, deps: WebDeps, with_chat: bool) -> APIRouter:
    """`/healthz` (the process answers; the stores are `/readyz`'s), and the chat's files for their owner."""
    router = routes_with(deps)

    @router.get("/healthz", include_in_schema=False)
    def health() -> dict:
        answer = {"status": "ok", "llm": bool(settings.llm)}
        if with_chat:  # failed chat-history writes since start (each is also logged as an error)
            from chainlit.data import get_data_layer

            layer = get_data_layer()
            answer["history_write_failures"] = len(getattr(layer, "failures", []))
        return answer

    if with_chat:
        _thread_files(router, settings, runtime)
    files = LocalFiles(settings.chat_files_dir)

    @router.get(LocalFiles.URL_PREFIX + "{key:path}", include_in_schema=False)
    def chat_file(key: str, user: Viewer):
        """A file of a chat element, only for the user whose Chainlit id starts its key; anyone else gets the
        same 404 as for a file that does not exist. Always a download, never rendered by the browser."""
        path = files.path_of(key)
        if not user or path is None or key.split("/")[0] != user_key(runtime.engine, user) or not path.is_file():
            return PlainTextResponse("Not found", status_code=404)
        return FileResponse(
            path,
            media_type="application/octet-stream",
            headers={"Content-Disposition": "attachment", "X-Content-Type-Options": "nosniff"},
        )

    return router


def _thread_files(router: APIRouter, settings: Settings, runtime: Runtime) -> None:
    """A signed-in user's conversation as markdown, and the papers it showed as BibTeX."""

    @router.get("/me/threads/{thread_id}.md", include_in_schema=False)
    async def thread_export(thread_id: str, user: Viewer):
        """A conversation as markdown, for its owner; the same 404 for anyone else and for no such thread."""
        from chainlit.data import get_data_layer

        text = await thread_markdown(get_data_layer(), thread_id, user, settings.base_url)
        if text is None:
            return PlainTextResponse("Not found", status_code=404)
        headers = {"Content-Disposition": f'attachment; filename="conversation-{thread_id[:36]}.md"'}
        return PlainTextResponse(text, media_type="text/markdown; charset=utf-8", headers=headers)

    @router.get("/me/threads/{thread_id}.bib", include_in_schema=False)
    async def thread_reading_list(thread_id: str, user: Viewer):
        """The papers a conversation's answers showed, as one BibTeX file (a reading list), for its owner."""
        from chainlit.data import get_data_layer

        ids = await thread_papers(get_data_layer(), thread_id, user)
        if ids is None:
            return PlainTextResponse("Not found", status_code=404)
        text = bibtex(cited_papers(runtime.archive, ids))
        headers = {"Content-Disposition": f'attachment; filename="reading-list-{thread_id[:36]}.bib"'}
        return Response(text, media_type=BIBTEX, headers=headers)


def _mount_chat(app: FastAPI, settings: Settings, runtime: Runtime) -> None:
    """Chainlit at /chat, its handlers (`scholarloom/chat.py`) finding the runtime on Chainlit's own app."""
    secret = settings.require_secret()
    live = functools.partial(session_is_live, runtime.engine)
    app.add_middleware(RequestUser, secret=secret, live=live)
    app.add_middleware(SignInTurns, turns=lambda: runtime.sign_ins)  # (inside SameOriginSignIn: refused first)
    app.add_middleware(ChatContentPolicy)
    point_chainlit_at(prepare_chat_root(settings))
    import chainlit.server
    from chainlit.utils import mount_chainlit

    from chatui import patches

    patches.apply(secret, live, origins=chat_origins(settings), secure_cookies=settings.base_url.startswith("https:"))
    chainlit.server.app.state.runtime = runtime
    from chatui.attachments import configure_chat_uploads

    configure_chat_uploads(settings.upload_max_mb, enabled=settings.upload_quota_mb > 0)
    from chatui.assets import chat_assets_route

    chat_assets_route(app, Path(chainlit.server.build_dir) / "assets")  # compressed once, ahead of Chainlit's route
    mount_chainlit(app, target=str(CHAT_HANDLERS), path="/chat")
