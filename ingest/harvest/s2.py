"""Semantic Scholar Graph API: papers by `ARXIV:<id>` (batch endpoint), their authors and their references.

A paper Semantic Scholar knows gains its S2 paper id, author ids (researcher identity), a citation count
when we have none, and its references as citation edges (by arXiv id or DOI when S2 has them). The ledger
stage `enrich:s2` remembers which papers were asked about.
"""

from __future__ import annotations

from datetime import datetime, timezone
from urllib.parse import quote

from sqlmodel import select

from ingest.http import FetchError, PoliteClient
from ingest.indexing import batches
from ingest.parsers.common import attempt
from ingest.pipeline import NullProgress, load_records
from ingest.report import Failure, Summary
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.citation_edges import add_citation, resolve_citation_edges
from retrieval.scholarly.models import Paper
from retrieval.scholarly.records import AuthorRecord, PaperRecord, ReferenceRecord, split_arxiv_version

STAGE = "enrich:s2"
SOURCE = "s2"
ABSENT = "absent"
BATCH = 100  # the batch endpoint takes up to 500 ids
PAPER_FIELDS = "paperId,externalIds,title,abstract,year,publicationDate,venue,citationCount,authors"
REFERENCE_FIELDS = "externalIds,title"
REFERENCE_PAGE = 100
MAX_REFERENCES = 1000


class SemanticScholar:
    def __init__(self, client: PoliteClient, base_url: str, api_key: str | None = None):
        self.client, self.base = client, base_url.rstrip("/")
        self.headers = {"x-api-key": api_key} if api_key else {}

    def papers(self, ids: list[str]) -> list[dict | None]:
        """One answer per id, in order; None where S2 does not know the paper."""
        answer = self.client.post_json(
            f"{self.base}/graph/v1/paper/batch", {"ids": ids}, params={"fields": PAPER_FIELDS}, headers=self.headers
        ).json()
        if not isinstance(answer, list) or len(answer) != len(ids):
            raise FetchError(f"Semantic Scholar answered {type(answer).__name__} for {len(ids)} ids")
        return answer

    def references(self, paper_id: str) -> list[dict] | None:
        """The works a paper cites (`citedPaper` objects), following `next`; None for a 404."""
        return self._edges(paper_id, "references", "citedPaper")

    def citations(self, paper_id: str) -> list[dict] | None:
        """The works that cite a paper (`citingPaper` objects), following `next`; None for a 404."""
        return self._edges(paper_id, "citations", "citingPaper")

    def _edges(self, paper_id: str, kind: str, key: str) -> list[dict] | None:
        found: list[dict] = []
        offset = 0
        while offset is not None and offset < MAX_REFERENCES:
            try:
                page = self.client.get(
                    f"{self.base}/graph/v1/paper/{quote(paper_id, safe=':')}/{kind}",
                    params={"fields": REFERENCE_FIELDS, "offset": offset, "limit": REFERENCE_PAGE},
                    headers=self.headers,
                ).json()
            except FetchError as exc:
                if exc.status == 404:
                    return None
                raise
            found += [item[key] for item in page.get("data") or [] if isinstance(item.get(key), dict)]
            offset = int(page["next"]) if page.get("next") not in (None, "") else None
        return found


def s2_record(paper: dict, paper_id: str, arxiv_id: str | None, references: list[dict]) -> PaperRecord:
    ids = paper.get("externalIds") or {}
    doi = (ids.get("DOI") or "").lower() or None
    published = None
    if paper.get("publicationDate"):
        published = datetime.fromisoformat(paper["publicationDate"]).replace(tzinfo=timezone.utc)
    refs = []
    for cited in references:
        cited_ids = cited.get("externalIds") or {}
        cited_arxiv = split_arxiv_version(cited_ids["ArXiv"])[0] if cited_ids.get("ArXiv") else None
        cited_doi = (cited_ids.get("DOI") or "").lower() or None
        if cited_arxiv or cited_doi:
            refs.append(ReferenceRecord(arxiv_id=cited_arxiv, doi=cited_doi, title=cited.get("title")))
    return PaperRecord(
        id=paper_id,
        arxiv_id=arxiv_id,
        doi=None if doi and doi.startswith("10.48550/") else doi,
        title=paper["title"],
        abstract=paper.get("abstract") or "",
        authors=[AuthorRecord(name=a["name"], s2_id=a.get("authorId")) for a in paper.get("authors") or []],
        published=published,
        year=paper.get("year"),
        venue=paper.get("venue") or None,
        cited_by_count=paper.get("citationCount"),
        references=refs,
        source=SOURCE,
    )


