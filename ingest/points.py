"""The one builder of index points: a paper's (or an upload's) abstract point, its windows and its full-text
passages, each carrying the same filter fields. Ingest, full text, rebuilds and users' uploads all build through
here, so a point of one kind has one shape whoever writes it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from ingest.fulltext import Passage
from retrieval.scholarly.models import Paper
from retrieval.vectors.embeddings import Embedded, SparseVector
from retrieval.vectors.index import IndexPoint, PointKind

NO_KEYWORDS = SparseVector([], [])  # a window's words are in its abstract point's BM25 vector


@dataclass(frozen=True)
class Filed:
    """What every point of one paper carries for filters: its categories, date, researchers and institutions, and
    for a user's upload its owner (only searches for that user see it)."""

    categories: list[str] = field(default_factory=list)
    published: datetime | None = None
    researcher_ids: list[int] = field(default_factory=list)
    institution_ids: list[int] = field(default_factory=list)
    owner: str | None = None

    @classmethod
    def of(cls, paper: Paper, people: dict | None = None) -> "Filed":
        researchers, institutions = (people or {}).get(paper.id, ([], []))
        return cls(paper.categories, paper.published, researchers, institutions)

    def fields(self) -> dict:
        return dict(categories=self.categories, published=self.published, researcher_ids=self.researcher_ids,
                    institution_ids=self.institution_ids, owner=self.owner)  # fmt: skip


def abstract_point(paper_id: str, vectors: Embedded, filed: Filed) -> IndexPoint:
    """The title and abstract: dense, and BM25 (with the authors' names for a catalog paper)."""
    return IndexPoint(paper_id, PointKind.ABSTRACT, 0, vectors, **filed.fields())


def window_points(paper_id: str, windows: list[tuple[np.ndarray, tuple[int, int]]], filed: Filed) -> list[IndexPoint]:
    """The rest of a long abstract, dense only, each window with its slice of the abstract's sentences."""
    return [IndexPoint(paper_id, PointKind.WINDOW, number, Embedded(dense, NO_KEYWORDS), span=span, **filed.fields())
            for number, (dense, span) in enumerate(windows, start=1)]  # fmt: skip


def passage_points(paper_id: str, found: list[Passage], vectors: list[Embedded], filed: Filed) -> list[IndexPoint]:
    """Full-text passages, dense and BM25, each with its page and section."""
    return [IndexPoint(paper_id, PointKind.PASSAGE, p.number, v, text=p.text, page=p.page, section=p.section,
                       **filed.fields())
            for p, v in zip(found, vectors, strict=True)]  # fmt: skip
