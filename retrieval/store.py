"""Where the vectors live, behind one small interface.

`EdgeStore` is the embedded default: Qdrant's own engine in this process (`qdrant-edge-py`), with HNSW,
payload indexes and sparse IDF, in a directory of the data dir. `ClientStore` speaks to a Qdrant server or
cluster through `qdrant-client` (given a URL); qdrant-client's own local mode also fits it, which the tests
use to check that both stores rank alike. Fusion and grouping happen above this layer, in `retrieval.index`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from pathlib import Path
from typing import Protocol

import numpy as np

from retrieval.embeddings import DENSE_DIM, SparseVector

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
}
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

    def is_empty(self) -> bool:
        """No restriction on which papers: `kinds` only says which points of a paper to search."""
        return self == Filters(kinds=self.kinds)


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


def _as_utc(value: date, end: bool) -> str:
    moment = time.max if end else time.min
    return datetime.combine(value, moment, tzinfo=timezone.utc).isoformat()


def conditions(filters: Filters) -> list[tuple]:
    """The filter as store-neutral conditions: ("any", key, values), ("value", key, value) or
    ("range", key, from, to) on ISO datetimes; each store spells them in its own API."""
    found: list[tuple] = []
    for key, values in (("categories", filters.categories), ("paper_id", filters.paper_ids), ("kind", filters.kinds)):
        if values:
            found.append(("any", key, list(values)))
    if filters.researcher_id is not None:
        found.append(("value", "researcher_ids", filters.researcher_id))
    if filters.institution_id is not None:
        found.append(("value", "institution_ids", filters.institution_id))
    if filters.published_from or filters.published_to:
        gte = _as_utc(filters.published_from, end=False) if filters.published_from else None
        lte = _as_utc(filters.published_to, end=True) if filters.published_to else None
        found.append(("range", "published", gte, lte))
    return found


def _hit(payload: dict, score: float) -> PointHit:
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
    def upsert(self, points: list[StoredPoint]) -> None: ...
    def delete_papers(self, paper_ids: list[str], kinds: tuple[str, ...]) -> None: ...
    def set_paper_payload(self, paper_id: str, payload: dict) -> None: ...
    def search(self, queries: list[VectorQuery]) -> list[list[PointHit]]: ...
    def count(self, filters: Filters | None = None) -> int: ...
    def optimize(self) -> None: ...
    def close(self) -> None: ...


class EdgeStore:
    """Qdrant's engine in process: one shard in a directory, owned by one process at a time.

    Up to `exact_up_to` points every search is exact (a SIMD scan: about 10 ms at 100k points here, see
    BENCHMARKS.md); the HNSW graph's approximation cost 0.004 nDCG@10 on SciFact train, for nothing a
    user would notice in speed at this size. Above it, HNSW, with ACORN when a filter is set.
    """

    def __init__(self, path: Path, exact_up_to: int = 250_000) -> None:
        import qdrant_edge as q

        self.q = q
        self.path = path
        self.exact_up_to = exact_up_to
        self._points: int | None = None
        try:
            if (path / "edge_config.json").exists() or any(path.glob("segments*")):
                self.shard = q.EdgeShard.load(str(path))
            else:
                path.mkdir(parents=True, exist_ok=True)
                self.shard = q.EdgeShard.create(str(path), self._config())
                self._create_indexes()
        except Exception as exc:  # another process holding the shard's write-ahead log lands here
            raise IndexUnavailable(
                f"cannot open the vector index at {path}: {exc} (is another ScholarLoom process using it?)"
            ) from exc

    def _config(self):
        q = self.q
        return q.EdgeConfig(
            vectors={DENSE: q.EdgeVectorParams(size=DENSE_DIM, distance=q.Distance.Cosine)},
            sparse_vectors={SPARSE: q.EdgeSparseVectorParams(modifier=q.Modifier.Idf)},
        )

    def _create_indexes(self) -> None:
        q = self.q
        kinds = {"keyword": q.PayloadSchemaType.Keyword, "integer": q.PayloadSchemaType.Integer}
        kinds["datetime"] = q.PayloadSchemaType.Datetime
        for name, kind in INDEXED_FIELDS.items():
            self.shard.update(q.UpdateOperation.create_field_index(name, kinds[kind]))

    def _filter(self, filters: Filters):
        q = self.q
        must = []
        for kind, key, *value in conditions(filters):
            if kind == "any":
                must.append(q.FieldCondition(key=key, match=q.MatchAny(any=value[0])))
            elif kind == "value":
                must.append(q.FieldCondition(key=key, match=q.MatchValue(value[0])))
            else:
                must.append(q.FieldCondition(key=key, range=q.RangeDateTime(gte=value[0], lte=value[1])))
        return q.Filter(must=must) if must else None

    def _params(self, filters: Filters):
        if self._points is None:
            self._points = self.shard.count(self.q.CountRequest(exact=True))
        if self._points <= self.exact_up_to:
            return self.q.SearchParams(exact=True)
        # A restrictive filter can cut HNSW's graph into pieces; ACORN explores two hops so recall holds.
        if filters.is_empty():
            return None
        return self.q.SearchParams(acorn=self.q.AcornSearchParams(enable=True))

    def upsert(self, points: list[StoredPoint]) -> None:
        q = self.q
        structs = []
        for p in points:
            vector = {}
            if p.dense is not None:
                vector[DENSE] = p.dense.tolist()
            if p.sparse is not None and p.sparse.indices:
                vector[SPARSE] = q.SparseVector(p.sparse.indices, p.sparse.values)
            structs.append(q.Point(id=p.id, vector=vector, payload=p.payload))
        if structs:
            self._update(q.UpdateOperation.upsert_points(structs))

    def delete_papers(self, paper_ids: list[str], kinds: tuple[str, ...]) -> None:
        if paper_ids:
            condition = self._filter(Filters(paper_ids=tuple(paper_ids), kinds=kinds))
            self._update(self.q.UpdateOperation.delete_points_by_filter(condition))

    def set_paper_payload(self, paper_id: str, payload: dict) -> None:
        """Overwrite some payload keys on every point of a paper (all kinds), vectors untouched."""
        condition = self._filter(Filters(paper_ids=(paper_id,)))
        self._update(self.q.UpdateOperation.set_payload_by_filter(condition, payload))

    def _update(self, operation) -> None:
        self._points = None
        try:
            self.shard.update(operation)
        except Exception as exc:
            raise IndexUnavailable(f"the vector index refused a write: {exc}") from exc

    def search(self, queries: list[VectorQuery]) -> list[list[PointHit]]:
        q = self.q
        requests = []
        for query in queries:
            vector = query.vector
            if isinstance(vector, SparseVector):
                vector = q.SparseVector(vector.indices, vector.values)
            else:
                vector = vector.tolist()
            requests.append(
                q.QueryRequest(
                    limit=query.limit,
                    query=q.Query.Nearest(vector, using=query.using),
                    filter=self._filter(query.filters),
                    params=self._params(query.filters),
                    with_payload=RETURNED_FIELDS,
                )
            )
        try:
            answers = self.shard.query_batch(q.QueryBatchRequest(requests))
        except Exception as exc:
            raise IndexUnavailable(f"the vector index did not answer: {exc}") from exc
        return [[_hit(p.payload, p.score) for p in answer] for answer in answers]

    def count(self, filters: Filters | None = None) -> int:
        try:
            return self.shard.count(self.q.CountRequest(exact=True, filter=self._filter(filters or Filters())))
        except Exception as exc:
            raise IndexUnavailable(f"the vector index did not answer: {exc}") from exc

    def optimize(self) -> None:
        """Build the HNSW graph and merge segments (blocks; seconds at 10k points, about half a minute at 100k)."""
        self.shard.optimize()
        self.shard.flush()

    def close(self) -> None:
        if self.shard is not None:
            self.shard.flush()
            self.shard.close()
            self.shard = None


class ClientStore:
    """A Qdrant server or cluster through qdrant-client (or qdrant-client's own local mode, used in tests)."""

    def __init__(self, client, collection: str, local: bool = False) -> None:
        from qdrant_client import models

        self.m = models
        self.client = client
        self.collection = collection
        self.local = local  # local mode is brute force in Python: payload indexes do nothing there
        try:
            self._ensure_collection()
        except Exception as exc:
            raise IndexUnavailable(f"cannot reach the vector index: {exc}") from exc

    @classmethod
    def connect(cls, url: str, collection: str, api_key: str | None = None) -> "ClientStore":
        from qdrant_client import QdrantClient

        return cls(QdrantClient(url=url, api_key=api_key, timeout=10), collection)

    def _ensure_collection(self) -> None:
        m = self.m
        if self.client.collection_exists(self.collection):
            return
        self.client.create_collection(
            self.collection,
            vectors_config={DENSE: m.VectorParams(size=DENSE_DIM, distance=m.Distance.COSINE)},
            sparse_vectors_config={SPARSE: m.SparseVectorParams(modifier=m.Modifier.IDF)},
        )
        if self.local:
            return
        schemas = {
            "keyword": m.PayloadSchemaType.KEYWORD,
            "integer": m.PayloadSchemaType.INTEGER,
            "datetime": m.PayloadSchemaType.DATETIME,
        }
        for name, kind in INDEXED_FIELDS.items():
            self.client.create_payload_index(self.collection, name, field_schema=schemas[kind])

    def _filter(self, filters: Filters):
        m = self.m
        must = []
        for kind, key, *value in conditions(filters):
            if kind == "any":
                must.append(m.FieldCondition(key=key, match=m.MatchAny(any=value[0])))
            elif kind == "value":
                must.append(m.FieldCondition(key=key, match=m.MatchValue(value=value[0])))
            else:
                must.append(m.FieldCondition(key=key, range=m.DatetimeRange(gte=value[0], lte=value[1])))
        return m.Filter(must=must) if must else None

    def upsert(self, points: list[StoredPoint]) -> None:
        m = self.m
        structs = []
        for p in points:
            vector = {}
            if p.dense is not None:
                vector[DENSE] = p.dense.tolist()
            if p.sparse is not None and p.sparse.indices:
                vector[SPARSE] = m.SparseVector(indices=p.sparse.indices, values=p.sparse.values)
            structs.append(m.PointStruct(id=p.id, vector=vector, payload=p.payload))
        if structs:
            self._write(self.client.upsert, points=structs)

    def delete_papers(self, paper_ids: list[str], kinds: tuple[str, ...]) -> None:
        if paper_ids:
            selector = self.m.FilterSelector(filter=self._filter(Filters(paper_ids=tuple(paper_ids), kinds=kinds)))
            self._write(self.client.delete, points_selector=selector)

    def set_paper_payload(self, paper_id: str, payload: dict) -> None:
        selector = self.m.FilterSelector(filter=self._filter(Filters(paper_ids=(paper_id,))))
        self._write(self.client.set_payload, payload=payload, points=selector)

    def _write(self, call, **arguments) -> None:
        try:
            call(self.collection, wait=True, **arguments)
        except Exception as exc:
            raise IndexUnavailable(f"the vector index refused a write: {exc}") from exc

    def search(self, queries: list[VectorQuery]) -> list[list[PointHit]]:
        m = self.m
        requests = []
        for query in queries:
            vector = query.vector
            if isinstance(vector, SparseVector):
                vector = m.SparseVector(indices=vector.indices, values=vector.values)
            else:
                vector = vector.tolist()
            requests.append(
                m.QueryRequest(
                    query=vector,
                    using=query.using,
                    filter=self._filter(query.filters),
                    limit=query.limit,
                    with_payload=RETURNED_FIELDS,
                )
            )
        try:
            answers = self.client.query_batch_points(self.collection, requests=requests)
        except Exception as exc:
            raise IndexUnavailable(f"the vector index did not answer: {exc}") from exc
        return [[_hit(p.payload, p.score) for p in answer.points] for answer in answers]

    def count(self, filters: Filters | None = None) -> int:
        try:
            flt = self._filter(filters or Filters())
            return self.client.count(self.collection, count_filter=flt, exact=True).count
        except Exception as exc:
            raise IndexUnavailable(f"the vector index did not answer: {exc}") from exc

    def optimize(self) -> None:
        """A server indexes by itself."""

    def close(self) -> None:
        self.client.close()
