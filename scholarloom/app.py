"""The one FastAPI application: pages, health, and Chainlit mounted at /chat."""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from auth.accounts import is_active
from auth.follows import Follows
from auth.sessions import signed_in_user
from pages.api import make_api
from pages.render import STATIC, Renderer
from pages.web import PagesDeps, make_router, not_found
from scholarloom.history import LocalFiles, create_history_tables, hide_foreign_threads, request_user, user_key
from scholarloom.runtime import Runtime, client_address, install
from scholarloom.settings import Settings

PACKAGE_DIR = Path(__file__).resolve().parent
WELCOME = PACKAGE_DIR.parent / "chainlit.md"


def prepare_chainlit_root(settings: Settings) -> Path:
    """Chainlit reads its config and writes its files under one root: ours lives in the data directory."""
    root = settings.data_dir / "chainlit"
    (root / ".chainlit").mkdir(parents=True, exist_ok=True)
    config = (PACKAGE_DIR / "chainlit" / "config.toml").read_text()
    origins = sorted({settings.base_url, f"http://{settings.host}:{settings.port}"})
    config = config.replace(
        'allow_origins = ["http://127.0.0.1:8000", "http://localhost:8000"]', f"allow_origins = {json.dumps(origins)}"
    ).replace(
        "user_session_timeout = 604800  # 7 days",
        f"user_session_timeout = {int(settings.session_hours * 3600)}  # SCHOLARLOOM_SESSION_HOURS",
    )
    (root / ".chainlit" / "config.toml").write_text(config)
    if WELCOME.exists():
        shutil.copyfile(WELCOME, root / "chainlit.md")
        shutil.copyfile(WELCOME, root / "chainlit_en-US.md")  # what English browsers ask for first
    shutil.copytree(PACKAGE_DIR / "chainlit" / "public", root / "public", dirs_exist_ok=True)  # our logos
    return root


class ClientAddress:
    """Pure ASGI middleware: remembers the client's address for sign-in throttling."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket") and scope.get("client"):
            token = client_address.set(scope["client"][0])
            try:
                return await self.app(scope, receive, send)
            finally:
                client_address.reset(token)
        return await self.app(scope, receive, send)


class RequestUser:
    """Pure ASGI middleware: the signed-in user of an HTTP request (session cookie verified with our secret), for
    the chat-history rules Chainlit's routes leave to the data layer (`scholarloom.history.request_user`)."""

    def __init__(self, app, secret: str) -> None:
        self.app = app
        self.secret = secret

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        from http.cookies import SimpleCookie

        jar = SimpleCookie()
        try:
            jar.load(next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"cookie"), ""))
        except Exception:  # a malformed Cookie header: nobody
            jar = SimpleCookie()
        token = request_user.set(signed_in_user({k: m.value for k, m in jar.items()}, self.secret))
        try:
            return await self.app(scope, receive, send)
        finally:
            request_user.reset(token)


CHAT_PAPER_COOKIE = "scholarloom_chat_paper"


