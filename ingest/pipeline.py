"""Records -> catalog (ledger committed with them) -> embeddings -> index; every step resumable."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable
from itertools import islice

from ingest.report import Failure, Summary
from retrieval.catalog import Catalog
from retrieval.embeddings import Embedder
from retrieval.index import Index, IndexPoint
from retrieval.models import Paper
from retrieval.records import InstitutionRecord, PaperRecord, ResearcherRecord
from retrieval.upsert import link_citations, upsert_institution, upsert_paper, upsert_researcher

log = logging.getLogger(__name__)
Record = PaperRecord | InstitutionRecord | ResearcherRecord
COMMIT_EVERY = 200
INDEX_BATCH = 64


class NullProgress:
    """Stands in for rich.progress.Progress when nobody watches."""

    def add_task(self, description: str, total: float | None = None) -> int:
        return 0

    def advance(self, task: int, advance: float = 1) -> None:
        pass


def record_key(record: Record) -> str:
    if isinstance(record, PaperRecord):
        return record.id
    if isinstance(record, InstitutionRecord):
        return record.ror_id or record.openalex_id or record.name
    return record.openalex_id or record.orcid or record.name


def _write(session, record: Record) -> None:
    if isinstance(record, PaperRecord):
        upsert_paper(session, record)
    elif isinstance(record, InstitutionRecord):
        upsert_institution(session, record)
    else:
        upsert_researcher(session, record)


def load_records(
    catalog: Catalog,
    stage: str,
    outcomes: list[Record | Failure],
    summary: Summary,
    progress=None,
) -> None:
    """Write records not seen before (or changed) and mark them in the ledger in the same commit.

    Records sharing a key within one stage are written together, in order, under one combined digest,
    so a rerun finds them unchanged.
    """
    progress = progress or NullProgress()
    task = progress.add_task(stage, total=len(outcomes))
    grouped: dict[str, list[Record]] = {}
    for item in outcomes:
        if isinstance(item, Failure):
            summary.fail(item)
        else:
            grouped.setdefault(record_key(item), []).append(item)
    progress.advance(task, len(outcomes) - sum(map(len, grouped.values())))
    seen = catalog.ledger_hashes(stage)
    written = 0
    with catalog.session() as session:
        for key, records in grouped.items():
            progress.advance(task, len(records))
            digest = hashlib.sha256("".join(r.content_hash() for r in records).encode()).hexdigest()
            if seen.get(key) == digest:
                summary.add("unchanged")
                continue
            try:
                with session.begin_nested():
                    for record in records:
                        _write(session, record)
                    Catalog.mark(session, stage, key, digest)
            except Exception as exc:  # one bad record is reported and skipped; the run goes on
                log.warning("record %s of %s not stored", key, stage, exc_info=True)
                summary.fail(Failure(stage, key, f"could not be stored: {type(exc).__name__}: {str(exc)[:300]}"))
                continue
            summary.add("updated" if key in seen else "added")
            written += 1
            if written % COMMIT_EVERY == 0:
                session.commit()
        session.commit()


def finish_catalog(catalog: Catalog) -> int:
    """Cross-record work after loading: citation edges pointed at papers now in the corpus."""
    with catalog.session() as session:
        changed = link_citations(session)
        session.commit()
    return changed


def _index_text(paper: Paper) -> str:
    return f"{paper.title}. {paper.abstract}".strip()


def _index_digest(paper: Paper, people: tuple[list[int], list[int]]) -> str:
    payload = [_index_text(paper), paper.categories, paper.published.isoformat() if paper.published else None, people]
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _batches(items: Iterable, size: int):
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def index_papers(catalog: Catalog, index: Index, embedder: Embedder, summary: Summary, progress=None) -> None:
    """Embed and index every paper whose indexed form changed; the ledger is marked after each batch."""
    progress = progress or NullProgress()
    seen = catalog.ledger_hashes("index")
    people = catalog.paper_people()
    todo = []
    for paper in catalog.iter_papers():
        digest = _index_digest(paper, people.get(paper.id, ([], [])))
        if seen.get(paper.id) != digest:
            todo.append((paper, digest))
    todo.sort(key=lambda item: len(_index_text(item[0])))  # similar lengths batch together: less padding
    task = progress.add_task("embed + index", total=len(todo))
    for chunk in _batches(todo, INDEX_BATCH):
        vectors = embedder.documents([_index_text(p) for p, _ in chunk])
        points = [
            IndexPoint(
                paper_id=paper.id,
                kind="abstract",
                number=0,
                text="",
                vectors=vector,
                categories=paper.categories,
                published=paper.published,
                researcher_ids=people.get(paper.id, ([], []))[0],
                institution_ids=people.get(paper.id, ([], []))[1],
            )
            for (paper, _), vector in zip(chunk, vectors, strict=True)
        ]
        index.upsert(points)
        with catalog.session() as session:
            for paper, digest in chunk:
                Catalog.mark(session, "index", paper.id, digest)
            session.commit()
        summary.add("indexed", len(chunk))
        progress.advance(task, len(chunk))
