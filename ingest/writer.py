"""The write side: every ingest step embeds and writes into the archive through one `Writer`.

A `Writer` holds the catalog (its ledger), the vector index and the encoder, and is the one place ingest turns text
into index points: a catalog paper's abstract point and its windows, a paper's full-text passages, an upload's
description and passages, a point's new keywords or filter fields. What each point embeds is written here too
(`index_text`, `keyword_text`, `abstract_windows`, `upload_text`) and how a PDF's body is cut into passages
(`passages`: windows of sentences that never cross a page, each with its page and section); the points themselves
are built by `retrieval.vectors.index`. The steps (`ingest.indexing`, `ingest.pdfs`, `ingest.rebuild`) decide what
to write; this module writes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ingest.pdf_text import blocks
from retrieval.library.uploads import KINDS
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Paper
from retrieval.vectors.embeddings import DENSE_MAX_TOKENS, Embedded, Embedder, sentence_windows, split_sentences
from retrieval.vectors.encoder import Windowed, normalised
from retrieval.vectors.index import Index
from retrieval.vectors.points import (
    ABSTRACT_KINDS,
    PASSAGE_KINDS,
    Filed,
    IndexPoint,
    PointKind,
    abstract_point,
    passage_points,
    window_points,
)
from retrieval.vectors.store import StoredPoint

People = dict[str, tuple[list[int], list[int]]]  # paper id -> (researcher ids, institution ids)
PASSAGE_TOKENS = 200


@dataclass(frozen=True)
class Windowing:
    """How abstracts are cut for the dense side: windows of `tokens` word pieces (title included), half
    overlapping or not. Short windows (a sentence or two) let a one-sentence claim meet the sentence that
    supports it; size and overlap were chosen on SciFact train (BENCHMARKS.md): 80 tokens without overlap
    ranked as well as with it, for 14% fewer windows."""

    tokens: int = 80
    overlap: bool = False
    # Each window's vector pooled from its abstract's pass: 2x faster, SciFact test 0.722-0.725, below the 0.731 floor
    # (BENCHMARKS.md, "The encoder"); for `bench retrieval --pooled-windows`.
    pooled: bool = False
    # The abstract point's dense vector from a pass of its own over the title and abstract, beside its windows'
    # (before issue 38's import step; `bench retrieval --whole-abstract`). By default, an abstract with windows is
    # the mean of its windows' vectors: the encoder reads each word once, not twice (BENCHMARKS.md, "The import").
    whole_abstract: bool = False


def index_text(paper: Paper) -> str:
    """What a paper's abstract point embeds: the title, then the abstract."""
    title = paper.title.rstrip()
    joiner = " " if title.endswith((".", "?", "!")) else ". "
    return f"{title}{joiner}{paper.abstract}".strip() if paper.abstract else title


def keyword_text(paper: Paper, names: list[str]) -> str:
    """What a paper's abstract point gives BM25: its title and abstract, then its authors' names as written, so a
    query with a name finds the paper by keyword too (the dense side reads the title and abstract only)."""
    return index_text(paper) + ("\n" + "; ".join(names) if names else "")


def upload_text(title: str, abstract: str) -> str:
    """What an upload's description point embeds."""
    return f"{title}. {abstract}".strip(" .")


def abstract_reading(paper: Paper, pieces, windowing: Windowing = Windowing()) -> Windowed:
    """How the encoder reads a paper's abstract point and its windows (`retrieval.vectors.encoder`): the title, then
    the abstract's sentences; windows of `windowing.tokens` word pieces, the title included, as slices of the
    sentences (none when title and abstract fit one window)."""
    text = index_text(paper)
    if not paper.abstract:
        return Windowed(text, pieces([text])[0], [], [])
    sentences = split_sentences(paper.abstract)
    head_pieces, *parts = pieces([_head(paper), *sentences])
    limit = min(windowing.tokens, DENSE_MAX_TOKENS) - 2
    if len(head_pieces) + sum(len(p) for p in parts) <= limit:
        return Windowed(text, head_pieces, parts, [])
    budget = max(24, limit - len(head_pieces))
    return Windowed(text, head_pieces, parts, sentence_windows([len(p) for p in parts], budget, windowing.overlap))


