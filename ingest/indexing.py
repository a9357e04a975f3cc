"""Catalog -> embeddings -> index: abstract points (dense title and abstract, BM25 with the authors' names), their
windows, full-text passages; the ledger says what changed, so a rerun embeds only that."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice

from ingest.fulltext import passages
from ingest.pipeline import NullProgress
from ingest.report import Summary
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Paper
from retrieval.vectors.embeddings import DENSE_MAX_TOKENS, Embedded, Embedder
from retrieval.vectors.index import (
    ABSTRACT_KINDS,
    PASSAGE_KINDS,
    Filed,
    Index,
    IndexPoint,
    abstract_point,
    passage_points,
    window_points,
)
from retrieval.vectors.windows import chunk_spans

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


def index_text(paper: Paper) -> str:
    """What a paper's abstract point embeds: the title, then the abstract."""
    title = paper.title.rstrip()
    joiner = " " if title.endswith((".", "?", "!")) else ". "
    return f"{title}{joiner}{paper.abstract}".strip() if paper.abstract else title


def keyword_text(paper: Paper, names: list[str]) -> str:
    """What a paper's abstract point gives BM25: its title and abstract, then its authors' names as written, so a
    query with a name finds the paper by keyword too (the dense side reads the title and abstract only)."""
    return index_text(paper) + ("\n" + "; ".join(names) if names else "")


def abstract_windows(
    paper: Paper, count_tokens, windowing: Windowing = Windowing()
) -> list[tuple[str, tuple[int, int]]]:
    """The title followed by each window of the abstract, with the window's slice of the abstract's
    sentences (`retrieval.vectors.windows.split_sentences`); none when title and abstract fit one window."""
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


def _index_digest(
    paper: Paper, people: tuple[list[int], list[int]], names: list[str], windowing: Windowing
) -> str:
    """'<what is embedded>:<what is filtered on>:<the names BM25 reads>': when only the second part changes, the
    paper's points get new payload fields and keep their vectors; when the names change (or an archive indexed
    before names were, with two parts), the abstract point gets a new BM25 vector and keeps its dense one."""
    text = _digest([INDEX_FORMAT, [windowing.tokens, windowing.overlap], index_text(paper)])
    fields = _digest([paper.categories, paper.published.isoformat() if paper.published else None, people])
    return f"{text}:{fields}:{_digest(names)}"


def filed(paper: Paper, people: dict | None = None) -> Filed:
    """What every point of a catalog paper carries for filters (`people`: paper id -> researchers, institutions)."""
    researchers, institutions = (people or {}).get(paper.id, ([], []))
    return Filed(paper.categories, paper.published, researchers, institutions)


def batches(items: Iterable, size: int):
    """Lists of up to `size` items, in order."""
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _abstract_points(
    papers: list, embedder: Embedder, people: dict, names: dict, windowing: Windowing
) -> list[IndexPoint]:
    """Each paper's abstract point (title and abstract dense; with the authors' names, BM25) and its windows
    (dense)."""
    windows = [abstract_windows(p, embedder.count_tokens, windowing) for p in papers]
    dense = embedder.dense([index_text(p) for p in papers])
    keywords = embedder.sparse([keyword_text(p, names.get(p.id, [])) for p in papers])
    window_vectors = iter(embedder.dense([text for own in windows for text, _ in own]))
    points = []
    for paper, vector, sparse, own in zip(papers, dense, keywords, windows, strict=True):
        fields = filed(paper, people)
        points.append(abstract_point(paper.id, Embedded(vector, sparse), fields))
        points += window_points(paper.id, [(next(window_vectors), span) for _, span in own], fields)
    return points


def index_papers(
    catalog: Catalog,
    index: Index,
    embedder: Embedder,
    summary: Summary,
    progress=None,
    optimize: bool = True,
    windowing: Windowing = Windowing(),
    everything: bool = False,
    batch: int = INDEX_BATCH,
) -> None:
    """Embed and index every paper whose indexed form changed (`everything`: every paper, into a new index); the
    ledger is marked after each `batch` of papers.

    A paper's abstract point and its windows are replaced together, so a shorter abstract leaves no stale
    window behind. At the end the store builds its search graph (`optimize`), once for the whole run.
    """
    progress = progress or NullProgress()
    seen = {} if everything else catalog.ledger_hashes("index")
    people, names = catalog.paper_people(), catalog.all_author_names()
    todo, relabel, rewords = [], [], []
    for paper in catalog.iter_papers():
        digest = _index_digest(paper, people.get(paper.id, ([], [])), names.get(paper.id, []), windowing)
        before = (seen.get(paper.id) or "").split(":")
        if before == digest.split(":"):
            continue
        if before[0] != digest.split(":")[0]:
            todo.append((paper, digest))
        elif before[2:] == digest.split(":")[2:]:
            relabel.append((paper, digest))
        else:
            rewords.append((paper, digest))
    if relabel:
        _relabel(catalog, index, relabel, people, summary, progress)
    if rewords:
        todo += _new_keywords(catalog, index, embedder, rewords, people, names, summary, progress)
    with_passages = set(catalog.ledger_hashes("fulltext"))
    todo.sort(key=lambda item: len(index_text(item[0])))  # similar lengths batch together: less padding
    task = progress.add_task("embed + index", total=len(todo))
    for chunk in batches(todo, batch):
        papers = [paper for paper, _ in chunk]
        points = _abstract_points(papers, embedder, people, names, windowing)
        index.replace([p.id for p in papers], points, ABSTRACT_KINDS)
        for paper, _ in chunk:  # full-text passages carry the paper's filter fields too
            if paper.id in with_passages:
                _set_fields(index, paper, people)
        _mark_indexed(catalog, chunk)
        summary.add("indexed", len(chunk))
        progress.advance(task, len(chunk))
    if todo and optimize:
        index.optimize()


def _new_keywords(
    catalog: Catalog, index: Index, embedder: Embedder, papers: list, people, names, summary: Summary, progress
) -> list:
    """A new BM25 vector (the authors' names changed, or were not indexed yet) for papers whose title and abstract
    did not change: the abstract point is written again with the dense vector it was indexed with, the windows stay.
    Papers whose stored vector is missing are returned, to be embedded whole."""
    task = progress.add_task("index: names for keyword search", total=len(papers))
    missing = []
    for chunk in batches(papers, INDEX_BATCH):
        kept, points = [], []
        for paper, digest in chunk:
            dense = index.abstract_vector(paper.id)
            if dense is None:
                missing.append((paper, digest))
                continue
            kept.append((paper, digest))
            points.append((paper, dense))
        keywords = embedder.sparse([keyword_text(p, names.get(p.id, [])) for p, _ in points])
        index.upsert([abstract_point(p.id, Embedded(dense, sparse), filed(p, people))
                      for (p, dense), sparse in zip(points, keywords, strict=True)])  # fmt: skip
        for paper, _ in kept:  # windows and passages: the same filter fields
            _set_fields(index, paper, people)
        _mark_indexed(catalog, kept)
        summary.add("rewritten for keywords", len(kept))
        progress.advance(task, len(chunk))
    return missing


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
    points = passage_points(paper.id, found, vectors, filed(paper, people))
    index.replace([paper.id], points, kinds=PASSAGE_KINDS)
    return len(points)
