"""A Qdrant server or cluster through qdrant-client (or qdrant-client's local mode, which the tests use)."""

from __future__ import annotations

import numpy as np

from retrieval.vectors.embeddings import DENSE_DIM, SparseVector
from retrieval.vectors.store import (
    ANYONE,
    BM25_SCAN_UP_TO,
    DENSE,
    HNSW_EF,
    INDEXED_FIELDS,
    RETURNED_FIELDS,
    SEGMENT_KB,
    SPARSE,
    AnyOf,
    DateRange,
    Equals,
    Filters,
    IndexUnavailable,
    PointHit,
    PublicOr,
    StoredPoint,
    VectorLayout,
    VectorQuery,
    beam,
    conditions,
    hit_of,
    oversampling,
    stored_point,
)


class ClientStore:
    """A Qdrant server or cluster through qdrant-client (or qdrant-client's own local mode, used in tests)."""

    def __init__(self, client, collection: str, local: bool = False, layout: VectorLayout = VectorLayout.INT8) -> None:
        """A collection made before keeps its own layout (`convert` changes it); a new one is made with `layout`."""
        from qdrant_client import models

        self.m = models
        self.client = client
        self.collection = collection
        self.local = local  # local mode is brute force in Python: payload indexes do nothing there
        try:
            self._ensure_collection(layout)
        except Exception as exc:
            raise IndexUnavailable(f"cannot reach the vector index: {exc}") from exc

    @classmethod
    def connect(
        cls, url: str, collection: str, api_key: str | None = None, layout: VectorLayout = VectorLayout.INT8
    ) -> "ClientStore":
        from qdrant_client import QdrantClient

        return cls(QdrantClient(url=url, api_key=api_key, timeout=10), collection, layout=layout)

    def _int8(self):
        m = self.m
        return m.ScalarQuantization(scalar=m.ScalarQuantizationConfig(type=m.ScalarType.INT8, quantile=0.99,
                                                                       always_ram=True))  # fmt: skip

    def _ensure_collection(self, layout: VectorLayout) -> None:
        m = self.m
        present: set[str] = set()
        if self.client.collection_exists(self.collection):
            info = self.client.get_collection(self.collection)
            present = set(info.payload_schema or {})
        else:
            int8 = layout == VectorLayout.INT8  # the int8 copies in memory, the originals on the server's disk
            dense = m.VectorParams(size=DENSE_DIM, distance=m.Distance.COSINE, on_disk=True if int8 else None,
                                   quantization_config=self._int8() if int8 else None)  # fmt: skip
            self.client.create_collection(
                self.collection,
                vectors_config={DENSE: dense},
                sparse_vectors_config={SPARSE: m.SparseVectorParams(
                    index=m.SparseIndexParams(full_scan_threshold=BM25_SCAN_UP_TO), modifier=m.Modifier.IDF)},
                optimizers_config=m.OptimizersConfigDiff(max_segment_size=SEGMENT_KB),  # the server builds as they fill
            )
            info = self.client.get_collection(self.collection)
        params = info.config.params.vectors[DENSE]
        quantised = params.quantization_config or info.config.quantization_config
        self.layout = VectorLayout.INT8 if quantised is not None else VectorLayout.FLOAT32
        if self.local:  # qdrant-client's local mode keeps no payload indexes
            return
        schemas = {
            "keyword": m.PayloadSchemaType.KEYWORD,
            "integer": m.PayloadSchemaType.INTEGER,
            "datetime": m.PayloadSchemaType.DATETIME,
        }
        for name, kind in INDEXED_FIELDS.items():
            if name not in present:  # a collection made before a field was added gets its index now
                self.client.create_payload_index(self.collection, name, field_schema=schemas[kind])

    def _filter(self, filters: Filters):
        m = self.m
        must = []
        for condition in conditions(filters):
            match condition:
                case AnyOf(key, (value,)):  # one value: a cheaper check at each point a search visits
                    must.append(m.FieldCondition(key=key, match=m.MatchValue(value=value)))
                case AnyOf(key, values):
                    must.append(m.FieldCondition(key=key, match=m.MatchAny(any=list(values))))
                case Equals(key, value):
                    must.append(m.FieldCondition(key=key, match=m.MatchValue(value=value)))
                case DateRange(key, gte, lte):
                    must.append(m.FieldCondition(key=key, range=m.DatetimeRange(gte=gte, lte=lte)))
                case PublicOr(key, None):
                    must.append(m.IsEmptyCondition(is_empty=m.PayloadField(key=key)))
                case PublicOr(key, value):
                    mine = m.FieldCondition(key=key, match=m.MatchValue(value=value))
                    must.append(m.Filter(should=[m.IsEmptyCondition(is_empty=m.PayloadField(key=key)), mine]))
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
            every = Filters(paper_ids=tuple(paper_ids), kinds=kinds, viewer=ANYONE)
            selector = self.m.FilterSelector(filter=self._filter(every))
            self._write(self.client.delete, points_selector=selector)

    def set_paper_payload(self, paper_id: str, payload: dict) -> None:
        selector = self.m.FilterSelector(filter=self._filter(Filters(paper_ids=(paper_id,), viewer=ANYONE)))
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
            params = None
            if query.using == DENSE:  # the server picks exact search or the graph itself; the graph's beam is ours
                # (the widest for a filter: what share of points it leaves would cost the server a count to learn)
                quantization = None
                if self.layout == VectorLayout.INT8:
                    quantization = m.QuantizationSearchParams(rescore=True, oversampling=oversampling(query.limit))
                ef = beam(query.limit) if query.filters.is_empty() else HNSW_EF
                params = m.SearchParams(hnsw_ef=ef, quantization=quantization)
            requests.append(
                m.QueryRequest(
                    query=vector,
                    using=query.using,
                    filter=self._filter(query.filters),
                    limit=query.limit,
                    params=params,
                    with_payload=RETURNED_FIELDS,
                )
            )
        try:
            answers = self.client.query_batch_points(self.collection, requests=requests)
        except Exception as exc:
            raise IndexUnavailable(f"the vector index did not answer: {exc}") from exc
        return [[hit_of(p.payload, p.score) for p in answer.points] for answer in answers]

    def count(self, filters: Filters | None = None) -> int:
        try:
            flt = self._filter(filters or Filters(viewer=ANYONE))
            return self.client.count(self.collection, count_filter=flt, exact=True).count
        except Exception as exc:
            raise IndexUnavailable(f"the vector index did not answer: {exc}") from exc

    def dense_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        """The stored dense vectors of these points (those that exist and have one)."""
        try:
            records = self.client.retrieve(self.collection, ids=ids, with_payload=False, with_vectors=[DENSE])
        except Exception as exc:
            raise IndexUnavailable(f"the vector index did not answer: {exc}") from exc
        found = {str(r.id): (r.vector or {}).get(DENSE) for r in records}
        return {i: np.asarray(v, dtype=np.float32) for i, v in found.items() if v is not None}

    def scroll(self, offset: str | None, limit: int) -> tuple[list[StoredPoint], str | None]:
        """Up to `limit` points as stored (vectors and payload), from `offset`; and where the next ones start."""
        try:
            records, following = self.client.scroll(self.collection, limit=limit, offset=offset, with_payload=True,
                                                    with_vectors=True)  # fmt: skip
        except Exception as exc:
            raise IndexUnavailable(f"the vector index did not answer: {exc}") from exc
        points = [stored_point(record.id, record.vector, record.payload) for record in records]
        return points, None if following is None else str(following)

    def optimize(self) -> None:
        """A server indexes by itself."""

    def convert(self, layout: VectorLayout) -> None:
        """Keep the dense vectors as `layout` says from now on; the server makes (or drops) the int8 copies in the
        background, and moves the originals to disk (or back to memory)."""
        if layout == self.layout:
            return
        m, int8 = self.m, layout == VectorLayout.INT8
        quantization = self._int8() if int8 else m.Disabled.DISABLED
        try:
            self.client.update_collection(self.collection, vectors_config={DENSE: m.VectorParamsDiff(on_disk=int8)},
                                          quantization_config=quantization)  # fmt: skip
        except Exception as exc:
            raise IndexUnavailable(f"the vector index could not be converted to {layout}: {exc}") from exc
        self.layout = layout

    def behind(self) -> list[str]:
        """Nothing to say: the server's collection is as it was made (its own configuration, which `scholarloom
        doctor` does not read)."""
        return []

    def close(self) -> None:
        self.client.close()
