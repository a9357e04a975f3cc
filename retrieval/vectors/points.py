"""The index's points: their kinds, their stable ids, and the one builder of each kind (an abstract, the windows of
a long one, a full text's passages), with the fields every point of a paper carries for filters."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol

import numpy as np

from retrieval.vectors.embeddings import Embedded, SparseVector
from retrieval.vectors.store import StoredPoint


class PointKind(StrEnum):
    """What a point of the index holds."""

    ABSTRACT = "abstract"  # a paper's title and abstract (dense + BM25)
    WINDOW = "window"  # the rest of a long abstract (dense only)
    PASSAGE = "passage"  # a passage of the full text, with its page (dense + BM25)


ABSTRACT_KINDS = (PointKind.ABSTRACT.value, PointKind.WINDOW.value)  # plain strings: what filters send the store
PASSAGE_KINDS = (PointKind.PASSAGE.value,)
_NAMESPACE = uuid.UUID("6f1f5d1e-8f7c-4a4e-9d0a-5c1a2b3c4d5e")


def point_id(paper_id: str, kind: str, number: int = 0) -> str:
    """A stable UUID from the point's key, so rewriting a paper overwrites its points."""
    return str(uuid.uuid5(_NAMESPACE, f"{paper_id}#{str(kind)}#{number}"))


@dataclass(frozen=True)
class IndexPoint:
    paper_id: str
    kind: PointKind
    number: int
    vectors: Embedded  # a window carries no BM25 vector (its words are in the abstract point's)
    text: str = ""
    categories: list[str] = field(default_factory=list)
    published: datetime | None = None
    researcher_ids: list[int] = field(default_factory=list)
    institution_ids: list[int] = field(default_factory=list)
    page: int | None = None
    section: str | None = None
    span: tuple[int, int] | None = None  # a window's slice of the abstract's sentences
    owner: str | None = None  # a user's private upload: only searches for that user see it

    def stored(self) -> StoredPoint:
        sparse = self.vectors.sparse if self.kind != PointKind.WINDOW else None
        payload = {
            "paper_id": self.paper_id,
            "kind": str(self.kind),
            "number": self.number,
            "categories": self.categories,
            "published": self.published.isoformat() if self.published else None,
            "researcher_ids": self.researcher_ids,
            "institution_ids": self.institution_ids,
        }
        if self.text:
            payload["text"] = self.text
        if self.page is not None:
            payload["page"] = self.page
        if self.section:
            payload["section"] = self.section
        if self.span:
            payload["span"] = list(self.span)
        if self.owner:
            payload["owner"] = self.owner
        return StoredPoint(point_id(self.paper_id, self.kind, self.number), self.vectors.dense, sparse, payload)


class PassageText(Protocol):
    """A passage of a PDF's text as the full-text reader cuts it (`ingest.writer.Passage`)."""

    number: int
    page: int
    section: str | None
    text: str


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


def passage_points(
    paper_id: str, found: Sequence[PassageText], vectors: list[Embedded], filed: Filed
) -> list[IndexPoint]:
    """Full-text passages, dense and BM25, each with its page and section."""
    return [IndexPoint(paper_id, PointKind.PASSAGE, p.number, v, text=p.text, page=p.page, section=p.section,
                       **filed.fields())
            for p, v in zip(found, vectors, strict=True)]  # fmt: skip

