"""The search page's route: an arXiv id we hold goes to its page; words go to the one search, the researchers and
the institution the query names shown above the papers."""

from __future__ import annotations

import re
from datetime import date

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse, Response

from pages.base import institution_path, paper_path, researcher_path
from pages.search import NamedResult, build_search_page
from retrieval.archive import Archive
from retrieval.scholarly.records import arxiv_id_of
from retrieval.search.hybrid import SearchResult
from retrieval.vectors.index import Filters
from web.dependencies import Deps, Guarded, Viewer
from web.http import page_number, respond

MAX_SEARCH_PAGES = 20
router = APIRouter(route_class=Guarded)


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


def _named_matches(archive: Archive, query: str, named: tuple[int, ...]) -> tuple[list, list]:
    """The researchers the query names (whose papers the results put first; namesakes apart) or whose name it is,
    and the institution it names, shown above the papers."""
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


@router.get("/search", include_in_schema=False)
def search_papers_page(
    request: Request,
    deps: Deps,
    user: Viewer,
    q: str = Query("", max_length=2000),
    category: str = Query("", max_length=40),
    after: str = Query("", max_length=10),
    before: str = Query("", max_length=10),
) -> Response:
    at = min(page_number(request.query_params.get("page")), MAX_SEARCH_PAGES)
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
                          viewer=user)  # signed in: the reader's own uploads too
        result = deps.archive.search(q, filters, limit=deps.search_limit * at + 1, sentences=1)
        if at == 1:
            researchers, institutions = _named_matches(deps.archive, q, result.people)
    else:  # the bare search page
        result = SearchResult("", [])
    authors = deps.archive.author_names([h.paper.id for h in result.hits])
    page = build_search_page(
        result, authors, deps.search_limit, at, researchers=researchers, institutions=institutions, **extra
    )
    offer = asked_id if asked_id and deps.on_demand else None
    return respond(request, deps, page, "search.html", query=page.query, fetch_id=offer, signed_in=bool(user))
