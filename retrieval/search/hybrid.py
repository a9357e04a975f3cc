"""The search functions every caller uses: tools, pages, API and benchmarks. Papers (`search`: one hit per paper, over
titles and abstracts), then full-text passages (`search_passages`: each hit a passage with its page); each weighed
against the relevance floor (`retrieval.search.relevance`)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, replace

import numpy as np

from retrieval.library.visible import visible_papers
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Paper
from retrieval.search import spelling
from retrieval.search.relevance import FLOOR, about_names, named_terms, phrases, phrases_held, says, telling
from retrieval.vectors.embeddings import Embedded, Embedder, SparseVector, split_sentences
from retrieval.vectors.index import Filters, Index, PaperScore
from retrieval.vectors.points import PASSAGE_KINDS
from retrieval.vectors.store import PointHit

MAX_QUERY_CHARS = 1_000
MAX_LIMIT = 100
EMPTY_QUERY = "The query is empty: ask about a topic, a method or a paper title."


@dataclass(frozen=True)
class SearchHit:
    paper: Paper
    score: float
    rank: int
    kind: str
    page: int | None
    sentences: list[str] = field(default_factory=list)
    dense: float | None = None  # the dense side's own cosine of the paper's best point (or passage)
    clears: bool = True  # clears the relevance floor (`retrieval.search.relevance`): shown as an answer


@dataclass(frozen=True)
class SearchResult:
    query: str
    hits: list[SearchHit]  # those that clear the floor first, then the weaker ones, each part best first
    note: str | None = None
    people: tuple[int, ...] = ()  # the researchers the query names, whose papers come first (kind "author")

    @property
    def weak(self) -> bool:
        """Nothing clears the floor: the archive does not answer this well (an abstention, not an answer)."""
        return not any(h.clears for h in self.hits)


def clean_query(text: str) -> str:
    """Drop control characters, collapse spaces and cap the length, so odd input never reaches the models."""
    kept = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in text or "")
    return re.sub(r"\s+", " ", kept).strip()[:MAX_QUERY_CHARS]


def matching_sentences(embedder: Embedder, query_vector: np.ndarray, texts: list[str], k: int = 2) -> list[list[str]]:
    """For each text, its k sentences closest to the query, in their original order (one embedding batch)."""
    split = [split_sentences(text, min_chars=21) for text in texts]
    flat = [s for sentences in split if len(sentences) > k for s in sentences]
    scores = iter(embedder.dense_remembered(flat) @ query_vector if flat else [])
    chosen = []
    for sentences in split:
        if len(sentences) <= k:
            chosen.append(sentences)
            continue
        own = np.array([next(scores) for _ in sentences])
        chosen.append([sentences[i] for i in sorted(np.argsort(-own)[:k])])
    return chosen


def search(
    catalog: Catalog,
    index: Index,
    embedder: Embedder,
    query: str,
    filters: Filters = Filters(),
    limit: int = 8,
    sentences: int = 0,
    full_text: bool = True,
    quote_weak: bool = True,
    spelled: dict[str, str] | None = None,
) -> SearchResult:
    """Hybrid search over titles and abstracts, one hit per paper, best first; with sentences > 0, the
    sentences of each abstract that match the query best (of those that clear the floor only, when not
    `quote_weak`: a caller that shows only those need not embed the others' sentences).

    The hits that clear the relevance floor come first (`FLOOR.pool` candidates are weighed, so one ranked just
    past `limit` can take a weaker hit's place; by their cosines, the query's phrases they hold and the names that
    tell them apart, `retrieval.search.relevance`), then the others. When no abstract clears it, a paper whose title
    names the name the query is about does (`Floor.titled`: "TinyBERT"); when none does either, the full text is
    asked (unless not `full_text`): papers with a passage that clears it come first (kind "passage", with that
    passage's page). Before that, a query about a name the archive's texts spell out ("What is GRPO?": "Group
    Relative Policy Optimization (GRPO)") is asked again with the name spelled out (`spelled`: name -> words), and
    only the papers and passages that name it clear (`spelled_out`; the note says how the name was read)."""
    text = clean_query(query)
    if not text:
        return SearchResult(text, [], note=EMPTY_QUERY)
    limit = max(1, min(limit, MAX_LIMIT))
    embedded = embedder.query(text)
    scored = index.papers(embedded, filters, limit=max(limit, FLOOR.pool))
    papers = visible_papers(catalog, [s.paper_id for s in scored], filters.viewer)
    # (a point whose paper is missing means the index is out of step with the catalog, the truth: skip it)
    weighed = [(s, papers[s.paper_id]) for s in scored if s.paper_id in papers]
    names = [name.lower() for name in spelled] if spelled else named_terms(text)
    clears = _clears(text, weighed, names, spelled)
    passages = None
    if not any(clears) and not spelled and (about := about_names(text)):
        passages = index.passages(embedded, filters, limit=max(limit, FLOOR.pool)) if full_text else []
        said = spelling.lexical_texts(catalog, index, embedded, filters) + [p.text for p in passages]
        reading = spelling.read_spelled_names(text, about, said)
        if reading:
            again = search(catalog, index, embedder, spelling.spelled_query(text, reading), filters, limit,
                           sentences, full_text, quote_weak, spelled=reading)  # fmt: skip
            if not again.weak:
                return replace(again, query=text, note=spelling.reading_note(reading))
    cleared = {paper.id for (_, paper), c in zip(weighed, clears, strict=True) if c}
    found = [w for w in weighed if w[1].id in cleared] + [w for w in weighed if w[1].id not in cleared]
    if full_text and not any(clears):
        found = _in_full_text(catalog, index, embedded, filters, limit, found, names, passages, spelled)
    found = found[:limit]
    quotes = _quotes(embedder, embedded, found, cleared if not quote_weak else None, sentences)
    hits = [_hit(s, paper, rank, quote, paper.id in cleared)
            for rank, ((s, paper), quote) in enumerate(zip(found, quotes, strict=True), start=1)]  # fmt: skip
    note = None if hits else "No paper matched; try other words or fewer filters."
    return SearchResult(text, hits, note)


def _clears(text: str, weighed: list[tuple[PaperScore, Paper]], names: list[str],
            spelled: dict[str, str] | None) -> list[bool]:  # fmt: skip
    """Which abstract hits clear the floor: by cosine, phrases held and telling names; asked again with a name
    spelled out, only those naming it; when none clears, a paper whose title names what the query is about."""
    cosines = [s.dense.score if s.dense else None for s, _ in weighed]
    texts = [f"{paper.title} {paper.abstract}".lower() for _, paper in weighed]
    asked = phrases(text)
    held = [phrases_held(asked, t) for t in texts] if asked else None
    clears = FLOOR.naming(FLOOR.papers(cosines, held), cosines, texts, telling(names, texts))
    if spelled:  # asked again with a name spelled out: only what names it answers
        return [c and spelling.names_one_spelled(t, spelled) for c, t in zip(clears, texts, strict=True)]
    if not any(clears):  # a paper whose title names the name the query is about ("TinyBERT": 0.40)
        titles = [paper.title.lower() for _, paper in weighed]
        return FLOOR.titled(cosines, titles, text, [(paper.abstract or "").lower() for _, paper in weighed])
    return clears


def _quotes(embedder: Embedder, embedded: Embedded, found: list, only: set[str] | None,
            sentences: int) -> list[list[str]]:  # fmt: skip
    """Each abstract hit's sentences that match the query best (`only`: of these papers alone; none for a passage
    hit, whose page is its quote's place)."""
    quotes: list[list[str]] = [[] for _ in found]
    if not sentences:
        return quotes
    # A window that scored the paper already says which sentences matched; the others are found by
    # embedding their sentences (short abstracts, one batch).
    rest = []
    for i, (s, paper) in enumerate(found):
        if isinstance(s, PointHit) or (only is not None and paper.id not in only):
            continue
        if s.dense is not None and s.dense.kind == "window" and s.dense.span:
            start, end = s.dense.span
            quotes[i] = split_sentences(paper.abstract)[start:end][:sentences]
        if not quotes[i]:
            rest.append(i)
    picked = matching_sentences(embedder, embedded.dense, [found[i][1].abstract for i in rest], sentences)
    for i, chosen in zip(rest, picked, strict=True):
        quotes[i] = chosen
    return quotes


def _hit(s: PaperScore | PointHit, paper: Paper, rank: int, quote: list[str], cleared: bool) -> SearchHit:
    if isinstance(s, PointHit):  # a paper found by a passage of its full text (it cleared the floor there)
        return SearchHit(paper, s.score, rank, "passage", s.page, quote, dense=s.dense, clears=True)
    dense = s.dense.score if s.dense else None
    return SearchHit(paper, s.score, rank, "abstract", None, quote, dense=dense, clears=cleared)


def _in_full_text(catalog, index: Index, embedded: Embedded, filters: Filters, limit: int, found: list,
                  names: list[str], passages: list[PointHit] | None = None,
                  spelled: dict[str, str] | None = None) -> list:  # fmt: skip
    """When no abstract clears the floor: the papers whose best full-text passage does (naming what the query
    names, `Floor.naming`; none, when the query names something none of those papers names; with `spelled`, only
    passages naming the name spelled out), best first, before the (weak) abstract hits. `passages`: those already
    found for this query."""
    if passages is None:
        passages = index.passages(embedded, filters, limit=max(limit, FLOOR.pool))
    best: dict[str, PointHit] = {}
    for p in passages:
        named = not spelled or spelling.names_one_spelled(p.text, spelled)
        if FLOOR.passages([p.dense])[0] and p.paper_id not in best and named:
            best[p.paper_id] = p
    if not best:
        return found
    papers = visible_papers(catalog, list(best), filters.viewer)
    first = [(p, papers[pid]) for pid, p in best.items() if pid in papers]
    said = {pid: " ".join(p.text for p in passages if p.paper_id == pid) for pid in best}  # its passages found
    texts = [f"{paper.title} {said[paper.id]}".lower() for _, paper in first]
    abouts = [f"{text} {(paper.abstract or '').lower()}" for text, (_, paper) in zip(texts, first, strict=True)]
    if names and not any(says(about, name) for about in abouts for name in names):
        return found  # a question naming its subject ("SIGMA rules for SIEM"): papers never naming it answer nothing
    named = FLOOR.naming([True] * len(first), [p.dense for p, _ in first], texts, names)
    first = [pair for pair, keep in zip(first, named, strict=True) if keep]
    return first + [(s, paper) for s, paper in found if paper.id not in best]


def nearest_papers(
    catalog: Catalog, index: Index, embedder: Embedder, paper_id: str, limit: int = 5, filters: Filters = Filters()
) -> list[tuple[Paper, float]]:
    """The paper's nearest neighbours in the index: its title and abstract as indexed (the stored vector; embedded
    afresh only when the paper is not indexed yet), matched against every abstract and abstract window (dense
    side), the paper itself left out."""
    paper = catalog.papers([paper_id]).get(paper_id)
    if paper is None:
        return []
    dense = index.abstract_vector(paper_id)
    if dense is None:
        dense = embedder.dense([f"{paper.title}. {paper.abstract}".strip() if paper.abstract else paper.title])[0]
    found = index.papers(Embedded(dense, SparseVector([], [])), filters, limit=limit + 1, sides=("dense",))
    scores = {hit.paper_id: hit.score for hit in found if hit.paper_id != paper_id}
    papers = catalog.papers(list(scores))
    ranked = sorted(scores, key=lambda pid: (-scores[pid], pid))[:limit]
    return [(papers[pid], scores[pid]) for pid in ranked if pid in papers]


# --- passages -------------------------------------------------------------------------------------------

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
