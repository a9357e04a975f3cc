"""OpenAlex: enrich catalog papers by their arXiv DOI (10.48550/arXiv.<id>), and name the works they cite.

A paper OpenAlex answers for gains OpenAlex ids for the paper and its authors (with ORCIDs), institutions with
ROR ids, its referenced works (citation edges) and its cited-by count. The ledger stage `enrich:openalex`
remembers which papers were asked about, so reruns ask only about new papers (or all, with `refresh`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from sqlmodel import select

from ingest.http import PoliteClient
from ingest.indexing import batches
from ingest.parsers.openalex import (
    SOURCE,
    bare_doi,
    parse_authors,
    parse_institutions,
    parse_works,
    short_id,
    work_arxiv_id,
)
from ingest.pipeline import NullProgress, load_records
from ingest.report import Failure, Summary
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.citation_edges import describe_cited, resolve_citation_edges
from retrieval.scholarly.models import Citation, Institution, Paper, Researcher
from retrieval.scholarly.records import PaperRecord

STAGE = "enrich:openalex"
ABSENT = "absent"
BATCH = 50  # values in one OR filter; OpenAlex allows up to 100
MAX_PAGES = 20  # a batch of 50 DOIs never needs more; a guard against a cursor that never ends


def arxiv_doi(arxiv_id: str) -> str:
    return f"10.48550/arxiv.{arxiv_id}".lower()


class OpenAlex:
    """The few calls we make, with the polite-pool e-mail or the API key added to each."""

    def __init__(self, client: PoliteClient, base_url: str, email: str | None = None, api_key: str | None = None):
        self.client, self.base = client, base_url.rstrip("/")
        self.auth = {"mailto": email} if email else {}
        self.auth |= {"api_key": api_key} if api_key else {}

    def budget(self) -> dict | None:
        """The key's daily budget (`/rate-limit`), when an API key is set; None without one."""
        if "api_key" not in self.auth:
            return None
        payload = self.client.get(f"{self.base}/rate-limit", params={"api_key": self.auth["api_key"]}).json()
        return payload.get("rate_limit") if isinstance(payload, dict) else None

    def entities(self, kind: str, ids: list[str]) -> Iterator[dict]:
        """Authors or institutions by OpenAlex id, 50 a request."""
        for batch in batches(ids, BATCH):
            yield from self.list(kind, "openalex:" + "|".join(batch))

    def works(self, filter_: str, select_: str | None = None, per_page: int = BATCH) -> Iterator[dict]:
        return self.list("works", filter_, select_, per_page)

    def list(self, kind: str, filter_: str, select_: str | None = None, per_page: int = BATCH) -> Iterator[dict]:
        """Every result of a filter on works, authors or institutions, following `next_cursor` until it is
        null or a page is empty."""
        cursor = "*"
        for _ in range(MAX_PAGES):
            params = {"filter": filter_, "per-page": per_page, "cursor": cursor, **self.auth}
            if select_:
                params["select"] = select_
            payload = self.client.get(f"{self.base}/{kind}", params=params).json()
            results = payload.get("results") or []
            yield from results
            cursor = (payload.get("meta") or {}).get("next_cursor")
            if not cursor or not results:
                return


