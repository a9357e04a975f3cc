"""Web routes for the browsing pages: HTML for browsers, markdown for agents (Accept or .md)."""

from __future__ import annotations

import re

from fastapi import APIRouter, Query, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response

from retrieval.archive import Archive
from retrieval.scholarly.affiliations import MatchedBy
from retrieval.scholarly.records import arxiv_id_of, whole_number
from retrieval.search.hybrid import SearchResult
from retrieval.vectors.index import Filters
from web.about import TEXT_PAGES
from web.addresses import paper_path, split_paper_address
from web.admin import admin_routes
from web.cite import FORMATS, citation, citations
from web.compare import compare_routes
from web.feeds import llms_txt, rss, rss_of, sitemap, sitemap_part
from web.following import following_page
from web.home import home_page, papers_page
from web.http import MARKDOWN, XML, WebDeps, not_found, page_headers, respond, same_origin
from web.library import library_routes
from web.library_import import import_routes
from web.lists import list_page
from web.operations import operations_routes
from web.paper import paper_page
from web.people import MATCHING_NOTE, institution_page, researcher_page
from web.requests import request_routes
from web.search_page import build_search_page
from web.tokens import token_routes
from web.watching import changed_paper_ids, watching_routes
from web.zotero import zotero_routes

MAX_SEARCH_PAGES = 20


def _day(text: str):
    from datetime import date

    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


def _named_matches(archive: Archive, query: str, named: tuple[int, ...]) -> tuple[list, list]:
    """The researchers the query names (whose papers the results put first; namesakes apart) or whose name it is,
    and the institution it names, shown above the papers."""
    from web.addresses import institution_path, researcher_path
    from web.search_page import NamedResult

    # (full names only: the people the query names by initials or first and last name are in `named`; a scan for
    # partial names would cost most of a second per search at three million researchers)
    found = archive.researcher_candidates(named) + archive.find_researchers(query, limit=5, partial=False)
    unique = list({c.researcher.id: c for c in found}.values())[:5]
    def detail(c) -> str:
        parts = [f"{c.paper_count} paper{'s' if c.paper_count != 1 else ''}"]
        return ", ".join(parts + [c.fields[0][0]] * bool(c.fields) + c.institutions[:1])

    people = [
        NamedResult(c.researcher.name, researcher_path(c.researcher.id, c.researcher.name), detail(c)) for c in unique
    ]
    found = archive.find_institution(query, threshold=0.9)
    places = []
    if found.institution is not None and found.how.certain:
        i = found.institution
        places.append(
            NamedResult(i.name, institution_path(i.id, i.name), ", ".join(x for x in (i.city, i.country_name) if x))
        )
    return people, places


def _positive(value: str | None) -> int:
    number = whole_number(value)
    return number if number is not None and 0 < number < 100_000 else 1


def make_router(deps: WebDeps) -> APIRouter:
    """Every page route, in the order they are matched."""
    router = APIRouter()
    for add in (request_routes, _home_and_papers, _lists_and_feeds, _people, _following, _search, compare_routes,
                admin_routes, operations_routes, import_routes, zotero_routes, library_routes, token_routes,
                watching_routes):
        add(router, deps)
    return router


def _home_and_papers(router: APIRouter, deps: WebDeps) -> None:
    @router.get("/", include_in_schema=False)
    def home(request: Request) -> Response:
        return respond(request, deps, home_page(deps.archive), "home.html")

    @router.get("/papers", include_in_schema=False)
    @router.get("/papers.md", include_in_schema=False)
    def papers(
        request: Request, category: str = Query("", max_length=40), after: str = Query("", max_length=100),
        before: str = Query("", max_length=100),
    ) -> Response:  # fmt: skip
        category = category if re.fullmatch(r"[A-Za-z.-]*", category) else ""
        number = _positive(request.query_params.get("page"))
        page = papers_page(deps.archive, category or None, number, after.strip() or None, before.strip() or None)
        return respond(request, deps, page, "papers.html")

    for path, text_page in TEXT_PAGES.items():
        router.add_api_route(path, _text_route(deps, text_page), methods=["GET"], include_in_schema=False)
        router.add_api_route(path + ".md", _text_route(deps, text_page), methods=["GET"], include_in_schema=False)

    @router.get("/cite.{kind}", include_in_schema=False)
    def cite_many(kind: str, ids: str = Query("", max_length=4000)) -> Response:
        if kind not in FORMATS:
            return PlainTextResponse("Not found.\n", status_code=404, headers=page_headers())
        return citations(deps, ids.split(","), kind)

    @router.get("/papers/{address:path}", include_in_schema=False)
    def paper(request: Request, address: str) -> Response:
        if address.endswith((".bib", ".ris", ".json")):
            return citation(deps, address)
        markdown_suffix = address.endswith(".md")
        parts = split_paper_address(address.removesuffix(".md"))
        page = paper_page(deps.archive, parts[0]) if parts else None
        if page is None:
            message = f"No paper with the address /papers/{address[:200]} in this archive."
            return not_found(request, deps, message, fetch_id=arxiv_id_of(parts[0]) if parts else None)
        if f"/papers/{address.removesuffix('.md')}" != page.path:
            return RedirectResponse(page.path + (".md" if markdown_suffix else ""), status_code=301)
        return respond(request, deps, page, "paper.html", on_demand=bool(deps.on_demand and deps.jobs is not None))