def _matches(paper: dict, arxiv_id: str | None, doi: str | None) -> bool:
    ids = paper.get("externalIds") or {}
    if arxiv_id and ids.get("ArXiv"):
        return split_arxiv_version(ids["ArXiv"])[0] == arxiv_id
    return bool(doi) and (ids.get("DOI") or "").lower() == doi.lower()


def enrich_from_s2(
    catalog: Catalog,
    api: SemanticScholar,
    summary: Summary,
    progress=None,
    *,
    refresh: bool = False,
    references: bool = True,
    limit: int | None = None,
    citations: bool = False,
) -> None:
    """Ask S2 about papers not asked about yet: arXiv papers by `ARXIV:<id>`, others by `DOI:<doi>`.
    With `citations`, the papers citing each one are fetched too, and those in the corpus become edges."""
    progress = progress or NullProgress()
    asked = {} if refresh else catalog.ledger_hashes(STAGE)
    with catalog.session() as session:
        rows = session.exec(select(Paper.id, Paper.arxiv_id, Paper.doi).order_by(Paper.id)).all()
    todo = [r for r in rows if r[0] not in asked and (r[1] or r[2])][:limit]
    task = progress.add_task("Semantic Scholar: enrich papers", total=len(todo))
    for batch in batches(todo, BATCH):
        request = [f"ARXIV:{aid}" if aid else f"DOI:{doi}" for _pid, aid, doi in batch]
        answers = api.papers(request)
        outcomes: list[PaperRecord | Failure] = []
        missing = []
        for (paper_id, arxiv_id, doi), answer in zip(batch, answers, strict=True):
            if not isinstance(answer, dict):
                missing.append(paper_id)
                continue
            if not _matches(answer, arxiv_id, doi):
                summary.fail(Failure(STAGE, paper_id, f"S2 answered with another paper ({answer.get('paperId')})"))
                continue
            cited = (api.references(answer["paperId"]) or []) if references and answer.get("paperId") else []
            outcomes.append(
                attempt(SOURCE, paper_id, lambda a=answer, p=paper_id, x=arxiv_id, c=cited: s2_record(a, p, x, c))
            )
        load_records(catalog, STAGE, outcomes, summary)
        if citations:
            for (paper_id, arxiv_id, doi), answer in zip(batch, answers, strict=True):
                if isinstance(answer, dict) and answer.get("paperId") and _matches(answer, arxiv_id, doi):
                    add_citing_papers(catalog, paper_id, arxiv_id, doi, api.citations(answer["paperId"]) or [])
        catalog.mark_all(STAGE, dict.fromkeys(missing, ABSENT))
        summary.add("not found", len(missing))
        progress.advance(task, len(batch))


def add_citing_papers(
    catalog: Catalog, paper_id: str, arxiv_id: str | None, doi: str | None, citing: list[dict]
) -> int:
    """Edges from corpus papers that S2 says cite this one (matched by their arXiv id or DOI)."""
    keys = []
    for paper in citing:
        ids = paper.get("externalIds") or {}
        if ids.get("ArXiv"):
            keys.append(split_arxiv_version(ids["ArXiv"])[0])
        elif ids.get("DOI"):
            keys.append(ids["DOI"].lower())
    added = 0
    with catalog.session() as session:
        rows = session.exec(select(Paper.id).where((Paper.arxiv_id.in_(keys)) | (Paper.doi.in_(keys)))).all()
        citing_ids = [citing_id for citing_id in rows if citing_id != paper_id]
        for citing_id in citing_ids:
            add_citation(session, citing_id, arxiv_id=arxiv_id, doi=None if arxiv_id else doi)
            added += 1
        if added:  # the new edges point at the paper here
            session.flush()
            resolve_citation_edges(session, citing_ids)
        session.commit()
    return added
