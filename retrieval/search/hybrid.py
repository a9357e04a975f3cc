"""The search functions every caller uses: tools, pages, API and benchmarks."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, replace

import numpy as np

from retrieval.library.uploads import visible_papers
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Paper
from retrieval.vectors.embeddings import Embedded, Embedder, SparseVector
from retrieval.vectors.index import PASSAGE_KINDS, Filters, Index
from retrieval.vectors.windows import split_sentences

MAX_QUERY_CHARS = 1_000
MAX_LIMIT = 100
EMPTY_QUERY = "The query is empty: ask about a topic, a method or a paper title."


@dataclass(frozen=True)
class SearchHit:
    paper: Paper
    score: float
    rank: int
    kind: str
    page: int | None
    sentences: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SearchResult:
    query: str
    hits: list[SearchHit]
    note: str | None = None
    people: tuple[int, ...] = ()  # the researchers the query names, whose papers come first (kind "author")


@dataclass(frozen=True)
class PassageHit:
    paper: Paper
    score: float
    rank: int
    number: int
    page: int | None
    section: str | None
    text: str


@dataclass(frozen=True)
class PassageResult:
    query: str
    hits: list[PassageHit]
    note: str | None = None


def clean_query(text: str) -> str:
    """Drop control characters, collapse spaces and cap the length, so odd input never reaches the models."""
    kept = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in text or "")
    return re.sub(r"\s+", " ", kept).strip()[:MAX_QUERY_CHARS]


def matching_sentences(embedder: Embedder, query_vector: np.ndarray, texts: list[str], k: int = 2) -> list[list[str]]:
    """For each text, its k sentences closest to the query, in their original order (one embedding batch)."""
    split = [split_sentences(text, min_chars=21) for text in texts]
    flat = [s for sentences in split if len(sentences) > k for s in sentences]
    scores = iter(embedder.dense_remembered(flat) @ query_vector if flat else [])
    chosen = []
    for sentences in split:
        if len(sentences) <= k:
            chosen.append(sentences)
            continue
        own = np.array([next(scores) for _ in sentences])
        chosen.append([sentences[i] for i in sorted(np.argsort(-own)[:k])])
    return chosen


def search(
    catalog: Catalog,
    index: Index,
    embedder: Embedder,
    query: str,
    filters: Filters = Filters(),
    limit: int = 8,
    sentences: int = 0,
) -> SearchResult:
    """Hybrid search over titles and abstracts, one hit per paper, best first; with sentences > 0, the
    sentences of each abstract that match the query best."""
    text = clean_query(query)
    if not text:
        return SearchResult(text, [], note=EMPTY_QUERY)
    limit = max(1, min(limit, MAX_LIMIT))
    embedded = embedder.query(text)
    scored = index.papers(embedded, filters, limit=limit)
    papers = visible_papers(catalog, [s.paper_id for s in scored], filters.viewer)
    # (a point whose paper is missing means the index is out of step with the catalog, the truth: skip it)
    found = [(s, papers[s.paper_id]) for s in scored if s.paper_id in papers]
    quotes: list[list[str]] = [[] for _ in found]
    if sentences:
        # A window that scored the paper already says which sentences matched; the others are found by
        # embedding their sentences (short abstracts, one batch).
        rest = []
        for i, (s, paper) in enumerate(found):
            if s.dense is not None and s.dense.kind == "window" and s.dense.span:
                start, end = s.dense.span
                quotes[i] = split_sentences(paper.abstract)[start:end][:sentences]
            if not quotes[i]:
                rest.append(i)
        picked = matching_sentences(embedder, embedded.dense, [found[i][1].abstract for i in rest], sentences)
        for i, chosen in zip(rest, picked, strict=True):
            quotes[i] = chosen
    hits = [
        SearchHit(paper, s.score, rank, "abstract", None, quote)
        for rank, ((s, paper), quote) in enumerate(zip(found, quotes, strict=True), start=1)
    ]
    note = None if hits else "No paper matched; try other words or fewer filters."
    return SearchResult(text, hits, note)


def search_passages(
    catalog: Catalog,
    index: Index,
    embedder: Embedder,
    query: str,
    filters: Filters = Filters(),
    limit: int = 8,
    per_paper: int | None = None,
) -> PassageResult:
    """Hybrid search over full-text passages, best first, each with its page (and section when known).

    With `per_paper`, at most that many passages of one paper are kept, so the hits group into papers."""
    text = clean_query(query)
    if not text:
        return PassageResult(text, [], note=EMPTY_QUERY)
    limit = max(1, min(limit, MAX_LIMIT))
    # grouping needs the whole fused candidate list, or one long paper fills every slot
    points = index.passages(embedder.query(text), filters, limit=2 * index.params.candidates if per_paper else limit)
    if per_paper:
        kept, seen = [], {}
        for point in points:
            seen[point.paper_id] = seen.get(point.paper_id, 0) + 1
            if seen[point.paper_id] <= per_paper:
                kept.append(point)
        points = kept[:limit]
    papers = visible_papers(catalog, list(dict.fromkeys(p.paper_id for p in points)), filters.viewer)
    hits = [
        PassageHit(papers[p.paper_id], p.score, rank, p.number, p.page, p.section, p.text)
        for rank, p in enumerate((p for p in points if p.paper_id in papers), start=1)
    ]
    if hits:
        return PassageResult(text, hits)
    if not index.count(replace(filters, kinds=PASSAGE_KINDS)):
        return PassageResult(text, [], note="No full text is indexed for these papers yet.")
    return PassageResult(text, [], note="No passage matched; try other words.")


def similar_papers(
    catalog: Catalog, index: Index, embedder: Embedder, paper_id: str, limit: int = 5, filters: Filters = Filters()
) -> list[tuple[Paper, float]]:
    """The paper's nearest neighbours in the index: its title and abstract as indexed (the stored vector; embedded
    afresh only when the paper is not indexed yet), matched against every abstract and abstract window (dense
    side), the paper itself left out."""
    paper = catalog.papers([paper_id]).get(paper_id)
    if paper is None:
        return []
    dense = index.abstract_vector(paper_id)
    if dense is None:
        dense = embedder.dense([f"{paper.title}. {paper.abstract}".strip() if paper.abstract else paper.title])[0]
    found = index.papers(Embedded(dense, SparseVector([], [])), filters, limit=limit + 1, sides=("dense",))
    scores = {hit.paper_id: hit.score for hit in found if hit.paper_id != paper_id}
    papers = catalog.papers(list(scores))
    ranked = sorted(scores, key=lambda pid: (-scores[pid], pid))[:limit]
    return [(papers[pid], scores[pid]) for pid in ranked if pid in papers]