def enrich_from_openalex(
    catalog: Catalog,
    api: OpenAlex,
    summary: Summary,
    progress=None,
    *,
    refresh: bool = False,
    limit: int | None = None,
    only: Collection[str] | None = None,
) -> None:
    """Ask OpenAlex about every arXiv paper not asked about yet (`only` these papers), 50 DOIs a request."""
    progress = progress or NullProgress()
    asked = {} if refresh else catalog.ledger_hashes(STAGE)
    with catalog.session() as session:
        rows = session.exec(select(Paper.id, Paper.arxiv_id).where(Paper.arxiv_id.is_not(None)).order_by(Paper.id))
        todo = [(pid, aid) for pid, aid in rows if pid not in asked and (only is None or pid in only)][:limit]
    task = progress.add_task("OpenAlex: enrich papers", total=len(todo))
    for batch in batches(todo, BATCH):
        wanted = {arxiv_doi(aid): pid for pid, aid in batch}
        outcomes: list[PaperRecord | Failure] = []
        found: set[str] = set()
        works = list(api.works("doi:" + "|".join(f"https://doi.org/{d}" for d in wanted)))
        for outcome in parse_works(works, source="openalex"):
            if isinstance(outcome, Failure):
                outcomes.append(outcome)
                continue
            paper_id = wanted.get(arxiv_doi(outcome.arxiv_id)) if outcome.arxiv_id else None
            if paper_id is None:
                summary.fail(Failure(STAGE, outcome.openalex_id or "?", "an answer for a paper we did not ask about"))
                continue
            found.add(paper_id)
            outcomes.append(outcome.model_copy(update={"id": paper_id}))
        load_records(catalog, STAGE, outcomes, summary)
        missing = [pid for pid, _ in batch if pid not in found]
        catalog.mark_all(STAGE, dict.fromkeys(missing, ABSENT))
        summary.add("not found", len(missing))
        progress.advance(task, len(batch))


def name_references(catalog: Catalog, api: OpenAlex, summary: Summary, progress=None) -> None:
    """Fill title, DOI and arXiv id of cited works known only by their OpenAlex id (for reference lists)."""
    progress = progress or NullProgress()
    with catalog.session() as session:
        ids = sorted(
            set(
                session.exec(
                    select(Citation.cited_openalex_id).where(
                        Citation.cited_openalex_id.is_not(None), Citation.cited_title.is_(None)
                    )
                ).all()
            )
        )
    task = progress.add_task("OpenAlex: name cited works", total=len(ids))
    for batch in batches(ids, BATCH):
        details = {}
        for work in api.works("openalex:" + "|".join(batch), select_="id,doi,display_name,ids,publication_year"):
            if isinstance(work, dict) and work.get("id"):
                details[short_id(work["id"])] = work
        with catalog.session() as session:
            rows = session.exec(select(Citation).where(Citation.cited_openalex_id.in_(list(details)))).all()
            for row in rows:
                work = details[row.cited_openalex_id]
                describe_cited(row, doi=bare_doi(work.get("doi")), arxiv_id=work_arxiv_id(work),
                               title=work.get("display_name"), source=SOURCE)  # fmt: skip
                session.add(row)
            session.flush()
            # now named: matched by title, DOI, arXiv id
            resolve_citation_edges(session, {row.citing_id for row in rows})
            session.commit()
        summary.add("named", len(details))
        progress.advance(task, len(batch))


def enrich_entities(
    catalog: Catalog, api: OpenAlex, summary: Summary, progress=None, *, refresh: bool = False
) -> None:
    """Full OpenAlex records of the researchers and institutions that papers named by id only: ORCIDs,
    alternative names and last known institutions; institutions' place, type, acronyms and ROR ids."""
    progress = progress or NullProgress()
    for kind, model, stage, parse in (
        ("institutions", Institution, "enrich:openalex-institutions", parse_institutions),
        ("authors", Researcher, "enrich:openalex-authors", parse_authors),
    ):
        asked = {} if refresh else catalog.ledger_hashes(stage)
        with catalog.session() as session:
            ids = session.exec(select(model.openalex_id).where(model.openalex_id.is_not(None))).all()
        todo = sorted(i for i in ids if i not in asked)
        task = progress.add_task(f"OpenAlex: {kind}", total=len(todo))
        for batch in batches(todo, BATCH):
            wanted = set(batch)
            outcomes = [
                o for o in parse(list(api.entities(kind, batch))) if getattr(o, "openalex_id", None) in wanted
            ]  # an answer about something we did not ask for is ignored
            load_records(catalog, f"openalex:{kind}", outcomes, summary)
            got = {o.openalex_id for o in outcomes}
            # The ids asked about (the records themselves are keyed by ROR id or name).
            catalog.mark_all(stage, {asked: "found" if asked in got else ABSENT for asked in batch})
            progress.advance(task, len(batch))
