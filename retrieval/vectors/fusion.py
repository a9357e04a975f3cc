"""How dense and BM25 scores become one ranking.

Each side's candidate scores are divided by that side's best score, and the two are mixed with a fixed
weight; a candidate one side did not return counts 0 there. Reciprocal-rank fusion throws the score gaps
away, and min-max stretches the arbitrary worst candidate to 0: both ranked worse on SciFact train (see
BENCHMARKS.md). The method, weight and depth below were chosen on the SciFact train queries only.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

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
