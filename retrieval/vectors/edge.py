"""The embedded vector store: Qdrant's own engine in this process (`qdrant-edge-py`)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from retrieval.vectors.edge_shard import layout_on_disk, lock_folder, shard_behind, shard_config
from retrieval.vectors.embeddings import SparseVector
from retrieval.vectors.store import (
    ANYONE,
    DENSE,
    EXACT_FILTERED_UP_TO,
    INDEXED_FIELDS,
    RETURNED_FIELDS,
    SEGMENT_POINTS,
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


class EdgeStore:
    """Qdrant's engine in process: one shard in a directory, owned by one process at a time.

    Up to `exact_up_to` points every search is exact (a SIMD scan: about 10 ms at 100k points here, see
    BENCHMARKS.md); the HNSW graph's approximation cost 0.004 nDCG@10 on SciFact train, for nothing a
    user would notice in speed at this size. Above it, HNSW with a beam that widens as the filter narrows (`beam`),
    except that a filter leaving at most `EXACT_FILTERED_UP_TO` points is searched exactly.

    The shard's own guard is a lock on its write-ahead log, taken after its segments are opened: a second
    process that merely tries to load a shard in use truncates the sparse vectors' tracker journal under the
    first, whose next flush then fails for good ("tracker_journal.dat is shorter than expected"; qdrant-edge-py
    0.6). So this process locks `scholarloom.lock` beside the shard first and touches nothing when it cannot.
    """

    def __init__(
        self,
        path: Path,
        exact_up_to: int = 250_000,
        layout: VectorLayout = VectorLayout.INT8,
        segment_points: int = SEGMENT_POINTS,
    ) -> None:
        """Opens the shard in `path` as it was made (its own layout, whatever `layout` says: `convert` changes
        it), or makes one there with `layout`. Every `segment_points` points written, the graph of the segment
        they filled is built (see `SEGMENT_POINTS`)."""
        import qdrant_edge as q

        self.q = q
        self.path = path
        self.exact_up_to = exact_up_to
        self.segment_points = segment_points
        self._unbuilt = 0  # points written by this process since the last build of the graph
        self._points: int | None = None
        self._values: tuple[frozenset, frozenset] | None = None  # see `_held`
        self._written = 0  # writes finished (`_held` keeps values only if none finished while it read them)
        self.shard = None
        self._lock = lock_folder(path)
        try:
            if (path / "edge_config.json").exists() or any(path.glob("segments*")):
                self.shard = q.EdgeShard.load(str(path))
                self._create_indexes(set(self.shard.info().payload_schema))  # fields added since it was made
            else:
                path.mkdir(parents=True, exist_ok=True)
                self.shard = q.EdgeShard.create(str(path), shard_config(q, layout))
                self._create_indexes()
            self.layout = layout_on_disk(path)
        except Exception as exc:
            os.close(self._lock)
            raise IndexUnavailable(f"cannot open the vector index at {path}: {exc}") from exc

    def convert(self, layout: VectorLayout) -> None:
        """Keep the dense vectors as `layout` says from now on: the shard is opened again with that configuration
        and its segments are optimised (the int8 copies made, or dropped). Vectors and payloads are untouched."""
        if layout == self.layout:
            return
        self.shard.close()
        try:
            self.shard = self.q.EdgeShard.load(str(self.path), shard_config(self.q, layout))
            self.shard.optimize()
            self.shard.flush()
        except Exception as exc:
            self.shard = self.q.EdgeShard.load(str(self.path))  # open again as it is on disk, so it still answers
            raise IndexUnavailable(f"the vector index could not be converted to {layout}: {exc}") from exc
        finally:
            self._points = self._values = None
            self.layout = layout_on_disk(self.path)

    def _create_indexes(self, present: set[str] = frozenset()) -> None:
        q = self.q
        kinds = {"keyword": q.PayloadSchemaType.Keyword, "integer": q.PayloadSchemaType.Integer}
        kinds["datetime"] = q.PayloadSchemaType.Datetime
        for name, kind in INDEXED_FIELDS.items():
            if name not in present:
                self.shard.update(q.UpdateOperation.create_field_index(name, kinds[kind]))

    def _filter(self, filters: Filters):
        q = self.q
        must = []
        for condition in conditions(filters):
            match condition:
                case AnyOf(key, (value,)):  # checked once per point a search visits: one value, a cheaper check
                    must.append(q.FieldCondition(key=key, match=q.MatchValue(value)))
                case AnyOf(key, values):
                    must.append(q.FieldCondition(key=key, match=q.MatchAny(any=list(values))))
                case Equals(key, value):
                    must.append(q.FieldCondition(key=key, match=q.MatchValue(value)))
                case DateRange(key, gte, lte):
                    must.append(q.FieldCondition(key=key, range=q.RangeDateTime(gte=gte, lte=lte)))
                case PublicOr(key, None):
                    must.append(q.IsEmptyCondition(key=key))
                case PublicOr(key, value):
                    mine = q.FieldCondition(key=key, match=q.MatchValue(value))
                    must.append(q.Filter(should=[q.IsEmptyCondition(key=key), mine]))
        return q.Filter(must=must) if must else None

    def _needed(self, filters: Filters) -> Filters:
        """The filter less the conditions every point here meets: the kinds asked for when the shard holds no other
        kind, and whose private points may match when it holds nobody else's. Qdrant checks each condition at every
        point a filtered search visits: at 5.4M points, listing cs.DC's 89k points took 28 ms with these two beside
        it and 11 without, and the dense side's exact search 32 ms against 17 (BENCHMARKS.md, "Session 30")."""
        kinds, owners = self._held()
        if filters.kinds and kinds <= set(filters.kinds):
            filters = replace(filters, kinds=())
        if filters.viewer != ANYONE and owners <= {filters.viewer}:
            filters = replace(filters, viewer=ANYONE)
        return filters

    def _held(self) -> tuple[frozenset, frozenset]:
        """The kinds of point the shard holds, and (two of) the owners of its private points: the values the payload
        index holds, read in well under a millisecond at 5.4M points, again after each write. (The counts beside them
        are estimates, the values are not: a point with a value is in that value's list.)"""
        if self._values is None:
            q = self.q

            def values(key: str, limit: int) -> frozenset:
                return frozenset(hit.value for hit in self.shard.facet(q.FacetRequest(key=key, limit=limit)).hits)

            written = self._written
            # two owners are enough to know whether anyone but the viewer has one
            held = (values("kind", 10), values("owner", 2))
            if written == self._written:
                self._values = held
            return held
        return self._values

    def _params(self, filters: Filters, using: str, condition=None, limit: int = 10):
        q = self.q
        if self._points is None:
            self._points = self.shard.count(q.CountRequest(exact=True))
        rescored = None
        if using == DENSE and self.layout == VectorLayout.INT8:
            rescored = q.QuantizationSearchParams(rescore=True, oversampling=oversampling(limit))
        if self._points <= self.exact_up_to:
            return q.SearchParams(exact=True, quantization=rescored)
        # (the kinds of points asked for count in the share the beam widens for, not in choosing a scan)
        left = self._points if condition is None else self._estimate(condition)
        if not filters.is_empty() and left <= EXACT_FILTERED_UP_TO:  # a filter leaving few enough points to scan
            return q.SearchParams(exact=True, quantization=rescored)
        # Through the graph, a filter or not. ACORN (two-hop exploration for filters) cost 5-10x the time at 1M
        # points for recall the exact search of a narrow filter gives anyway (BENCHMARKS.md).
        share = left / max(1, self._points)
        return q.SearchParams(hnsw_ef=beam(limit, share) if using == DENSE else None, quantization=rescored)

    def _estimate(self, condition) -> int:
        """How many points a filter leaves, as the payload index estimates it (microseconds)."""
        return self.shard.count(self.q.CountRequest(exact=False, filter=condition))

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
            self._unbuilt += len(structs)
            if self._unbuilt >= self.segment_points:  # a segment is full: its graph now, not all at the end
                self.optimize()

    def delete_papers(self, paper_ids: list[str], kinds: tuple[str, ...]) -> None:
        if paper_ids:
            condition = self._filter(Filters(paper_ids=tuple(paper_ids), kinds=kinds, viewer=ANYONE))
            self._update(self.q.UpdateOperation.delete_points_by_filter(condition))

    def set_paper_payload(self, paper_id: str, payload: dict) -> None:
        """Overwrite some payload keys on every point of a paper (all kinds), vectors untouched."""
        condition = self._filter(Filters(paper_ids=(paper_id,), viewer=ANYONE))
        self._update(self.q.UpdateOperation.set_payload_by_filter(condition, payload))

    def _update(self, operation) -> None:
        self._points = self._values = None
        try:
            self.shard.update(operation)
        except Exception as exc:
            raise IndexUnavailable(f"the vector index refused a write: {exc}") from exc
        finally:  # a search during the write may have read the values before it: they are read again
            self._written += 1
            self._values = None

    def search(self, queries: list[VectorQuery]) -> list[list[PointHit]]:
        q = self.q
        requests = []
        for query in queries:
            vector = query.vector
            if isinstance(vector, SparseVector):
                vector = q.SparseVector(vector.indices, vector.values)
            else:
                vector = vector.tolist()
            filters = self._needed(query.filters)
            condition = self._filter(filters)
            requests.append(
                q.QueryRequest(
                    limit=query.limit,
                    query=q.Query.Nearest(vector, using=query.using),
                    filter=condition,
                    params=self._params(filters, query.using, condition, query.limit),
                    with_payload=RETURNED_FIELDS,
                )
            )
        try:
            answers = self.shard.query_batch(q.QueryBatchRequest(requests))
        except Exception as exc:
            raise IndexUnavailable(f"the vector index did not answer: {exc}") from exc
        return [[hit_of(p.payload, p.score) for p in answer] for answer in answers]

    def count(self, filters: Filters | None = None) -> int:
        try:
            condition = self._filter(filters or Filters(viewer=ANYONE))
            return self.shard.count(self.q.CountRequest(exact=True, filter=condition))
        except Exception as exc:
            raise IndexUnavailable(f"the vector index did not answer: {exc}") from exc

    def dense_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        """The stored dense vectors of these points (those that exist and have one)."""
        try:
            points = self.shard.retrieve(ids, False, True)
        except Exception as exc:
            raise IndexUnavailable(f"the vector index did not answer: {exc}") from exc
        found = {str(p.id): (p.vector or {}).get(DENSE) for p in points}
        return {i: np.asarray(v, dtype=np.float32) for i, v in found.items() if v is not None}

    def scroll(self, offset: str | None, limit: int) -> tuple[list[StoredPoint], str | None]:
        """Up to `limit` points as stored (vectors and payload), from `offset`; and where the next ones start."""
        request = self.q.ScrollRequest(offset=offset, limit=limit, with_payload=True, with_vector=True)
        try:
            records, following = self.shard.scroll(request)
        except Exception as exc:
            raise IndexUnavailable(f"the vector index did not answer: {exc}") from exc
        points = [stored_point(record.id, record.vector, record.payload) for record in records]
        return points, None if following is None else str(following)

    def behind(self) -> list[str]:
        """What this shard lacks that one made by this version has, each said in a sentence (from the configuration
        each of its segments keeps beside it): nothing for a shard this version made."""
        return shard_behind(self.path)

    def optimize(self) -> None:
        """Build the HNSW graph of the segments without one and merge small segments (blocks; seconds at 10k
        points, about half a minute at 100k, some ten minutes for a full segment)."""
        self._unbuilt = 0
        self.shard.optimize()
        self.shard.flush()

    def close(self) -> None:
        if self.shard is not None:
            try:
                self.shard.flush()
                self.shard.close()
            finally:
                self.shard = None
                os.close(self._lock)


def edge_folder(path: Path, collection: str) -> Path:
    """The embedded index's folder: the one `<collection>.current` names (a rebuild writes a new folder beside the
    old one, then points there), else `<collection>`."""
    pointer = path / "edge" / f"{collection}.current"
    name = pointer.read_text().strip() if pointer.is_file() else collection
    if not name or "/" in name or name.startswith("."):
        raise IndexUnavailable(f"{pointer} names no index folder ({name!r}): write the folder's name, or remove it")
    return path / "edge" / name


def point_edge_folder(path: Path, collection: str, folder: Path) -> None:
    """From now on `edge_folder` is `folder` (written beside and renamed: the pointer is never half-written)."""
    pointer = path / "edge" / f"{collection}.current"
    partial = pointer.with_suffix(".partial")
    partial.write_text(folder.name + "\n")
    partial.replace(pointer)
