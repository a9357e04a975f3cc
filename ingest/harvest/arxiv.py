"""arXiv: the API (Atom, by query, category and date window, paged) and OAI-PMH (bulk, resumption tokens)."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import date, datetime, timezone

from ingest.http import FetchError, PoliteClient
from ingest.parsers.arxiv import atom_error, atom_total, parse_atom
from ingest.parsers.arxiv_oai import parse_oai
from ingest.pipeline import NullProgress, load_records
from ingest.report import Summary
from retrieval.scholarly.catalog import Catalog

log = logging.getLogger(__name__)
API_STAGE = "arxiv_api"
OAI_STAGE = "arxiv_oai"
EMPTY_PAGE_RETRIES = 3  # the API sometimes answers an empty page in the middle of a result set


@dataclass(frozen=True)
class ArxivQuery:
    """What to ask the arXiv API for: a query in its syntax, categories (any of), a submission date window."""

    query: str | None = None
    categories: tuple[str, ...] = ()
    since: date | None = None
    until: date | None = None

    def search_query(self) -> str:
        parts = []
        if self.query and self.query.strip():
            parts.append(f"({self.query.strip()})")
        if self.categories:
            parts.append("(" + " OR ".join(f"cat:{c}" for c in self.categories) + ")")
        if self.since or self.until:
            start = (self.since or date(1991, 1, 1)).strftime("%Y%m%d") + "0000"
            end = (self.until or datetime.now(timezone.utc).date()).strftime("%Y%m%d") + "2359"
            parts.append(f"submittedDate:[{start} TO {end}]")
        if not parts:
            raise ValueError("give a query, a category or a date window")
        return " AND ".join(parts)


def api_cursor_name(search_query: str) -> str:
    return "arxiv_api:" + hashlib.sha256(search_query.encode()).hexdigest()[:16]


def harvest_api(
    catalog: Catalog,
    client: PoliteClient,
    api_url: str,
    query: ArxivQuery,
    summary: Summary,
    progress=None,
    *,
    page_size: int = 100,
    limit: int | None = None,
) -> int:
    """Page through an API query, oldest submissions first, storing each page with the offset that follows it.

    An interrupted run resumes at the first page not stored; a finished query starts again from the top
    (unchanged records are recognised by the ledger and cost nothing). Returns the number of entries read.
    """
    progress = progress or NullProgress()
    search_query = query.search_query()
    name = api_cursor_name(search_query)
    state = catalog.cursor(name) or {}
    start = 0 if state.get("done") else int(state.get("start", 0))
    total = state.get("total")
    task = progress.add_task("arXiv API", total=total)
    progress.advance(task, start)
    read = empty = 0
    while total is None or start < total:
        if limit is not None and read >= limit:
            break
        size = page_size if limit is None else min(page_size, limit - read)
        outcomes, said_total = _api_page(client, api_url, search_query, start, size)
        total = said_total if said_total is not None else total
        progress.update(task, total=total)
        if not outcomes and total is not None and start < total:
            empty += 1
            if empty > EMPTY_PAGE_RETRIES:
                raise FetchError(
                    f"the arXiv API kept answering empty pages at offset {start} of {total}; "
                    "run the same command later to resume there"
                )
            log.info("empty page at %s of %s; asking again", start, total)
            continue
        empty = 0
        start += size
        done = not outcomes or (total is not None and start >= total)
        cursor = {"query": search_query, "start": start, "total": total, "done": done}
        load_records(catalog, API_STAGE, outcomes, summary, cursors={name: cursor})
        read += len(outcomes)
        progress.advance(task, len(outcomes))
        if done:
            break
    return read


def _api_page(client: PoliteClient, api_url: str, search_query: str, start: int, size: int) -> tuple[list, int | None]:
    """One page of an API query, oldest submissions first: its records (or failures) and the total it names."""
    params = {"search_query": search_query, "start": start, "max_results": size, "sortBy": "submittedDate",
              "sortOrder": "ascending"}  # fmt: skip
    response = client.get(api_url, params=params)
    if message := atom_error(response.content):
        raise FetchError(f"the arXiv API refused the query: {message}")
    return list(parse_atom(response.content)), atom_total(response.content)


def oai_cursor_name(prefix: str, set_spec: str | None, since: date | None, until: date | None) -> str:
    return f"arxiv_oai:{prefix}:{set_spec or '*'}:{since or ''}:{until or ''}"


def oai_last_name(set_spec: str | None) -> str:
    """Where the newest datestamp harvested for a set is kept (what `ingest update` starts from)."""
    return f"oai_last:{set_spec or '*'}"


def _oai_first(metadata_prefix: str, set_spec: str | None, since: date | None, until: date | None) -> dict:
    params = {"verb": "ListRecords", "metadataPrefix": metadata_prefix}
    params |= {"from": since.isoformat()} if since else {}
    params |= {"until": until.isoformat()} if until else {}
    return params | ({"set": set_spec} if set_spec else {})


def _raise_unless_empty(error: tuple[str, str]) -> None:
    """An OAI-PMH error answer: `noRecordsMatch` is an empty harvest; anything else fails the run."""
    code, message = error
    if code == "badResumptionToken":
        raise FetchError("the OAI-PMH resumption token expired; run the command again to restart the list")
    if code != "noRecordsMatch":
        raise FetchError(f"OAI-PMH error {code}: {message}")


def harvest_oai(
    catalog: Catalog,
    client: PoliteClient,
    oai_url: str,
    summary: Summary,
    progress=None,
    *,
    metadata_prefix: str = "arXiv",
    set_spec: str | None = None,
    since: date | None = None,
    until: date | None = None,
    limit: int | None = None,
) -> int:
    """ListRecords with resumption tokens; the token that follows a page is committed with its records.

    Deleted records are counted as skipped. An expired token (badResumptionToken) is forgotten, so the next
    run starts the list again; `noRecordsMatch` is an empty harvest, not an error. Returns records read.
    """
    if metadata_prefix not in ("arXiv", "arXivRaw"):
        raise ValueError("metadata format must be arXiv or arXivRaw")
    progress = progress or NullProgress()
    name = oai_cursor_name(metadata_prefix, set_spec, since, until)
    last_name = oai_last_name(set_spec)
    state = catalog.cursor(name) or {}
    token = state.get("token")
    newest = (catalog.cursor(last_name) or {}).get("datestamp")
    task = progress.add_task("arXiv OAI-PMH", total=state.get("size"))
    progress.advance(task, state.get("position", 0))
    read = 0
    while limit is None or read < limit:
        params = {"verb": "ListRecords", "resumptionToken": token} if token else _oai_first(
            metadata_prefix, set_spec, since, until
        )
        page = parse_oai(client.get(oai_url, params=params).content, OAI_STAGE)
        if page.error:
            if page.error[0] in ("noRecordsMatch", "badResumptionToken"):  # the list ends here, or starts again
                load_records(catalog, OAI_STAGE, [], summary, cursors={name: None})
            _raise_unless_empty(page.error)
            break
        if page.deleted:
            summary.add("skipped", len(page.deleted))
        if page.last_datestamp and (newest is None or page.last_datestamp > newest):
            newest = page.last_datestamp
        position = (page.cursor or 0) + len(page.records) + len(page.deleted)
        cursors = {
            name: {"token": page.token, "size": page.complete_size, "position": position} if page.token else None,
            last_name: {"datestamp": newest} if newest else None,
        }
        progress.update(task, total=page.complete_size)
        load_records(catalog, OAI_STAGE, page.records, summary, cursors=cursors)
        progress.advance(task, len(page.records) + len(page.deleted))
        read += len(page.records)
        token = page.token
        if not token:
            break
    return read
