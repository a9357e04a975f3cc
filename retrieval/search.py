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


def matching_sentences(embedder: Embedder, query_vector: np.ndarray, texts: list[str], k: int = 2) -> list[list[str]]:
    """For each text, its k sentences closest to the query, in their original order (one embedding batch)."""
    split = [split_sentences(text) for text in texts]
    flat = [s for sentences in split if len(sentences) > k for s in sentences]
    scores = iter(embedder.dense(flat) @ query_vector if flat else [])
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
    found = [(point, papers[point.paper_id]) for point in chosen if point.paper_id in papers]
    # (a point whose paper is missing means the index is out of step with the catalog, the truth: skip it)
    quotes = [[] for _ in found]
    if sentences:
        texts = [point.text if point.kind == "passage" else paper.abstract for point, paper in found]
        quotes = matching_sentences(embedder, embedded.dense, texts, sentences)
    hits = [
        SearchHit(paper, point.score, rank, point.kind, point.page, quote)
        for rank, ((point, paper), quote) in enumerate(zip(found, quotes, strict=True), start=1)
    ]
    note = None if hits else "No paper matched; try other words or fewer filters."
    return SearchResult(text, hits, note)