def _text_route(deps: WebDeps, page):
    def text_page(request: Request) -> Response:
        return respond(request, deps, page, "text.html")

    return text_page


def _lists_and_feeds(router: APIRouter, deps: WebDeps) -> None:
    @router.get("/researchers", include_in_schema=False)
    @router.get("/researchers.md", include_in_schema=False)
    def researchers(request: Request, q: str = Query("", max_length=200)) -> Response:
        page = list_page(deps.archive, "researchers", _positive(request.query_params.get("page")), q)
        return respond(request, deps, page, "list.html")

    @router.get("/institutions", include_in_schema=False)
    @router.get("/institutions.md", include_in_schema=False)
    def institutions(request: Request, q: str = Query("", max_length=200)) -> Response:
        page = list_page(deps.archive, "institutions", _positive(request.query_params.get("page")), q)
        return respond(request, deps, page, "list.html")

    @router.get("/sitemap.xml", include_in_schema=False)
    def sitemap_xml() -> Response:
        return Response(sitemap(deps.archive, deps.renderer.base_url), media_type=XML)

    @router.get("/sitemaps/{name}", include_in_schema=False)
    def sitemap_part_xml(request: Request, name: str) -> Response:
        body = sitemap_part(deps.archive, deps.renderer.base_url, name)
        if body is None:
            return not_found(request, deps, f"No sitemap part {name[:100]}.")
        return Response(body, media_type=XML)

    @router.get("/rss/{name}", include_in_schema=False)
    def rss_xml(request: Request, name: str) -> Response:
        category = name.removesuffix(".xml")
        if not name.endswith(".xml") or not re.fullmatch(r"[A-Za-z-]+(\.[A-Za-z-]+)?", category):
            return not_found(request, deps, f"No feed {name[:100]}.")
        body = rss(deps.archive, deps.renderer.base_url, None if category == "latest" else category)
        return Response(body, media_type="application/rss+xml; charset=utf-8")

    @router.get("/llms.txt", include_in_schema=False)
    def llms() -> Response:
        return PlainTextResponse(llms_txt(deps.archive, deps.renderer.base_url), media_type=MARKDOWN)


def _people(router: APIRouter, deps: WebDeps) -> None:
    def profile(request: Request, address: str, kind: str, build, template: str, resolve=None, **context):
        markdown_suffix = address.endswith(".md")
        bare = address.removesuffix(".md")
        leading = re.match(r"^(\d{1,12})(?:-|$)", bare)
        number = int(leading.group(1)) if leading else resolve(bare) if resolve else None
        page_number = _positive(request.query_params.get("page"))
        category = (request.query_params.get("category") or "")[:40] or None
        page = build(deps.archive, number, page_number, category) if number is not None else None
        if page is None:
            return not_found(request, deps, f"No {kind} with the address /{kind}s/{address[:200]} in this archive.")
        if f"/{kind}s/{bare}" != page.path:
            query = f"?{request.url.query}" if request.url.query else ""
            return RedirectResponse(page.path + (".md" if markdown_suffix else "") + query, status_code=301)
        return respond(request, deps, page, template, **context)

    @router.get("/researchers/{address:path}", include_in_schema=False)
    def researcher(request: Request, address: str) -> Response:
        user = deps.viewer(request)
        leading = re.match(r"^(\d{1,12})", address)
        following = bool(user and deps.follows and leading and int(leading.group(1)) in deps.follows.followed(user))
        return profile(
            request, address, "researcher", researcher_page, "researcher.html",
            matching_note=MATCHING_NOTE, viewer=user, following=following,
        )  # fmt: skip

    def institution_number(text: str) -> int | None:
        found = deps.archive.find_institution(text.replace("-", " ") if not text.startswith("0") else text)
        return found.institution.id if found.institution is not None and found.how is not MatchedBy.WORDS else None

    @router.get("/institutions/{address:path}", include_in_schema=False)
    def institution(request: Request, address: str) -> Response:
        return profile(request, address, "institution", institution_page, "institution.html", institution_number)


