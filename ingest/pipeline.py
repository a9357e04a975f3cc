"""Records -> catalog (ledger committed with them) -> embeddings -> index; every step resumable."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice

from ingest.fulltext import passages
from ingest.report import Failure, Summary
from retrieval.catalog import Catalog
from retrieval.engine import hold_write_lock
from retrieval.embeddings import DENSE_MAX_TOKENS, Embedded, Embedder, SparseVector
from retrieval.index import ABSTRACT_KINDS, PASSAGE_KINDS, Index, IndexPoint
from retrieval.models import Paper
from retrieval.passages import chunk_spans
from retrieval.records import InstitutionRecord, PaperRecord, ResearcherRecord
from retrieval.identity import refine_researchers, upsert_researcher
from retrieval.upsert import link_citations, upsert_institution, upsert_paper

log = logging.getLogger(__name__)
Record = PaperRecord | InstitutionRecord | ResearcherRecord
COMMIT_EVERY = 200
INDEX_BATCH = 64
INDEX_FORMAT = 2  # bump when what goes into the index changes, so the next run re-embeds everything


@dataclass(frozen=True)
class Windowing:
    """How abstracts are cut for the dense side: windows of `tokens` word pieces (title included), half
    overlapping or not. Short windows (a sentence or two) let a one-sentence claim meet the sentence that
    supports it; size and overlap were chosen on SciFact train (BENCHMARKS.md): 80 tokens without overlap
    ranked as well as with it, for 14% fewer windows."""

    tokens: int = 80
    overlap: bool = False


EMPTY_SPARSE = SparseVector([], [])


class NullProgress:
    """Stands in for rich.progress.Progress when nobody watches."""

    def add_task(self, description: str, total: float | None = None) -> int:
        return 0

    def advance(self, task: int, advance: float = 1) -> None:
        pass

    def update(self, task: int, **fields) -> None:
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
    cursors: dict[str, dict | None] | None = None,
) -> None:
    """Write records not seen before (or changed) and mark them in the ledger in the same commit.

    Records sharing a key within one stage are written together, in order, under one combined digest,
    so a rerun finds them unchanged. `cursors` (harvest positions, see `Catalog.save_cursor`) are saved in
    the last commit, so a harvest never moves past a page whose records are not stored.
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
                hold_write_lock(session)
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
        for name, state in (cursors or {}).items():
            Catalog.save_cursor(session, name, state)
        session.commit()


def finish_catalog(catalog: Catalog) -> int:
    """Cross-record work after loading: citation edges pointed at papers now in the corpus, name-only
    authorships relinked to identified researchers where the evidence allows. Returns edges changed."""
    with catalog.session() as session:
        changed = link_citations(session)
        refine_researchers(session)
        session.commit()
    return changed


def index_text(paper: Paper) -> str:
    """What a paper's abstract point embeds: the title, then the abstract."""
    title = paper.title.rstrip()
    joiner = " " if title.endswith((".", "?", "!")) else ". "
    return f"{title}{joiner}{paper.abstract}".strip() if paper.abstract else title


def abstract_windows(
    paper: Paper, count_tokens, windowing: Windowing = Windowing()
) -> list[tuple[str, tuple[int, int]]]:
    """The title followed by each window of the abstract, with the window's slice of the abstract's
    sentences (`retrieval.passages.split_sentences`); none when title and abstract fit one window."""
    text = index_text(paper)
    if not paper.abstract or count_tokens([text])[0] <= min(windowing.tokens, DENSE_MAX_TOKENS) - 2:
        return []
    head = paper.title.rstrip()
    head = head if head.endswith((".", "?", "!")) else head + "."
    budget = max(24, min(windowing.tokens, DENSE_MAX_TOKENS) - 2 - count_tokens([head])[0])
    sentences, spans = chunk_spans(paper.abstract, count_tokens, budget, overlap=windowing.overlap)
    return [(f"{head} {' '.join(sentences[a:b])}", (a, b)) for a, b in spans]


def _digest(payload) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _index_digest(paper: Paper, people: tuple[list[int], list[int]], windowing: Windowing) -> str:
    """'<what is embedded>:<what is filtered on>': when only the second half changes, the paper's points get
    new payload fields and keep their vectors."""
    text = _digest([INDEX_FORMAT, [windowing.tokens, windowing.overlap], index_text(paper)])
    fields = _digest([paper.categories, paper.published.isoformat() if paper.published else None, people])
    return f"{text}:{fields}"


