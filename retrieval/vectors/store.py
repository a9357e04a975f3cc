"""Where the vectors live, behind one small interface: the points, queries, hits and filter conditions every
store shares, and the `VectorStore` protocol.

`EdgeStore` (`retrieval.vectors.edge`) is the embedded default: Qdrant's own engine in this process
(`qdrant-edge-py`), with HNSW, payload indexes and sparse IDF, in a directory of the data dir. `ClientStore`
(`retrieval.vectors.server`) speaks to a Qdrant server or cluster through `qdrant-client` (given a URL);
qdrant-client's own local mode also fits it, which the tests use to check that both stores rank alike. Fusion
and grouping happen above this layer, in `retrieval.vectors.index`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from enum import StrEnum
from typing import Protocol

import numpy as np

from retrieval.vectors.embeddings import DENSE_DIM, SparseVector

DENSE = "dense"
SPARSE = "bm25"
# Payload fields with an index (keyword, integer or datetime), so filters never scan every point.
INDEXED_FIELDS = {
    "paper_id": "keyword",
    "kind": "keyword",
    "categories": "keyword",
    "published": "datetime",
    "researcher_ids": "integer",
    "institution_ids": "integer",
    "owner": "keyword",  # set on a user's private uploads only; every search filters on it (see `Filters.viewer`)
}


class VectorLayout(StrEnum):
    """How the index keeps its dense vectors (`SCHOLARLOOM_INDEX_VECTORS`)."""

    # int8 copies in memory (a quarter of float32's size), the float32 originals on disk; a dense search takes
    # `oversampling(limit)` times its limit by the int8 copies and orders them by the originals.
    INT8 = "int8"
    FLOAT32 = "float32"  # every vector in memory as float32: what indexes made before the compact index keep


# At 5.4M points, rescoring each segment's best `limit` (1.0) found the same top 10 as twice as many (2.0), and reads
# half as many originals: unfiltered p95 25 ms against 31 warm, 135 against 187 ms from a cold page cache; without
# rescoring, recall@10 was 0.89 (BENCHMARKS.md, session 29). A search for fewer points rescores RESCORED_AT_LEAST
# all the same: at limit 10 through the demo's graph, rescoring only 10 a segment let recall@10 fall to 0.975 in 2 of
# 17 runs of tests/retrieval/test_compact_index.py (the graph is built anew each run); rescoring 100, in none of 10.
RESCORE_OVERSAMPLING = 1.0
RESCORED_AT_LEAST = 100
# Through the HNSW graph, a dense search keeps a beam of candidates (`hnsw_ef`) that widens as a filter narrows what
# it may return: HNSW_EF_BASE / sqrt(the share of points the filter leaves), at least twice the limit, at most
# HNSW_EF. The share counts the kinds of points asked for (abstracts and windows, or passages). At 5.4M points
# (BENCHMARKS.md, session 29) recall@10 against an exact float32 scan was 1.000 unfiltered at a beam of 128, 0.992 for
# a 12% category at 400 and 0.985-0.992 for a 1.4% one at 700-1000; the search's time grows with the beam
# (unfiltered 7 ms at 128, 25 ms at 1000, over six segments).
HNSW_EF_BASE = 128
HNSW_EF = 1000
# A filter leaving at most this many points is searched exactly (the payload index names them): at 1M points the
# graph cut by such a filter found 0.95-0.99 of the true top 10; exact, 1.000. At 5.4M points a 1.4% category (89k
# points) took 17 ms p95 so against 32 through the graph at a beam of 1000 (BENCHMARKS.md, "Session 30").
EXACT_FILTERED_UP_TO = 100_000
# The BM25 side's own choice, made in each segment (of at most SEGMENT_POINTS points): a filter leaving at most this
# many of a segment's points has them scored from the filter's list; more, and the inverted lists are read with the
# filter checked at each entry. Qdrant's default, 5,000, sent a 1.4% category at 5.4M points (15k points a segment)
# through the lists: 23 ms p50 against 6 (and 20,000 beat 50,000 and 100,000 on every filter measured; Session 30).
BM25_SCAN_UP_TO = 20_000
# The graph is built a segment at a time, as segments fill: once this many points have been written since the last
# build, the store closes its growing segment and builds that segment's graph; no merge makes a segment larger
# (SEGMENT_KB, the size of this many float32 vectors). A million papers' 5.4M points built so in about 560 s a
# segment, peak RSS 15.6 GB counting the built segments' mapped files (one pass over 1M points: 14.8 GB; BENCHMARKS.md).
SEGMENT_POINTS = 1_000_000
SEGMENT_KB = SEGMENT_POINTS * DENSE_DIM * 4 // 1024


def oversampling(limit: int) -> float:
    """How many times its limit a dense search takes by the int8 copies, to order them by the originals."""
    return max(RESCORE_OVERSAMPLING, RESCORED_AT_LEAST / max(1, limit))


def beam(limit: int, share: float = 1.0) -> int:
    """The HNSW beam of a dense search for `limit` points, where a filter leaves `share` of the points (1: none)."""
    wanted = HNSW_EF_BASE / math.sqrt(min(1.0, max(share, 1e-6)))
    return int(min(HNSW_EF, max(2 * limit, wanted)))


ANYONE = "*"  # `Filters.viewer` for upkeep (delete, relabel, count): every point, whoever owns it
RETURNED_FIELDS = ["paper_id", "kind", "number", "page", "section", "text", "span"]


class IndexUnavailable(RuntimeError):
    """The vector store cannot be reached or opened."""


@dataclass(frozen=True)
class Filters:
    """Restrictions every search may carry."""

    categories: tuple[str, ...] = ()
    published_from: date | None = None
    published_to: date | None = None
    paper_ids: tuple[str, ...] = ()
    researcher_id: int | None = None
    institution_id: int | None = None
    kinds: tuple[str, ...] = ()
    # Whose private points may match besides the public ones: None (anonymous) public only; a user name, that
    # user's uploads too; ANYONE, all (never from a request). Every store query carries it.
    viewer: str | None = None

    def is_empty(self) -> bool:
        """No restriction on which papers: `kinds` only says which points of a paper to search, `viewer` only
        adds a user's few private points to the public ones."""
        return self == Filters(kinds=self.kinds, viewer=self.viewer)