def _following(router: APIRouter, deps: WebDeps) -> None:
    """Signed-in users follow researchers, and read what they published since (a page and a private feed)."""

    @router.post("/researchers/{researcher_id}/{action}", include_in_schema=False)
    def follow(request: Request, researcher_id: int, action: str) -> Response:
        user = deps.viewer(request)
        page = researcher_page(deps.archive, researcher_id) if 0 < researcher_id < 2**62 else None
        if action not in ("follow", "unfollow") or page is None:
            return not_found(request, deps, "No such researcher.")
        if user is None or deps.follows is None:
            return PlainTextResponse("Sign in to follow researchers.", status_code=401, headers=page_headers())
        if not same_origin(request):
            return PlainTextResponse("Refused: the form did not come from this site.", status_code=403)
        (deps.follows.follow if action == "follow" else deps.follows.unfollow)(user, researcher_id)
        return RedirectResponse(page.path, status_code=303)

    @router.get("/me/following", include_in_schema=False)
    @router.get("/me/following.md", include_in_schema=False)
    def following(request: Request) -> Response:
        user = deps.viewer(request)
        if user is None or deps.follows is None:
            return RedirectResponse("/chat/login", status_code=303)
        page = following_page(deps.archive, deps.follows.followed(user), deps.follows.feed_key(user))
        return respond(request, deps, page, "following.html")

    @router.post("/me/feed-key", include_in_schema=False)
    def rotate_feed_key(request: Request) -> Response:
        user, refused = _own_form(request, deps, deps.follows is not None)
        if refused:
            return refused
        deps.follows.rotate(user)
        return RedirectResponse("/me/following", status_code=303)

    @router.post("/me/sign-out-everywhere", include_in_schema=False)
    def sign_out_everywhere(request: Request) -> Response:
        """Every session of the user ends (this browser's too), wherever it was opened."""
        user, refused = _own_form(request, deps, deps.end_sessions is not None)
        if refused:
            return refused
        deps.end_sessions(user)
        response = RedirectResponse("/chat/login", status_code=303)
        for name in request.cookies:
            if name == "access_token" or name.startswith("access_token_"):
                response.delete_cookie(name, httponly=True, samesite="lax")
        return response

    @router.get("/me/feed.xml", include_in_schema=False)
    def private_feed(request: Request, key: str = Query("", max_length=100)) -> Response:
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


def _own_form(request: Request, deps: WebDeps, available: bool) -> tuple[str | None, Response | None]:
    """The signed-in user of a form posted from this site, or the answer that refuses it."""
    user = deps.viewer(request)
    if user is None or not available:
        return None, PlainTextResponse("Sign in first.", status_code=401, headers=page_headers())
    if not same_origin(request):
        return None, PlainTextResponse("Refused: the form did not come from this site.", status_code=403)
    return user, None


def _search(router: APIRouter, deps: WebDeps) -> None:
    @router.get("/search", include_in_schema=False)
    def search_page(
        request: Request,
        q: str = Query("", max_length=2000),
        category: str = Query("", max_length=40),
        after: str = Query("", max_length=10),
        before: str = Query("", max_length=10),
    ) -> Response:
        page_number = min(_positive(request.query_params.get("page")), MAX_SEARCH_PAGES)
        category = category if re.fullmatch(r"[A-Za-z.-]*", category) else ""
        start, end = _day(after), _day(before)
        extra = {"category": category, "after": start.isoformat() if start else "",
                 "before": end.isoformat() if end else ""}  # fmt: skip
        researchers, institutions = [], []
        asked_id = arxiv_id_of(q)
        if asked_id and (known := deps.archive.resolve_paper_id(asked_id)):  # an id we have: its page
            return RedirectResponse(paper_path(deps.archive.papers([known])[known]), status_code=303)
        if q.strip():
            filters = Filters(categories=(category,) if category else (), published_from=start, published_to=end,
                              viewer=deps.viewer(request))  # signed in: the reader's own uploads too
            limit = deps.search_limit * page_number + 1
            result = deps.archive.search(q, filters, limit=limit, sentences=1)
            if page_number == 1:
                researchers, institutions = _named_matches(deps.archive, q, result.people)
        else:  # the bare search page
            result = SearchResult("", [])
        authors = deps.archive.author_names([h.paper.id for h in result.hits])
        page = build_search_page(
            result, authors, deps.search_limit, page_number, researchers=researchers, institutions=institutions, **extra
        )
        offer = asked_id if asked_id and deps.on_demand else None
        return respond(request, deps, page, "search.html", query=page.query, fetch_id=offer,
                       signed_in=bool(deps.viewer(request)))  # fmt: skip