def mean_vector(vectors: list[np.ndarray]) -> np.ndarray:
    """The windows' mean, L2-normalised: a paper's vector read from its windows."""
    return normalised(np.mean(np.stack(vectors), axis=0))


def window_texts(paper: Paper, reading: Windowed) -> list[str]:
    """Each window of a reading as a text of its own: the title, then the window's sentences."""
    sentences = split_sentences(paper.abstract)
    return [" ".join([_head(paper), *sentences[a:b]]) for a, b in reading.windows]


def _head(paper: Paper) -> str:
    head = paper.title.rstrip()
    return head if head.endswith((".", "?", "!")) else head + "."


@dataclass(frozen=True)
class Passage:
    number: int
    page: int  # 1-based, as a reader counts
    section: str | None
    text: str


def passages(
    pages: list[str], count_tokens: Callable[[list[str]], list[int]], budget: int = PASSAGE_TOKENS
) -> list[Passage]:
    """The paper's body as passages of at most `budget` tokens (a long sentence may exceed it alone)."""
    found: list[Passage] = []
    for block in blocks(pages):
        sentences = split_sentences(re.sub(r"\s+", " ", block.text), min_chars=1)
        if not sentences:
            continue
        lengths = count_tokens(sentences)
        for start, end in sentence_windows(lengths, budget, overlap=False):
            text = " ".join(sentences[start:end]).strip()
            if len(text) >= 40:  # a caption fragment or a stray line is not worth a point
                found.append(Passage(len(found), block.page, block.section, text))
    return found


def filed(paper: Paper, people: People | None = None) -> Filed:
    """What every point of a catalog paper carries for filters (`people`: paper id -> researchers, institutions)."""
    researchers, institutions = (people or {}).get(paper.id, ([], []))
    return Filed(paper.categories, paper.published, researchers, institutions)