def batches(items: Iterable, size: int):
    """Lists of up to `size` items, in order."""
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _abstract_points(papers: list, embedder: Embedder, people: dict, windowing: Windowing) -> list[IndexPoint]:
    """Each paper's abstract point (title and abstract, dense and sparse) and its windows (dense)."""
    windows = [abstract_windows(p, embedder.count_tokens, windowing) for p in papers]
    vectors = embedder.documents([index_text(p) for p in papers])
    window_vectors = iter(embedder.dense([text for own in windows for text, _ in own]))
    points = []
    for paper, vector, own in zip(papers, vectors, windows, strict=True):
        common = dict(
            categories=paper.categories,
            published=paper.published,
            researcher_ids=people.get(paper.id, ([], []))[0],
            institution_ids=people.get(paper.id, ([], []))[1],
        )
        points.append(IndexPoint(paper_id=paper.id, kind="abstract", number=0, vectors=vector, **common))
        for number, (_, span) in enumerate(own, start=1):
            window = Embedded(next(window_vectors), EMPTY_SPARSE)
            points.append(
                IndexPoint(paper_id=paper.id, kind="window", number=number, vectors=window, span=span, **common)
            )
    return points


def index_papers(
    catalog: Catalog,
    index: Index,
    embedder: Embedder,
    summary: Summary,
    progress=None,
    optimize: bool = True,
    windowing: Windowing = Windowing(),
) -> None:
    """Embed and index every paper whose indexed form changed; the ledger is marked after each batch.

    A paper's abstract point and its windows are replaced together, so a shorter abstract leaves no stale
    window behind. At the end the store builds its search graph (`optimize`), once for the whole run.
    """
    progress = progress or NullProgress()
    seen = catalog.ledger_hashes("index")
    people = catalog.paper_people()
    todo, relabel = [], []
    for paper in catalog.iter_papers():
        digest = _index_digest(paper, people.get(paper.id, ([], [])), windowing)
        before = seen.get(paper.id)
        if before == digest:
            continue
        if before and before.split(":")[0] == digest.split(":")[0]:
            relabel.append((paper, digest))
        else:
            todo.append((paper, digest))
    if relabel:
        _relabel(catalog, index, relabel, people, summary, progress)
    with_passages = set(catalog.ledger_hashes("fulltext"))
    todo.sort(key=lambda item: len(index_text(item[0])))  # similar lengths batch together: less padding
    task = progress.add_task("embed + index", total=len(todo))
    for chunk in batches(todo, INDEX_BATCH):
        papers = [paper for paper, _ in chunk]
        index.replace([p.id for p in papers], _abstract_points(papers, embedder, people, windowing), ABSTRACT_KINDS)
        for paper, _ in chunk:  # full-text passages carry the paper's filter fields too
            if paper.id in with_passages:
                _set_fields(index, paper, people)
        _mark_indexed(catalog, chunk)
        summary.add("indexed", len(chunk))
        progress.advance(task, len(chunk))
    if todo and optimize:
        index.optimize()


def _set_fields(index: Index, paper: Paper, people) -> None:
    researchers, institutions = people.get(paper.id, ([], []))
    index.set_paper_fields(paper.id, paper.categories, paper.published, researchers, institutions)


def _mark_indexed(catalog: Catalog, chunk: list) -> None:
    catalog.mark_all("index", {paper.id: digest for paper, digest in chunk})


def _relabel(catalog: Catalog, index: Index, papers: list, people, summary: Summary, progress) -> None:
    """New filter fields (categories, date, researchers, institutions) for papers whose text did not change."""
    task = progress.add_task("index: update filter fields", total=len(papers))
    for chunk in batches(papers, INDEX_BATCH):
        for paper, _ in chunk:
            _set_fields(index, paper, people)
        _mark_indexed(catalog, chunk)
        summary.add("relabelled", len(chunk))
        progress.advance(task, len(chunk))


def index_fulltext(
    catalog: Catalog, index: Index, embedder: Embedder, paper: Paper, pages: list[str], people=None
) -> int:
    """Cut one paper's page texts into passages, embed them and replace the paper's passages in the index."""
    found = passages(pages, embedder.count_tokens)
    vectors = embedder.documents([p.text for p in found]) if found else []
    researchers, institutions = (people or {}).get(paper.id, ([], []))
    points = [
        IndexPoint(
            paper_id=paper.id,
            kind="passage",
            number=p.number,
            vectors=v,
            text=p.text,
            page=p.page,
            section=p.section,
            categories=paper.categories,
            published=paper.published,
            researcher_ids=researchers,
            institution_ids=institutions,
        )
        for p, v in zip(found, vectors, strict=True)
    ]
    index.replace([paper.id], points, kinds=PASSAGE_KINDS)
    return len(points)
