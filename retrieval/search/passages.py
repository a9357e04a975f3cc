"""Hybrid search over full-text passages: each hit a passage with its page, weighed against the relevance floor."""

from __future__ import annotations

from dataclasses import dataclass, replace

from retrieval.library.visible import visible_papers
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Paper
from retrieval.search import spelling
from retrieval.search.hybrid import EMPTY_QUERY, MAX_LIMIT, clean_query
from retrieval.search.relevance import FLOOR, about_names, named_terms, says
from retrieval.vectors.embeddings import Embedder
from retrieval.vectors.index import Filters, Index
from retrieval.vectors.points import PASSAGE_KINDS
from retrieval.vectors.store import PointHit


@dataclass(frozen=True)
class PassageHit:
    paper: Paper
    score: float
    rank: int
    number: int
    page: int | None
    section: str | None
    text: str
    dense: float | None = None  # the dense side's own cosine (None: only BM25 found it)
    clears: bool = True  # clears the relevance floor for passages


@dataclass(frozen=True)
class PassageResult:
    query: str
    hits: list[PassageHit]
    note: str | None = None

    @property
    def weak(self) -> bool:
        return not any(h.clears for h in self.hits)


def search_passages(
    catalog: Catalog,
    index: Index,
    embedder: Embedder,
    query: str,
    filters: Filters = Filters(),
    limit: int = 8,
    per_paper: int | None = None,
    spelled: dict[str, str] | None = None,
) -> PassageResult:
    """Hybrid search over full-text passages, best first, each with its page (and section when known). A passage
    clears the floor by its cosine and what the query names (`Floor.naming`); none does when the query names
    something that no clearing passage, nor its paper's title or abstract, names.

    A question about a name the archive's texts spell out is asked again with it spelled out, as `search` does
    (`spelled`); then only passages naming it clear. With `per_paper`, at most that many passages of one paper are
    kept, so the hits group into papers."""
    text = clean_query(query)
    if not text:
        return PassageResult(text, [], note=EMPTY_QUERY)
    limit = max(1, min(limit, MAX_LIMIT))
    # grouping needs the whole fused candidate list, or one long paper fills every slot
    embedded = embedder.query(text)
    points = index.passages(embedded, filters, limit=2 * index.params.candidates if per_paper else limit)
    if per_paper:
        points = _at_most(points, per_paper)[:limit]
    papers = visible_papers(catalog, list(dict.fromkeys(p.paper_id for p in points)), filters.viewer)
    shown = [p for p in points if p.paper_id in papers]
    texts = [f"{papers[p.paper_id].title} {p.text}".lower() for p in shown]
    cosines = [p.dense for p in shown]
    names = [name.lower() for name in spelled] if spelled else named_terms(text)
    clears = FLOOR.naming(FLOOR.passages(cosines), cosines, texts, names)
    if spelled:  # asked again with a name spelled out: only passages naming it answer
        clears = [c and spelling.names_one_spelled(p.text, spelled) for c, p in zip(clears, shown, strict=True)]
    elif names and not any(says(f"{t} {(papers[p.paper_id].abstract or '').lower()}", name)
                         for t, p, c in zip(texts, shown, clears, strict=True) if c for name in names):  # fmt: skip
        clears = [False for _ in shown]  # a question naming its subject: papers never naming it answer nothing
    if not any(clears) and not spelled and (about := about_names(text)):
        # (a passage may spell it out, "(SQuAD)")
        more = index.passages(embedded, filters, limit=spelling.READING_DEPTH)
        said = [p.text for p in more] + spelling.lexical_texts(catalog, index, embedded, filters)
        reading = spelling.read_spelled_names(text, about, said)
        if reading:
            again = search_passages(catalog, index, embedder, spelling.spelled_query(text, reading), filters, limit,
                                    per_paper, spelled=reading)  # fmt: skip
            if not again.weak:
                return replace(again, query=text, note=spelling.reading_note(reading))
    hits = [
        PassageHit(papers[p.paper_id], p.score, rank, p.number, p.page, p.section, p.text, p.dense, cleared)
        for rank, (p, cleared) in enumerate(zip(shown, clears, strict=True), start=1)
    ]
    if hits:
        return PassageResult(text, hits)
    if not index.count(replace(filters, kinds=PASSAGE_KINDS)):
        return PassageResult(text, [], note="No full text is indexed for these papers yet.")
    return PassageResult(text, [], note="No passage matched; try other words.")


def _at_most(points: list[PointHit], per_paper: int) -> list[PointHit]:
    """The points in their order, at most `per_paper` of one paper."""
    kept, seen = [], {}
    for point in points:
        seen[point.paper_id] = seen.get(point.paper_id, 0) + 1
        if seen[point.paper_id] <= per_paper:
            kept.append(point)
    return kept