@dataclass(frozen=True)
class Writer:
    catalog: Catalog
    index: Index
    embedder: Embedder

    @classmethod
    def of(cls, archive) -> Writer:
        """The writer of an archive (`retrieval.archive.Archive`, or anything holding the three stores)."""
        return cls(archive.catalog, archive.index, archive.embedder)

    def into(self, index: Index) -> Writer:
        """The same catalog and encoder writing into another index (a rebuild's new one)."""
        return replace(self, index=index)

    def encoding_with(self, embedder: Embedder) -> Writer:
        """The same stores with another encoder (one that reads a vector book first)."""
        return replace(self, embedder=embedder)

    # --- text into passages -------------------------------------------------------------------------------
    def passages(self, pages: list[str]) -> list[Passage]:
        """A PDF's page texts cut into passages the encoder reads whole (`passages`)."""
        return passages(pages, self.embedder.count_tokens)

    # --- catalog papers -----------------------------------------------------------------------------------
    def abstracts(self, papers: list[Paper], people: People, names: dict, windowing: Windowing) -> None:
        """Each paper's abstract point (title and abstract dense; with the authors' names, BM25) and its windows
        (dense), replacing the papers' earlier ones together, so a shorter abstract leaves no stale window."""
        embedder = self.embedder
        readings = [abstract_reading(p, embedder.pieces, windowing) for p in papers]
        keywords = embedder.sparse([keyword_text(p, names.get(p.id, [])) for p in papers])
        points: list[IndexPoint] = []
        if windowing.pooled:
            read = embedder.windowed(readings)
        else:  # each window a text of its own; the abstract their mean, or a text of its own when it has none
            texts = [window_texts(p, r) for p, r in zip(papers, readings, strict=True)]
            whole = [r.text for r, own in zip(readings, texts, strict=True) if windowing.whole_abstract or not own]
            wholes = iter(embedder.dense(whole))
            windows = iter(embedder.dense([t for own in texts for t in own]))
            read = []
            for own in texts:
                vectors = [next(windows) for _ in own]
                vector = next(wholes) if windowing.whole_abstract or not own else mean_vector(vectors)
                read.append((vector, vectors))
        for paper, reading, (vector, windows), sparse in zip(papers, readings, read, keywords, strict=True):
            fields = filed(paper, people)
            points.append(abstract_point(paper.id, Embedded(vector, sparse), fields))
            points += window_points(paper.id, list(zip(windows, reading.windows, strict=True)), fields)
        self.index.replace([p.id for p in papers], points, ABSTRACT_KINDS)

    def stored_vector(self, paper_id: str) -> np.ndarray | None:
        """The dense vector a paper's abstract point was indexed with, when the index still holds it."""
        return self.index.abstract_vector(paper_id)

    def keywords(self, papers: list[tuple[Paper, np.ndarray]], people: People, names: dict) -> None:
        """A new BM25 vector for each paper's abstract point (its authors' names changed), beside the dense vector
        it was indexed with; its windows stay."""
        sparse = self.embedder.sparse([keyword_text(p, names.get(p.id, [])) for p, _ in papers])
        self.index.upsert([abstract_point(p.id, Embedded(dense, words), filed(p, people))
                           for (p, dense), words in zip(papers, sparse, strict=True)])  # fmt: skip

    def fields(self, paper: Paper, people: People) -> None:
        """New filter fields on every point of the paper (abstract, windows, passages); no vector changes."""
        researchers, institutions = people.get(paper.id, ([], []))
        self.index.set_paper_fields(paper.id, paper.categories, paper.published, researchers, institutions)

    def full_text(self, paper: Paper, pages: list[str], people: People | None = None) -> int:
        """Cut one paper's page texts into passages, embed them and replace the paper's passages; how many."""
        found = self.passages(pages)
        vectors = self.embedder.documents([p.text for p in found]) if found else []
        self.index.replace([paper.id], passage_points(paper.id, found, vectors, filed(paper, people)), PASSAGE_KINDS)
        return len(found)

    def mark(self, stage: str, digests: dict[str, str]) -> None:
        """The ledger: what was written for each paper at this stage, so a rerun skips what did not change."""
        self.catalog.mark_all(stage, digests)

    def optimize(self) -> None:
        """The store builds its search graph, once after a run."""
        self.index.optimize()

    # --- uploads ------------------------------------------------------------------------------------------
    def upload(self, point_paper_id: str, owner: str, description: str, found: list[Passage]) -> None:
        """An upload's description point and passages, its owner's name in every payload; earlier ones replaced."""
        vectors = self.embedder.documents([description, *(p.text for p in found)])
        points = [abstract_point(point_paper_id, vectors[0], Filed(owner=owner))]
        points += passage_points(point_paper_id, found, vectors[1:], Filed(owner=owner))
        self.index.replace([point_paper_id], points, kinds=KINDS)

    def describe(self, point_paper_id: str, owner: str, description: str) -> None:
        """An upload's description point again (its title or abstract corrected); its passages stay."""
        vector = self.embedder.documents([description])[0]
        point = abstract_point(point_paper_id, vector, Filed(owner=owner))
        self.index.replace([point_paper_id], [point], kinds=(PointKind.ABSTRACT.value,))

    def forget(self, point_paper_ids: list[str], kinds: tuple[str, ...] = KINDS) -> None:
        """Every point of these ids (of these kinds) leaves the index."""
        self.index.replace(point_paper_ids, [], kinds=kinds)

    # --- points carried over ------------------------------------------------------------------------------
    def again(self, carried: list[tuple[StoredPoint, str]]) -> None:
        """Points read from another index, each embedded again from its text with its payload kept (a rebuild)."""
        vectors = self.embedder.documents([text for _, text in carried]) if carried else []
        self.index.load([StoredPoint(p.id, v.dense, v.sparse, p.payload)
                         for (p, _), v in zip(carried, vectors, strict=True)])  # fmt: skip

