"""The vector index: abstracts, their windows and full-text passages, searched by meaning and by keywords.

Each paper has one `abstract` point (title + abstract: a dense vector, the mean of its windows' when it has
several, and a BM25 vector of all of it) and, when title and abstract do not fit one window, `window` points
(dense only), each a slice of the abstract's sentences (`ingest.writer`). PDF text becomes `passage` points
(dense + BM25) that keep their page and section; `retrieval.vectors.points` builds each kind. Dense and BM25
candidates are fetched apart and fused here (not in the store), so the embedded engine and a Qdrant server rank
alike; the rule and its parameters (`FusionParams`, `fuse`) are below.

How dense and BM25 scores become one ranking: each side's candidate scores are divided by that side's best score,
and the two are mixed with a fixed weight; a candidate one side did not return counts 0 there. Reciprocal-rank
fusion throws the score gaps away, and min-max stretches the arbitrary worst candidate to 0: both ranked worse on
SciFact train (see BENCHMARKS.md). The method, weight and depth below were chosen on the SciFact train queries only.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np

from retrieval.vectors.edge import EdgeStore, edge_folder
from retrieval.vectors.embeddings import Embedded
from retrieval.vectors.points import ABSTRACT_KINDS, PASSAGE_KINDS, IndexPoint, PointKind, point_id
from retrieval.vectors.server import ClientStore
from retrieval.vectors.store import (
    ANYONE,
    DENSE,
    SPARSE,
    Filters,
    IndexUnavailable,
    PointHit,
    StoredPoint,
    VectorLayout,
    VectorQuery,
    VectorStore,
)

__all__ = ["ANYONE", "Filters", "FusionParams", "Index", "IndexUnavailable", "PaperScore", "PointHit", "VectorLayout",
           "fuse"]

DENSE_POINTS_PER_PAPER = 5  # about how many dense points a paper has: its abstract and windows (4.6 on arXiv)
MOST_POINTS_PER_PAPER = 16  # more than any abstract has (a window is about 80 tokens)


# --- fusion ---------------------------------------------------------------------------------------------

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class FusionParams:
    method: str = "max"  # "max": score / best score; "minmax": min-max over candidates; "rrf": 1 / (60 + rank)
    dense_weight: float = 0.6  # SciFact train's best with the abstract as its windows' mean (0.7 before: BENCHMARKS.md)
    candidates: int = 100  # points fetched from each side before fusing


class _Scored(Protocol):
    paper_id: str
    score: float


H = TypeVar("H", bound=_Scored)


def group_max(hits: Iterable[H]) -> dict[str, H]:
    """Each paper's best-scoring hit."""
    best: dict[str, H] = {}
    for hit in hits:
        current = best.get(hit.paper_id)
        if current is None or hit.score > current.score:
            best[hit.paper_id] = hit
    return best


def by_max(scores: dict[K, float]) -> dict[K, float]:
    """Each score over the best one (BM25 scores are >= 0; cosine scores of real matches are too)."""
    if not scores:
        return {}
    high = max(scores.values())
    if high <= 0:
        return {key: 0.0 for key in scores}
    return {key: max(value, 0.0) / high for key, value in scores.items()}


def reciprocal_rank(scores: dict[K, float], k: int = 60) -> dict[K, float]:
    ranked = sorted(scores, key=lambda key: -scores[key])
    return {key: 1.0 / (k + rank) for rank, key in enumerate(ranked, start=1)}


def minmax(scores: dict[K, float]) -> dict[K, float]:
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    if span <= 0:
        return {key: 1.0 for key in scores}
    return {key: (value - low) / span for key, value in scores.items()}


_NORMALISE = {"max": by_max, "minmax": minmax, "rrf": reciprocal_rank}


def fuse(dense: dict[K, float], sparse: dict[K, float], params: FusionParams) -> dict[K, float]:
    """Convex combination of normalised scores; missing on one side counts 0 there."""
    normalise = _NORMALISE[params.method]
    d, s = normalise(dense), normalise(sparse)
    if not s:  # no keyword in the query survived (only stop words): dense alone decides
        return d
    w = params.dense_weight
    return {key: w * d.get(key, 0.0) + (1 - w) * s.get(key, 0.0) for key in d.keys() | s.keys()}


@dataclass(frozen=True)
class PaperScore:
    paper_id: str
    score: float
    dense: PointHit | None  # the paper's best dense point: a window tells which sentences matched
    sparse: PointHit | None