class ChatPaperIntent:
    """Pure ASGI middleware: opening `/chat?paper=<id>` leaves a short-lived cookie naming the paper and a
    one-time nonce, so the intent survives the sign-in page (whose redirect drops the query); opening `/chat`
    without a paper forgets it. The chat uses the nonce once (`scholarloom.chat`)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET" or scope.get("path") not in ("/chat", "/chat/"):
            return await self.app(scope, receive, send)
        from urllib.parse import parse_qs, quote

        wanted = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("paper") or [""])[0][:200]
        if wanted:
            value = f"{secrets.token_urlsafe(12)}.{quote(wanted, safe='')}"
            cookie = f"{CHAT_PAPER_COOKIE}={value}; Max-Age=900; Path=/; HttpOnly; SameSite=Lax"
        else:
            cookie = f"{CHAT_PAPER_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax"

        async def with_cookie(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie.encode())]}
            await send(message)

        return await self.app(scope, receive, with_cookie)


def _viewer(settings: Settings, runtime: Runtime):
    """Who is signed in, for plain pages: the chat's session cookie, verified with our secret, naming an active
    account. Without a usable secret nobody is."""
    try:
        secret = settings.require_secret()
    except RuntimeError:
        return lambda _request: None

    def viewer(request: Request) -> str | None:
        user = signed_in_user(request.cookies, secret)
        return user if user and is_active(runtime.catalog.engine, user) else None

    return viewer


def server_config(settings: Settings, application, **overrides):
    """How uvicorn serves the app: the client's address comes from X-Forwarded-For only when the request
    arrives from a trusted proxy (`forwarded_allow_ips`), so nobody else can pick the address they are
    throttled under."""
    import uvicorn

    options = {
        "host": settings.host,
        "port": settings.port,
        "log_level": "warning",
        "proxy_headers": True,
        "forwarded_allow_ips": settings.forwarded_allow_ips,
    }
    return uvicorn.Config(application, **{**options, **overrides})


def create_app(settings: Settings, runtime: Runtime | None = None, with_chat: bool = True) -> FastAPI:
    runtime = runtime or Runtime.build(settings)
    install(runtime)
    create_history_tables(runtime.catalog.engine)
    viewer = _viewer(settings, runtime)
    deps = PagesDeps(
        runtime.catalog,
        runtime.index,
        runtime.embedder,
        Renderer(settings.base_url),
        viewer=viewer,
        follows=Follows(runtime.catalog.engine),
    )
    app = FastAPI(
        title="ScholarLoom",
        description="Papers, researchers and institutions, woven together: browse, search and chat with research papers.",
        version="0.1.0",
    )
    app.add_middleware(ClientAddress)
    app.add_middleware(ChatPaperIntent)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/healthz", include_in_schema=False)
    def health() -> dict:
        answer = {"status": "ok", "papers": runtime.catalog.counts()["papers"], "llm": bool(settings.llm)}
        if with_chat:  # failed chat-history writes since start (each is also logged as an error)
            from chainlit.data import get_data_layer

            layer = get_data_layer()
            answer["history_write_failures"] = len(getattr(layer, "failures", []))
        return answer

    files = LocalFiles(settings.chat_files_dir)

    @app.get(LocalFiles.URL_PREFIX + "{key:path}", include_in_schema=False)
    def chat_file(key: str, request: Request):
        """A file of a chat element, only for the user whose Chainlit id starts its key; anyone else gets the
        same 404 as for a file that does not exist. Always a download, never rendered by the browser."""
        user = viewer(request)
        path = files.path_of(key)
        if (
            not user
            or path is None
            or key.split("/")[0] != user_key(runtime.catalog.engine, user)
            or not path.is_file()
        ):
            return PlainTextResponse("Not found", status_code=404)
        return FileResponse(
            path,
            media_type="application/octet-stream",
            headers={"Content-Disposition": "attachment", "X-Content-Type-Options": "nosniff"},
        )

    app.include_router(make_router(deps))
    app.include_router(make_api(deps))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 404 and not request.url.path.startswith("/api/"):
            return not_found(request, deps, f"Nothing lives at {request.url.path[:200]}.")
        from fastapi.exception_handlers import http_exception_handler

        return await http_exception_handler(request, exc)

    if with_chat:
        app.add_middleware(RequestUser, secret=settings.require_secret())
        # Chainlit reads these when it is first imported, so they are set before the import.
        os.environ["CHAINLIT_AUTH_SECRET"] = settings.require_secret()
        os.environ["CHAINLIT_APP_ROOT"] = str(prepare_chainlit_root(settings))
        from chainlit.utils import mount_chainlit

        mount_chainlit(app, target=str(PACKAGE_DIR / "chat.py"), path="/chat")
        hide_foreign_threads()
    return app
