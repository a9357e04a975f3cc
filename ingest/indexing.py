"""Catalog -> embeddings -> index: which papers' points to write (abstract points, their windows, new keywords or
filter fields), read from the ledger so a rerun embeds only what changed; `ingest.writer.Writer` writes them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from itertools import islice

from ingest.pipeline import NullProgress
from ingest.report import Summary
from ingest.writer import People, Windowing, Writer, index_text
from retrieval.scholarly.models import Paper

INDEX_BATCH = 64
INDEX_FORMAT = 2  # bump when what goes into the index changes, so the next run re-embeds everything


def _digest(payload) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _index_digest(
    paper: Paper, people: tuple[list[int], list[int]], names: list[str], windowing: Windowing
) -> str:
    """'<what is embedded>:<what is filtered on>:<the names BM25 reads>': when only the second part changes, the
    paper's points get new payload fields and keep their vectors; when the names change (or an archive indexed
    before names were, with two parts), the abstract point gets a new BM25 vector and keeps its dense one."""
    # (an abstract embedded whole is named only when asked: archives indexed so before it was the default keep their
    # points, which are as good; only a benchmark asks for it)
    shape = [windowing.tokens, windowing.overlap] + (["whole"] if windowing.whole_abstract else [])
    text = _digest([INDEX_FORMAT, shape, index_text(paper)])
    fields = _digest([paper.categories, paper.published.isoformat() if paper.published else None, people])
    return f"{text}:{fields}:{_digest(names)}"


def batches(items: Iterable, size: int):
    """Lists of up to `size` items, in order."""
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def index_papers(
    writer: Writer,
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
    progress, catalog = progress or NullProgress(), writer.catalog
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
        _relabel(writer, relabel, people, summary, progress)
    if rewords:
        todo += _new_keywords(writer, rewords, people, names, summary, progress)
    with_passages = set(catalog.ledger_hashes("fulltext"))
    todo.sort(key=lambda item: len(index_text(item[0])))  # similar lengths batch together: less padding
    task = progress.add_task("embed + index", total=len(todo))
    for chunk in batches(todo, batch):
        writer.abstracts([paper for paper, _ in chunk], people, names, windowing)
        for paper, _ in chunk:  # full-text passages carry the paper's filter fields too
            if paper.id in with_passages:
                writer.fields(paper, people)
        _mark_indexed(writer, chunk)
        summary.add("indexed", len(chunk))
        progress.advance(task, len(chunk))
    if todo and optimize:
        writer.optimize()


def _new_keywords(writer: Writer, papers: list, people: People, names: dict, summary: Summary, progress) -> list:
    """A new BM25 vector (the authors' names changed, or were not indexed yet) for papers whose title and abstract
    did not change: the abstract point is written again with the dense vector it was indexed with, the windows stay.
    Papers whose stored vector is missing are returned, to be embedded whole."""
    task = progress.add_task("index: names for keyword search", total=len(papers))
    missing = []
    for chunk in batches(papers, INDEX_BATCH):
        kept, points = [], []
        for paper, digest in chunk:
            dense = writer.stored_vector(paper.id)
            if dense is None:
                missing.append((paper, digest))
                continue
            kept.append((paper, digest))
            points.append((paper, dense))
        writer.keywords(points, people, names)
        for paper, _ in kept:  # windows and passages: the same filter fields
            writer.fields(paper, people)
        _mark_indexed(writer, kept)
        summary.add("rewritten for keywords", len(kept))
        progress.advance(task, len(chunk))
    return missing


def _mark_indexed(writer: Writer, chunk: list) -> None:
    writer.mark("index", {paper.id: digest for paper, digest in chunk})


def _relabel(writer: Writer, papers: list, people: People, summary: Summary, progress) -> None:
    """New filter fields (categories, date, researchers, institutions) for papers whose text did not change."""
    task = progress.add_task("index: update filter fields", total=len(papers))
    for chunk in batches(papers, INDEX_BATCH):
        for paper, _ in chunk:
            writer.fields(paper, people)
        _mark_indexed(writer, chunk)
        summary.add("relabelled", len(chunk))
        progress.advance(task, len(chunk))
