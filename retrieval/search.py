"""The one search function every caller uses: tools, pages, API and benchmarks."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from retrieval.catalog import Catalog
from retrieval.embeddings import Embedder
from retrieval.index import Filters, Index
from retrieval.models import Paper

MAX_QUERY_CHARS = 1_000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")


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


def clean_query(text: str) -> str:
    """Drop control characters, collapse spaces and cap the length, so odd input never reaches the models."""
    kept = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in text or "")
    return re.sub(r"\s+", " ", kept).strip()[:MAX_QUERY_CHARS]


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if len(s.strip()) > 20]


def matching_sentences(embedder: Embedder, query_vector: np.ndarray, text: str, k: int = 2) -> list[str]:
    """The k sentences of text closest to the query, in their original order."""
    sentences = split_sentences(text)
    if len(sentences) <= k:
        return sentences
    scores = embedder.dense(sentences) @ query_vector
    best = sorted(np.argsort(-scores)[:k])
    return [sentences[i] for i in best]


def search(
    catalog: Catalog,
    index: Index,
    embedder: Embedder,
    query: str,
    filters: Filters = Filters(),
    limit: int = 8,
    prefetch: int = 60,
    sentences: int = 0,
) -> SearchResult:
    """Hybrid search grouped to papers, best first; with sentences > 0, the sentences that match best."""
    text = clean_query(query)
    if not text:
        return SearchResult(text, [], note="The query is empty: ask about a topic, a method or a paper title.")
    limit = max(1, min(limit, 100))
    embedded = embedder.query(text)
    points = index.hybrid(embedded, filters, limit=limit * 4, prefetch=max(prefetch, limit * 4))
    best: dict[str, object] = {}
    for point in points:
        best.setdefault(point.paper_id, point)
    chosen = list(best.values())[:limit]
    papers = catalog.papers([p.paper_id for p in chosen])
    hits = []
    for point in chosen:
        paper = papers.get(point.paper_id)
        if paper is None:  # the index is ahead of or behind the catalog; the catalog is the truth
            continue
        source = point.text if point.kind == "passage" else paper.abstract
        found = matching_sentences(embedder, embedded.dense, source, sentences) if sentences else []
        hits.append(SearchHit(paper, point.score, len(hits) + 1, point.kind, point.page, found))
    note = None if hits else "No paper matched; try other words or fewer filters."
    return SearchResult(text, hits, note)
