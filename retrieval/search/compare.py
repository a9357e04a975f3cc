"""Comparison tables: for each paper and each aspect ("task", "data set", ...), the sentence of that paper that
answers the aspect best, from its abstract or its full text (with the page).

Extractive on purpose: the table works without a language model, and a model that writes short answers from it
(the chat) cites the very sentences shown. Every candidate sentence comes from a search restricted to one paper, so
a cell can never quote another paper.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Paper
from retrieval.search.hybrid import clean_query
from retrieval.vectors.embeddings import Embedded, Embedder, split_sentences
from retrieval.vectors.index import Filters, Index

MAX_PAPERS = 8
MAX_ASPECTS = 6
MAX_ASPECT_CHARS = 60
DEFAULT_ASPECTS = ("task", "data set", "method", "main result")
# What a default aspect means, in words (a bare "task" matches too little), and the cue words that mark it.
ASPECT_QUERIES = {
    "task": "the task or problem this paper addresses",
    "data set": "the data set, corpus or benchmark used for training and evaluation",
    "method": "the method, model or approach this paper proposes",
    "main result": "the main result: what the approach achieves, improves or outperforms",
}
ASPECT_CUES = {
    "task": r"task|problem|goal|aim|challeng\w*|address\w*|important to",
    "data set": r"data ?sets?|corpus|corpora|benchmarks?|annotat\w+|training data|evaluation sets?",
    "method": r"we (?:propose|present|introduce|describe|develop)\w*|approach|method|model|architecture|mechanism\w*",
    "main result": r"outperform\w*|state[- ]of[- ]the[- ]art|achiev\w+|improv\w+|results? show|we show|accuracy"
    r"|correlat\w+",
}
# Where an abstract says it: the problem first, the results last (a slope over the sentence's relative position).
POSITION = {"task": -1.0, "main result": 1.0}
# How the evidence adds up: meaning (cosine, about 0.1-0.7), cue words (0 to 1), the abstract (the paper's own
# summary, written to state the default aspects; for another aspect the full text more often holds the answer, so
# the abstract is favoured less), and the abstract's order. Chosen on the judged set
# (tests/fixtures/compare_judged.jsonl; BENCHMARKS.md gives the figures around these values).
CUE_WEIGHT, POSITION_WEIGHT = 0.1, 0.3
ABSTRACT_WEIGHT = {"default": 0.3, "other": 0.2}
PASSAGES_PER_CELL = 3
# Sections whose sentences never answer an aspect of the paper itself (they describe other papers).
_SKIPPED_SECTIONS = re.compile(r"\b(references|bibliography|acknowledg\w*|related work|appendix)\b", re.I)
_MIN_SENTENCE = 30
_MAX_SENTENCE = 600


@dataclass(frozen=True)
class Cell:
    paper_id: str
    aspect: str
    text: str
    source: str  # "abstract" or "full text"
    page: int | None
    score: float

    @property
    def where(self) -> str:
        return f"p. {self.page}" if self.page is not None else "abstract"


@dataclass(frozen=True)
class Comparison:
    papers: list[Paper]
    aspects: list[str]
    cells: dict[tuple[str, str], Cell]
    unknown: list[str]  # ids asked for that the archive does not hold

    def cell(self, paper_id: str, aspect: str) -> Cell | None:
        return self.cells.get((paper_id, aspect))


def clean_aspects(aspects: list[str] | tuple[str, ...] | None) -> list[str]:
    """The aspects asked for, cleaned, without repeats and capped; the default set when none is left."""
    kept: list[str] = []
    for raw in aspects or ():
        text = clean_query(raw)[:MAX_ASPECT_CHARS].strip(" ,;")
        if text and text.lower() not in (k.lower() for k in kept):
            kept.append(text)
    return kept[:MAX_ASPECTS] or list(DEFAULT_ASPECTS)


def aspect_query(aspect: str) -> str:
    return ASPECT_QUERIES.get(aspect.lower(), aspect)


def aspect_cues(aspect: str) -> re.Pattern:
    """The words that mark a sentence about the aspect: a default aspect's cue list, or the aspect's own words
    (their first five letters, so "applications" meets "applied" and "application")."""
    if (cues := ASPECT_CUES.get(aspect.lower())) is None:
        stems = [re.escape(w[:5]) for w in re.findall(r"[^\W\d_]{3,}", aspect.lower())]
        cues = "|".join(f"{s}\\w*" for s in stems) or r"(?!)"
    return re.compile(rf"\b(?:{cues})\b", re.I)


def compare(
    catalog: Catalog, index: Index, embedder: Embedder, paper_ids: list[str], aspects: list[str] | None = None
) -> Comparison:
    """The table for these papers (unknown ids listed apart, repeats dropped, at most `MAX_PAPERS`) and aspects."""
    resolved: list[str] = []
    unknown: list[str] = []
    for raw in paper_ids[: 2 * MAX_PAPERS]:
        found = catalog.resolve_paper_id(raw)
        if found is None:
            unknown.append(raw[:100])
        elif found not in resolved:
            resolved.append(found)
    resolved = resolved[:MAX_PAPERS]
    by_id = catalog.papers(resolved)
    papers = [by_id[pid] for pid in resolved if pid in by_id]
    wanted = clean_aspects(aspects)
    cells: dict[tuple[str, str], Cell] = {}
    for aspect in wanted:
        query = embedder.query(aspect_query(aspect))
        for paper in papers:
            cell = _best_sentence(index, embedder, query, paper, aspect)
            if cell is not None:
                cells[(paper.id, aspect)] = cell
    return Comparison(papers, wanted, cells, unknown)


def _candidates(index: Index, query: Embedded, paper: Paper) -> list[tuple[str, str, int | None]]:
    """(sentence, source, page) of the paper: its abstract's sentences, then those of its full-text passages that
    the hybrid search restricted to this paper ranks first."""
    found = [(s, "abstract", None) for s in split_sentences(paper.abstract or "", min_chars=_MIN_SENTENCE)]
    for point in index.passages(query, Filters(paper_ids=(paper.id,)), limit=PASSAGES_PER_CELL):
        if point.paper_id != paper.id or (point.section and _SKIPPED_SECTIONS.search(point.section)):
            continue
        found += [(s, "full text", point.page) for s in split_sentences(point.text, _MIN_SENTENCE) if _prose(s)]
    return found


def _prose(sentence: str) -> bool:
    """A sentence, not a table row or a formula run together by the PDF's text layer."""
    words = sentence.split()
    numbers = sum(any(ch.isdigit() for ch in w) for w in words)
    letters = sum(ch.isalpha() for ch in sentence)
    return len(sentence) <= _MAX_SENTENCE and numbers * 4 <= len(words) and letters * 2 > len(sentence)


def _best_sentence(index: Index, embedder: Embedder, query: Embedded, paper: Paper, aspect: str) -> Cell | None:
    candidates = _candidates(index, query, paper)
    if not candidates:
        return None
    vectors = embedder.dense_remembered([text for text, _, _ in candidates])
    meaning = vectors @ query.dense
    cues = aspect_cues(aspect)
    marked = np.array([min(len(cues.findall(text)), 2) / 2 for text, _, _ in candidates])
    own = np.array([1.0 if source == "abstract" else 0.0 for _, source, _ in candidates])
    in_abstract = int(own.sum())  # the abstract's sentences come first, in order
    where = np.array([i / max(1, in_abstract - 1) - 0.5 if i < in_abstract else 0.0 for i in range(len(candidates))])
    slope = POSITION.get(aspect.lower(), 0.0)
    favour = ABSTRACT_WEIGHT["default" if aspect.lower() in ASPECT_QUERIES else "other"]
    scores = meaning + CUE_WEIGHT * marked + favour * own + POSITION_WEIGHT * slope * where
    best = int(np.argmax(scores))  # the first of equals: the abstract before the full text
    text, source, page = candidates[best]
    return Cell(paper.id, aspect, text, source, page, float(scores[best]))
