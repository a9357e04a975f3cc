"""What every page route shares: the dependencies, markdown or HTML by the request, the 404 page, form origin."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from fastapi import Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response

from jobs.queue import JobQueue
from pages.base import PageMeta, md_escape
from retrieval.archive import Archive
from retrieval.library.uploads import UploadLimits, Uploads
from retrieval.scholarly.records import whole_number
from web.guards import RateLimiter
from web.render import PAGE_CSP, Renderer
from web.services import DigestLinks, FollowStore, TokenStore, ModelUseRow, ZoteroSetup

MARKDOWN = "text/markdown; charset=utf-8"
XML = "application/xml; charset=utf-8"


@dataclass(frozen=True)
class WebDeps:
    archive: Archive
    renderer: Renderer
    search_limit: int = 10
    viewer: Callable[[Request], str | None] = lambda _request: None  # the signed-in user, from the session
    follows: FollowStore | None = None  # auth.follows.Follows, when the app has users
    on_demand: bool = False  # signed-in users may fetch a paper that is not here from arXiv
    on_demand_daily: int = 20  # papers each user may ask for a day
    jobs: JobQueue | None = None  # when the app runs jobs
    is_admin: Callable[[str], bool] = lambda _user: False
    end_sessions: Callable[[str], None] | None = None  # sign a user out everywhere (auth.accounts.end_sessions)
    llm_status: Callable[[], str] = lambda: "no language model: the chat answers in retrieval-only mode"
    usage: Callable[[], list[ModelUseRow]] = lambda: []  # per user and day, newest first
    budget: str = "No daily token budget (SCHOLARLOOM_LLM_DAILY_TOKENS unset)."
    metrics: Callable[[], bytes] | None = None  # the server's counters in Prometheus's format (`/metrics`)
    metrics_token: str | None = None  # a scraper's bearer token for `/metrics` (SCHOLARLOOM_METRICS_TOKEN)
    uploads: Uploads | None = None  # when users may add their own PDFs
    upload_limits: UploadLimits = UploadLimits()
    zotero: ZoteroSetup | None = None  # users' Zotero libraries, when the app has users
    news: Callable[[str], int] | None = None  # a user's unread saved-question changes (the pages' badge)
    digests: DigestLinks | None = None  # jobs.digests.DigestPost: checks digest links; mails confirmations (`mail`)
    mail: bool = False  # an SMTP server is configured: users may ask for e-mail digests
    tokens: TokenStore | None = None  # auth.tokens.Tokens: personal API tokens, when the app has users
    sign: Callable[[str], str] | None = None  # a value's HMAC with the server's secret (`signer`): links for one user
    # Each user's writes to their library (uploads, imports, corrections, removals, papers asked for) a minute.
    writes: RateLimiter = field(default_factory=lambda: RateLimiter(per_minute=30))
    # The digest confirmations a user may have mailed to addresses they name, a minute.
    confirmations: RateLimiter = field(default_factory=lambda: RateLimiter(per_minute=2))


def signer(secret: str) -> Callable[[str], str]:
    """An HMAC-SHA256 of a value under a key derived from the server's secret, for a link only the user it was made
    for may follow (the page checks it again for the viewer)."""
    import hashlib
    import hmac

    key = hmac.new(secret.encode(), b"scholarloom page links", hashlib.sha256).digest()
    return lambda value: hmac.new(key, value.encode(), hashlib.sha256).hexdigest()[:32]


def page_number(value: str | None) -> int:
    """A page number from the address (`?page=`): 1 unless it is a whole number from 1 to 99,999."""
    number = whole_number(value)
    return number if number is not None and 0 < number < 100_000 else 1


def wants_markdown(request: Request) -> bool:
    return request.url.path.endswith(".md") or "text/markdown" in request.headers.get("accept", "")


def page_headers() -> dict[str, str]:
    return {"Content-Security-Policy": PAGE_CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"}


def respond(request: Request, deps: WebDeps, page, template: str, status: int = 200, **context) -> Response:
    headers = {**page_headers(), "Vary": "Accept"}
    if wants_markdown(request):
        return PlainTextResponse(page.to_markdown(), status_code=status, media_type=MARKDOWN, headers=headers)
    if "signed_in" not in context:  # the chat dock: the chat for a signed-in reader, else a way to sign in
        context["signed_in"] = bool(user := deps.viewer(request))
        if user and deps.news is not None:  # what the reader's saved questions found and they have not seen
            context.setdefault("news", deps.news(user))
    dock = Dock(getattr(page, "chat_path", "/chat"), getattr(page, "dock_label", ""))
    html = deps.renderer.html(template, page.meta(deps.renderer.base_url), page=page, dock=dock, **context)
    return HTMLResponse(html, status_code=status, headers=headers)


@dataclass(frozen=True)
class Dock:
    """The chat panel every page carries: the chat in a frame (our own /chat, scoped to the page's paper)."""

    path: str
    label: str  # "this paper", or "" for the chat at large


def not_found(request: Request, deps: WebDeps, message: str, fetch_id: str | None = None) -> Response:
    """The 404 page; for an arXiv id we do not have, with a button that fetches it (when the server allows)."""
    offer = fetch_id if fetch_id and deps.on_demand else None
    if wants_markdown(request):
        text = (
            f"# Not found\n\n{md_escape(message)}\n\nThe paper may not be harvested yet. Addresses: "
            "/papers/<arXiv id> (versions and old-style ids too), /researchers/<id>, "
            "/institutions/<id, ROR id or name>, /search?q=..., /chat\n"
        )
        if offer:
            text += f"\nSigned-in users can fetch {offer} from arXiv: POST /papers/request with id={offer}.\n"
        return PlainTextResponse(text, status_code=404, media_type=MARKDOWN, headers=page_headers())
    # "//evil.example/a" would become a protocol-relative link in the page's head: one leading slash only.
    meta = PageMeta(title="Not found", description=message, path="/" + request.url.path.lstrip("/"), noindex=True)
    html = deps.renderer.html(
        "not_found.html", meta, message=message, fetch_id=offer, signed_in=bool(deps.viewer(request))
    )
    return HTMLResponse(html, status_code=404, headers=page_headers())


def same_origin(request: Request) -> bool:
    """A form post from our own pages: its Origin (or Referer) names this host."""
    from urllib.parse import urlsplit

    source = request.headers.get("origin") or request.headers.get("referer") or ""
    return bool(source) and urlsplit(source).netloc == request.headers.get("host", "")
