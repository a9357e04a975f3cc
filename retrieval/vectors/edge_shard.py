"""The embedded shard's folder (`retrieval.vectors.edge`): the lock that keeps it one process's, the configuration a
shard is made with, and what the configuration its segments keep on disk says (its layout, what it lacks)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from retrieval.vectors.embeddings import DENSE_DIM
from retrieval.vectors.store import BM25_SCAN_UP_TO, DENSE, SEGMENT_KB, SPARSE, IndexUnavailable, VectorLayout


def shard_config(q, layout: VectorLayout):
    """The configuration a shard is made (or opened again) with, its dense vectors kept as `layout` says (`q`: the
    `qdrant_edge` module)."""
    if layout == VectorLayout.INT8:  # int8 copies pinned in memory; the float32 originals read from disk
        int8 = q.ScalarQuantizationConfig(type=q.ScalarType.Int8, quantile=0.99, memory=q.Memory.Pinned)
        dense = q.EdgeVectorParams(size=DENSE_DIM, distance=q.Distance.Cosine, quantization_config=int8,
                                   memory=q.Memory.Cold)  # fmt: skip
    else:
        dense = q.EdgeVectorParams(size=DENSE_DIM, distance=q.Distance.Cosine)
    return q.EdgeConfig(
        vectors={DENSE: dense},
        # (kept by each segment as it is made: a shard made before keeps Qdrant's default, see `shard_behind`)
        sparse_vectors={SPARSE: q.EdgeSparseVectorParams(full_scan_threshold=BM25_SCAN_UP_TO,
                                                         modifier=q.Modifier.Idf)},  # fmt: skip
        optimizers=q.EdgeOptimizersConfig(max_segment_size=SEGMENT_KB),
    )


def shard_behind(path: Path) -> list[str]:
    """What the shard in `path` lacks that one made by this version has, each said in a sentence (from the
    configuration each of its segments keeps beside it): nothing for a shard this version made."""
    for kept in path.glob("segments/*/segment.json"):
        try:
            sparse = json.loads(kept.read_text())["config"]["sparse_vector_data"][SPARSE]["index"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if (sparse.get("full_scan_threshold") or 0) < BM25_SCAN_UP_TO:
            return [f"its BM25 side reads the inverted lists whole under a filter leaving up to "
                    f"{BM25_SCAN_UP_TO:,} of a segment's points, where an index made now scores that filter's "
                    "points (at 5.4M points, a 1.4% category: 23 ms p50 against 6)"]  # fmt: skip
    return []


def layout_on_disk(path: Path) -> VectorLayout:
    """How the shard in `path` keeps its dense vectors, from the configuration it keeps beside its segments."""
    try:
        dense = json.loads((path / "edge_config.json").read_text())["vectors"][DENSE]
    except (OSError, ValueError, KeyError, TypeError):
        return VectorLayout.FLOAT32
    return VectorLayout.INT8 if (dense.get("quantization_config") or {}).get("scalar") else VectorLayout.FLOAT32


def lock_folder(path: Path) -> int:
    """An exclusive lock on `path`/scholarloom.lock, held through the returned descriptor (released when it is
    closed, or when the process dies); IndexUnavailable at once when another process holds it."""
    import fcntl

    path.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path / "scholarloom.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(descriptor)
        raise IndexUnavailable(
            f"the vector index at {path} is in use by another ScholarLoom process (`scholarloom serve`?)"
        ) from exc
    return descriptor