@dataclass(frozen=True)
class StoredPoint:
    """One point as written: its id, vectors and payload (the payload keys are those of INDEXED_FIELDS + more)."""

    id: str
    dense: np.ndarray | None
    sparse: SparseVector | None
    payload: dict


@dataclass(frozen=True)
class VectorQuery:
    using: str  # DENSE or SPARSE
    vector: np.ndarray | SparseVector
    limit: int
    filters: Filters = field(default_factory=Filters)


@dataclass(frozen=True)
class PointHit:
    paper_id: str
    kind: str
    number: int
    text: str
    page: int | None
    section: str | None
    score: float
    span: tuple[int, int] | None = None
    dense: float | None = None  # once fused (`Index.passages`): the dense side's own cosine, None if it missed it


def _as_utc(value: date, end: bool) -> str:
    moment = time.max if end else time.min
    return datetime.combine(value, moment, tzinfo=timezone.utc).isoformat()


@dataclass(frozen=True)
class AnyOf:
    """The payload field holds one of these values."""

    key: str
    values: tuple


@dataclass(frozen=True)
class Equals:
    key: str
    value: int | str


@dataclass(frozen=True)
class DateRange:
    """ISO datetimes, either end open (None)."""

    key: str
    gte: str | None
    lte: str | None


@dataclass(frozen=True)
class PublicOr:
    """The payload field is absent (a public point) or equals `value` (a point of that owner); `value` None:
    public points only."""

    key: str
    value: str | None


Condition = AnyOf | Equals | DateRange | PublicOr


def conditions(filters: Filters) -> list[Condition]:
    """The filter as store-neutral conditions, all of which must hold; each store spells them in its own API."""
    found: list[Condition] = []
    for key, values in (("categories", filters.categories), ("paper_id", filters.paper_ids), ("kind", filters.kinds)):
        if values:
            found.append(AnyOf(key, tuple(values)))
    if filters.researcher_id is not None:
        found.append(Equals("researcher_ids", filters.researcher_id))
    if filters.institution_id is not None:
        found.append(Equals("institution_ids", filters.institution_id))
    if filters.published_from or filters.published_to:
        gte = _as_utc(filters.published_from, end=False) if filters.published_from else None
        lte = _as_utc(filters.published_to, end=True) if filters.published_to else None
        found.append(DateRange("published", gte, lte))
    if filters.viewer != ANYONE:
        found.append(PublicOr("owner", filters.viewer))
    return found


def stored_point(point_id, vectors: dict | None, payload: dict | None) -> StoredPoint:
    """A point read back from either store (vectors by name; a sparse one has `indices` and `values`)."""
    vectors = vectors or {}
    dense, sparse = vectors.get(DENSE), vectors.get(SPARSE)
    return StoredPoint(
        str(point_id),
        None if dense is None else np.asarray(dense, dtype=np.float32),
        None if sparse is None else SparseVector(list(sparse.indices), list(sparse.values)),
        dict(payload or {}),
    )


def hit_of(payload: dict, score: float) -> PointHit:
    return PointHit(
        paper_id=payload["paper_id"],
        kind=payload.get("kind", "abstract"),
        number=payload.get("number", 0),
        text=payload.get("text") or "",
        page=payload.get("page"),
        section=payload.get("section"),
        score=float(score),
        span=tuple(payload["span"]) if payload.get("span") else None,
    )


class VectorStore(Protocol):
    layout: VectorLayout  # how this index keeps its dense vectors now (its own record, not the setting)

    def upsert(self, points: list[StoredPoint]) -> None: ...
    def delete_papers(self, paper_ids: list[str], kinds: tuple[str, ...]) -> None: ...
    def set_paper_payload(self, paper_id: str, payload: dict) -> None: ...
    def search(self, queries: list[VectorQuery]) -> list[list[PointHit]]: ...
    def count(self, filters: Filters | None = None) -> int: ...
    def dense_vectors(self, ids: list[str]) -> dict[str, np.ndarray]: ...
    def scroll(self, offset: str | None, limit: int) -> tuple[list[StoredPoint], str | None]: ...
    def optimize(self) -> None: ...
    def convert(self, layout: VectorLayout) -> None: ...
    def behind(self) -> list[str]: ...
    def close(self) -> None: ...
