"""The browsing pages' routes: HTML for browsers, markdown for agents (Accept or .md); and `make_router`, every page
route of the web layer in the order they are matched."""

from __future__ import annotations

import re

from fastapi import APIRouter, Query, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response

from pages.about import TEXT_PAGES
from pages.base import split_paper_address
from pages.listings import home_page, list_page, papers_page
from pages.paper import paper_page
from retrieval.scholarly.records import arxiv_id_of
from web import admin, compare, digests, following, library, library_import, operations, profiles, requests, search
from web import tokens, watching, zotero
from web.cite import FORMATS, citation, citations
from web.dependencies import Deps, Guarded, routes_with
from web.feeds import llms_txt, rss, sitemap, sitemap_part
from web.http import MARKDOWN, XML, WebDeps, not_found, page_headers, page_number, respond

router = APIRouter(route_class=Guarded)


def make_router(deps: WebDeps) -> APIRouter:
    """Every page route, in the order they are matched, each handed `deps`."""
    every = routes_with(deps)
    for module_router in (requests.router, router, profiles.router, following.router, search.router, compare.router,
                          admin.router, operations.router, library_import.router, zotero.router, library.router,
                          tokens.router, digests.router, watching.router):  # fmt: skip
        every.include_router(module_router)
    return every


@router.get("/", include_in_schema=False)
def home(request: Request, deps: Deps) -> Response:
    return respond(request, deps, home_page(deps.archive), "home.html")


@router.get("/papers", include_in_schema=False)
@router.get("/papers.md", include_in_schema=False)
def every_paper(
    request: Request, deps: Deps, category: str = Query("", max_length=40), after: str = Query("", max_length=100),
    before: str = Query("", max_length=100),
) -> Response:  # fmt: skip
    category = category if re.fullmatch(r"[A-Za-z.-]*", category) else ""
    number = page_number(request.query_params.get("page"))
    page = papers_page(deps.archive, category or None, number, after.strip() or None, before.strip() or None)
    return respond(request, deps, page, "papers.html")


def text_page(request: Request, deps: Deps) -> Response:
    """About, Privacy, Developers (each also at `.md`)."""
    return respond(request, deps, TEXT_PAGES[request.url.path.removesuffix(".md")], "text.html")


for _path in TEXT_PAGES:
    router.add_api_route(_path, text_page, methods=["GET"], include_in_schema=False)
    router.add_api_route(_path + ".md", text_page, methods=["GET"], include_in_schema=False)


@router.get("/cite.{kind}", include_in_schema=False)
def cite_many(deps: Deps, kind: str, ids: str = Query("", max_length=4000)) -> Response:
    if kind not in FORMATS:
        return PlainTextResponse("Not found.\n", status_code=404, headers=page_headers())
    return citations(deps, ids.split(","), kind)


@router.get("/papers/{address:path}", include_in_schema=False)
def paper(request: Request, deps: Deps, address: str) -> Response:
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


@router.get("/researchers", include_in_schema=False)
@router.get("/researchers.md", include_in_schema=False)
def researchers(request: Request, deps: Deps, q: str = Query("", max_length=200)) -> Response:
    page = list_page(deps.archive, "researchers", page_number(request.query_params.get("page")), q)
    return respond(request, deps, page, "list.html")


@router.get("/institutions", include_in_schema=False)
@router.get("/institutions.md", include_in_schema=False)
def institutions(request: Request, deps: Deps, q: str = Query("", max_length=200)) -> Response:
    page = list_page(deps.archive, "institutions", page_number(request.query_params.get("page")), q)
    return respond(request, deps, page, "list.html")


@router.get("/sitemap.xml", include_in_schema=False)
def sitemap_xml(deps: Deps) -> Response:
    return Response(sitemap(deps.archive, deps.renderer.base_url), media_type=XML)


@router.get("/sitemaps/{name}", include_in_schema=False)
def sitemap_part_xml(request: Request, deps: Deps, name: str) -> Response:
    body = sitemap_part(deps.archive, deps.renderer.base_url, name)
    if body is None:
        return not_found(request, deps, f"No sitemap part {name[:100]}.")
    return Response(body, media_type=XML)


@router.get("/rss/{name}", include_in_schema=False)
def rss_xml(request: Request, deps: Deps, name: str) -> Response:
    category = name.removesuffix(".xml")
    if not name.endswith(".xml") or not re.fullmatch(r"[A-Za-z-]+(\.[A-Za-z-]+)?", category):
        return not_found(request, deps, f"No feed {name[:100]}.")
    body = rss(deps.archive, deps.renderer.base_url, None if category == "latest" else category)
    return Response(body, media_type="application/rss+xml; charset=utf-8")


@router.get("/llms.txt", include_in_schema=False)
def llms(deps: Deps) -> Response:
    return PlainTextResponse(llms_txt(deps.archive, deps.renderer.base_url), media_type=MARKDOWN)
