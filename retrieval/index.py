"""The vector index: one Qdrant collection of abstracts and passages with dense and sparse vectors."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from pathlib import Path

from retrieval.embeddings import DENSE_DIM, Embedded

DENSE = "dense"
SPARSE = "bm25"
_NAMESPACE = uuid.UUID("6f1f5d1e-8f7c-4a4e-9d0a-5c1a2b3c4d5e")


class IndexUnavailable(RuntimeError):
    """The vector store cannot be reached or opened."""


def point_id(paper_id: str, kind: str, number: int = 0) -> str:
    """A stable UUID from the point's key, so rewriting a paper overwrites its points."""
    return str(uuid.uuid5(_NAMESPACE, f"{paper_id}#{kind}#{number}"))


@dataclass(frozen=True)
class IndexPoint:
    paper_id: str
    kind: str  # "abstract" or "passage"
    number: int
    text: str
    vectors: Embedded
    categories: list[str] = field(default_factory=list)
    published: datetime | None = None
    researcher_ids: list[int] = field(default_factory=list)
    institution_ids: list[int] = field(default_factory=list)
    page: int | None = None


@dataclass(frozen=True)
class Filters:
    """Restrictions every search may carry."""

    categories: tuple[str, ...] = ()
    published_from: date | None = None
    published_to: date | None = None
    paper_ids: tuple[str, ...] = ()
    researcher_id: int | None = None
    institution_id: int | None = None
    kind: str | None = None


@dataclass(frozen=True)
class PointHit:
    paper_id: str
    kind: str
    number: int
    text: str
    page: int | None
    score: float


def _as_utc(value: date, end: bool) -> datetime:
    moment = time.max if end else time.min
    return datetime.combine(value, moment, tzinfo=timezone.utc)


class Index:
    def __init__(self, client, collection: str, local: bool = False) -> None:
        self.client = client
        self.collection = collection
        self.local = local  # embedded qdrant-client store: brute force, payload indexes do nothing

    @classmethod
    def open(
        cls, collection: str, *, path: Path | None = None, url: str | None = None, api_key: str | None = None
    ) -> "Index":
        from qdrant_client import QdrantClient

        try:
            if url:
                client = QdrantClient(url=url, api_key=api_key, timeout=10)
            else:
                assert path is not None
                path.mkdir(parents=True, exist_ok=True)
                client = QdrantClient(path=str(path))
        except Exception as exc:  # a second process holding the embedded store's lock lands here
            raise IndexUnavailable(f"cannot open the vector index ({url or path}): {exc}") from exc
        index = cls(client, collection, local=not url)
        index.ensure_collection()
        return index

    def close(self) -> None:
        self.client.close()

    def ensure_collection(self) -> None:
        from qdrant_client import models

        if self.client.collection_exists(self.collection):
            return
        self.client.create_collection(
            self.collection,
            vectors_config={DENSE: models.VectorParams(size=DENSE_DIM, distance=models.Distance.COSINE)},
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        )
        if self.local:
            return
        for name, schema in (
            ("paper_id", models.PayloadSchemaType.KEYWORD),
            ("kind", models.PayloadSchemaType.KEYWORD),
            ("categories", models.PayloadSchemaType.KEYWORD),
            ("published", models.PayloadSchemaType.DATETIME),
            ("researcher_ids", models.PayloadSchemaType.INTEGER),
            ("institution_ids", models.PayloadSchemaType.INTEGER),
        ):
            self.client.create_payload_index(self.collection, name, field_schema=schema)

    def count(self) -> int:
        return self.client.count(self.collection, exact=True).count

    def upsert(self, points: list[IndexPoint]) -> None:
        from qdrant_client import models

        if not points:
            return
        structs = [
            models.PointStruct(
                id=point_id(p.paper_id, p.kind, p.number),
                vector={
                    DENSE: p.vectors.dense.tolist(),
                    SPARSE: models.SparseVector(indices=p.vectors.sparse.indices, values=p.vectors.sparse.values),
                },
                payload={
                    "paper_id": p.paper_id,
                    "kind": p.kind,
                    "number": p.number,
                    "text": p.text,
                    "page": p.page,
                    "categories": p.categories,
                    "published": p.published.isoformat() if p.published else None,
                    "researcher_ids": p.researcher_ids,
                    "institution_ids": p.institution_ids,
                },
            )
            for p in points
        ]
        self.client.upsert(self.collection, points=structs, wait=True)

    def _filter(self, filters: Filters):
        from qdrant_client import models

        must = []
        if filters.categories:
            must.append(models.FieldCondition(key="categories", match=models.MatchAny(any=list(filters.categories))))
        if filters.paper_ids:
            must.append(models.FieldCondition(key="paper_id", match=models.MatchAny(any=list(filters.paper_ids))))
        if filters.kind:
            must.append(models.FieldCondition(key="kind", match=models.MatchValue(value=filters.kind)))
        if filters.researcher_id is not None:
            must.append(
                models.FieldCondition(key="researcher_ids", match=models.MatchValue(value=filters.researcher_id))
            )
        if filters.institution_id is not None:
            must.append(
                models.FieldCondition(key="institution_ids", match=models.MatchValue(value=filters.institution_id))
            )
        if filters.published_from or filters.published_to:
            must.append(
                models.FieldCondition(
                    key="published",
                    range=models.DatetimeRange(
                        gte=_as_utc(filters.published_from, end=False) if filters.published_from else None,
                        lte=_as_utc(filters.published_to, end=True) if filters.published_to else None,
                    ),
                )
            )
        return models.Filter(must=must) if must else None

    def hybrid(self, query: Embedded, filters: Filters, limit: int, prefetch: int) -> list[PointHit]:
        """Dense and BM25 candidates fused by reciprocal rank; ties broken by paper id."""
        from qdrant_client import models

        query_filter = self._filter(filters)
        prefetches = [models.Prefetch(query=query.dense.tolist(), using=DENSE, limit=prefetch, filter=query_filter)]
        if query.sparse.indices:
            sparse = models.SparseVector(indices=query.sparse.indices, values=query.sparse.values)
            prefetches.append(models.Prefetch(query=sparse, using=SPARSE, limit=prefetch, filter=query_filter))
        try:
            response = self.client.query_points(
                self.collection,
                prefetch=prefetches,
                query=models.FusionQuery(fusion=models.Fusion.RRF),
                limit=limit,
                with_payload=True,
            )
        except Exception as exc:
            raise IndexUnavailable(f"the vector index did not answer: {exc}") from exc
        hits = [
            PointHit(
                paper_id=p.payload["paper_id"],
                kind=p.payload["kind"],
                number=p.payload.get("number", 0),
                text=p.payload.get("text", ""),
                page=p.payload.get("page"),
                score=p.score,
            )
            for p in response.points
        ]
        return sorted(hits, key=lambda h: (-h.score, h.paper_id, h.number))