class Index:
    def __init__(self, store: VectorStore, params: FusionParams | None = None) -> None:
        self.store = store
        self.params = params or FusionParams()
        self.writes = 0  # writes through this object: what a search answered before may have changed since

    @classmethod
    def open(
        cls, collection: str, *, path: Path | None = None, url: str | None = None, api_key: str | None = None,
        layout: VectorLayout = VectorLayout.INT8,
    ) -> "Index":  # fmt: skip
        """The embedded engine in `path`, or a Qdrant server/cluster when `url` is given; one made now keeps its
        vectors as `layout` says (one made before keeps its own until `convert`)."""
        if url:
            return cls(ClientStore.connect(url, collection, api_key, layout))
        assert path is not None
        return cls(EdgeStore(edge_folder(path, collection), layout=layout))

    def close(self) -> None:
        self.store.close()

    def swap(self, store: VectorStore) -> VectorStore:
        """Serve from `store` from now on (a rebuilt index); returns the store it replaces, still open."""
        old, self.store = self.store, store
        self.writes += 1
        return old

    def count(self, filters: Filters | None = None) -> int:
        return self.store.count(filters)

    def points_by_kind(self) -> dict[str, int]:
        """Points by kind (a paper's title and abstract, its sentence windows, a full-text passage), public and
        private."""
        return {kind: self.count(Filters(kinds=(kind,), viewer=ANYONE)) for kind in map(str, PointKind)}

    def optimize(self) -> None:
        self.store.optimize()

    @property
    def layout(self) -> VectorLayout:
        """How this index keeps its dense vectors now (its own record, whatever the setting asks)."""
        return self.store.layout

    def behind(self) -> list[str]:
        """What this index lacks that one made by this version has (each a sentence; `scholarloom doctor` says them)."""
        return self.store.behind()

    def convert(self, layout: VectorLayout) -> None:
        """Keep the dense vectors as `layout` says from now on (vectors and payloads untouched; blocks while the
        embedded engine makes or drops the int8 copies: about a minute per million points here)."""
        self.store.convert(layout)
        self.writes += 1

    def points(self, chunk: int = 1000) -> Iterator[list[StoredPoint]]:
        """Every point as stored, public and private, `chunk` at a time (for a backup: read, never searched)."""
        offset = None
        while True:
            points, offset = self.store.scroll(offset, chunk)
            if points:
                yield points
            if offset is None:
                return

    def load(self, points: list[StoredPoint]) -> None:
        """Write points as they were stored (a restore): ids, vectors and payloads unchanged."""
        self.store.upsert(points)
        self.writes += 1

    def replace(self, paper_ids: list[str], points: list[IndexPoint], kinds: tuple[str, ...]) -> None:
        """Write these papers' points of these kinds, dropping any they had before (a shorter text leaves none)."""
        self.store.delete_papers(paper_ids, kinds)
        self.store.upsert([p.stored() for p in points])
        self.writes += 1

    def set_paper_fields(
        self, paper_id: str, categories: list[str], published, researcher_ids: list[int], institution_ids: list[int]
    ) -> None:
        """Update the filter fields of all a paper's points (abstract, windows, passages) without re-embedding."""
        payload = {
            "categories": categories,
            "published": published.isoformat() if published else None,
            "researcher_ids": researcher_ids,
            "institution_ids": institution_ids,
        }
        self.store.set_paper_payload(paper_id, payload)
        self.writes += 1

    def upsert(self, points: list[IndexPoint]) -> None:
        self.store.upsert([p.stored() for p in points])
        self.writes += 1

    def abstract_vector(self, paper_id: str) -> np.ndarray | None:
        """The dense vector the paper's title and abstract were indexed with (None when it is not indexed)."""
        point = point_id(paper_id, PointKind.ABSTRACT)
        return self.store.dense_vectors([point]).get(point)

    def _candidates(
        self, query: Embedded, filters: Filters, depth: int, sides: tuple[str, ...], dense_depth: int | None = None
    ) -> tuple[list[PointHit], list[PointHit]]:
        queries = []
        if DENSE in sides:
            queries.append(VectorQuery(DENSE, query.dense, dense_depth or depth, filters))
        if SPARSE in sides and query.sparse.indices:
            queries.append(VectorQuery(SPARSE, query.sparse, depth, filters))
        answers = iter(self.store.search(queries) if queries else [])
        dense = next(answers) if DENSE in sides else []
        sparse = next(answers, [])
        return dense, sparse

    def papers(
        self, query: Embedded, filters: Filters = Filters(), limit: int = 10, sides: tuple[str, ...] = (DENSE, SPARSE)
    ) -> list[PaperScore]:
        """Papers by fused abstract scores (each side's best point per paper), best first, ties by id.

        Each side fetches `FusionParams.candidates` points; a paper only the BM25 side found is scored on the dense
        side by its own points. `sides` picks dense, BM25 or both (the benchmark compares the three)."""
        filters = replace(filters, kinds=filters.kinds or ABSTRACT_KINDS)
        depth = max(self.params.candidates, limit)
        # Alone, the dense side fetches more points (a paper has several) to reach about `depth` papers; beside BM25
        # it need not, as the BM25 side's papers are scored on the dense side anyway.
        alone = SPARSE not in sides or not query.sparse.indices
        dense_depth = depth * DENSE_POINTS_PER_PAPER if alone else depth
        dense, sparse = self._candidates(query, filters, depth, sides, dense_depth)
        dense_best, sparse_best = group_max(dense), group_max(sparse)
        if DENSE in sides:
            dense_best |= self._dense_best(query.dense, self._may_rank(dense_best, sparse_best, limit), filters)
        fused = fuse(
            {k: h.score for k, h in dense_best.items()},
            {k: h.score for k, h in sparse_best.items()},
            self.params,
        )
        ranked = sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:limit]
        return [PaperScore(pid, score, dense_best.get(pid), sparse_best.get(pid)) for pid, score in ranked]

    def _may_rank(self, dense_best: dict[str, PointHit], sparse_best: dict[str, PointHit], limit: int) -> list[str]:
        """The papers only the BM25 side found that may rank in the first `limit` once scored on the dense side.

        Such a paper scores at most the dense side's lowest (it was not among its points: exactly so for an exact
        search, nearly so through the graph), and scoring it then lowers no other fused score. With the product's
        fusion (each side over its best), a paper that stays under the `limit`-th fused score even at that bound is
        left out. Other fusion methods (for benchmarks) keep all."""
        missing = [k for k in sparse_best if k not in dense_best]
        if not missing or not dense_best or self.params.method != "max":
            return missing
        dense = {k: h.score for k, h in dense_best.items()}
        sparse = {k: h.score for k, h in sparse_best.items()}
        now = sorted(fuse(dense, sparse, self.params).values(), reverse=True)
        if len(now) <= limit:
            return missing
        low = min(dense.values())
        hoped = fuse(dense | dict.fromkeys(missing, low), sparse, self.params)
        return [k for k in missing if hoped[k] >= now[limit - 1]]

    def _dense_best(self, query: np.ndarray, paper_ids: list[str], filters: Filters) -> dict[str, PointHit]:
        """The best dense point of each of these papers (abstract or window), by an exact search of their points
        alone: a paper the BM25 side found and the dense side's depth missed is fused with its real dense score,
        not with 0. (SciFact hybrid nDCG@10, train / test: 0.7519 / 0.7374 at a dense depth of 100 points so, 0.7498 /
        0.7360 at 500 without: BENCHMARKS.md.)"""
        if not paper_ids:
            return {}
        theirs = replace(filters, paper_ids=tuple(paper_ids))
        (hits,) = self.store.search([VectorQuery(DENSE, query, MOST_POINTS_PER_PAPER * len(paper_ids), theirs)])
        return group_max(hits)

    def passages(self, query: Embedded, filters: Filters = Filters(), limit: int = 10) -> list[PointHit]:
        """Full-text passages by fused score, best first (each with its page and section when known)."""
        filters = replace(filters, kinds=PASSAGE_KINDS)
        depth = max(self.params.candidates, limit)
        dense, sparse = self._candidates(query, filters, depth, (DENSE, SPARSE))
        key = lambda h: (h.paper_id, h.number)  # noqa: E731
        by_key = {key(h): h for h in [*sparse, *dense]}
        fused = fuse(
            {key(h): h.score for h in dense},
            {key(h): h.score for h in sparse},
            self.params,
        )
        ranked = sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:limit]
        cosine = {key(h): h.score for h in dense}
        return [replace(by_key[k], score=score, dense=cosine.get(k)) for k, score in ranked]
