"""Queries that name researchers: who is named and what else is asked, so that person's papers come first.

A name is found as the catalog knows it: a full name ("Bobby Yan", "joseph m hellerstein"; accents, case and
punctuation ignored), initials with a surname ("J. M. Hellerstein", "Hellerstein, J."), or a capitalised first name
and surname without the middle names ("Joseph Hellerstein"). A two-word name also names the people who have it with
middle names ("Matthew Peters": Matthew E. Peters too). Namesakes (several researchers with one name) stay separate
people; the papers of each come first. The words around the name that only ask for someone's work ("papers by",
"what does ... work on", "'s work on") are dropped; what is left is the topic, which orders the person's papers and
finds the other papers that follow them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from sqlalchemy.orm import aliased
from sqlmodel import select

from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Authorship, Researcher, ResearcherTerm, normalise_name
from retrieval.scholarly.terms import word
from retrieval.search.hybrid import SearchHit, SearchResult, clean_query, search
from retrieval.vectors.embeddings import Embedder
from retrieval.vectors.index import Index
from retrieval.vectors.store import Filters

LONGEST_NAME = 5  # words in a full name looked up
MOST_PAPERS = 500  # of one query's named people, put first
MOST_NAMESAKES = 50  # people with one first name and surname (middle names left out), most papers first
MOST_INITIALLED = 200  # people with one surname and first initial ("J. Wang"), most papers first
# Words that ask for a person's work without saying what about.
ASKING = frozenset(
    "a all and any are articles authored by can did do does find from give has have her his is latest list me "
    "most new newest of on paper papers publication publications published recent research researched "
    "researching s show some studied studies study the their what which who work worked working works write "
    "writes written wrote".split()
)
# A name neither begins nor ends with these (old catalogs hold "et al" and "The Netherlands)" as authors).
NEVER_AT_EDGE = ASKING | {"et", "al"}
# Initials then a capitalised surname ("J. M. Hellerstein", "JM Hellerstein"), or the surname first ("Hellerstein,
# J. M."); the surname may carry accents, hyphens and apostrophes.
# (bounded: unbounded, every capital of "Aa-Aa-Aa-..." began a scan to the end of the run, quadratic in its length)
_SURNAME = r"[^\W\d_a-z][^\W\d_]{1,40}(?:['\u2019-][^\W\d_]{1,40}){0,4}"
_INITIALS_FIRST = re.compile(rf"\b((?:[A-Z](?:\.\s*|\s+|-)){{1,3}}|[A-Z]{{2,3}}\s+)({_SURNAME})")
_FIRST_AND_LAST = re.compile(rf"(?=\b({_SURNAME})\s+({_SURNAME})\b)")  # overlapping pairs of capitalised words
_SURNAME_FIRST = re.compile(rf"\b({_SURNAME}),?\s+((?:[A-Z]\.?\s*){{1,3}})(?![\w.])")


@dataclass(frozen=True)
class NamedPeople:
    researchers: tuple[Researcher, ...]  # one name can be several people: each is kept apart
    topic: str  # what the query asks beside the name and the asking words; "" when nothing

    @property
    def ids(self) -> tuple[int, ...]:
        return tuple(r.id for r in self.researchers)


def _full_names(catalog: Catalog, words: list[str]) -> tuple[list[Researcher], set[int]]:
    """The longest spans of the query that are someone's whole name (one indexed lookup); the positions used.
    Namesakes share their span; a shorter name inside a longer one is not looked at."""
    spans = {
        " ".join(words[i : i + n]): (i, n)
        for n in range(2, LONGEST_NAME + 1)
        for i in range(len(words) - n + 1)
        if words[i] not in NEVER_AT_EDGE and words[i + n - 1] not in NEVER_AT_EDGE
    }
    if not spans:
        return [], set()
    with catalog.session() as session:
        found = list(session.exec(select(Researcher).where(Researcher.name_key.in_(list(spans)))).all())
    found.sort(key=lambda r: (-spans[r.name_key][1], r.id))
    kept, taken, used = [], set(), set()
    for researcher in found:
        start, length = span = spans[researcher.name_key]
        positions = set(range(start, start + length))
        if span in taken or not positions & used:
            kept.append(researcher)
            taken.add(span)
            used |= positions
    return kept, used


def _initials_match(given: list[str], initials: list[str]) -> bool:
    """'J M' matches 'joseph m' and 'joseph michael'; 'J' matches 'joseph m' (the first initials in order)."""
    return len(initials) <= len(given) and all(g.startswith(i) for g, i in zip(given, initials))


def _by_initials(catalog: Catalog, query: str) -> list[tuple[Researcher, str]]:
    """People named by initials and surname; with the words of the query that named them."""
    asked = []
    for match in _INITIALS_FIRST.finditer(query):
        asked.append((re.findall(r"[A-Z]", match.group(1)), match.group(2), match.group(0)))
    for match in _SURNAME_FIRST.finditer(query):
        asked.append((re.findall(r"[A-Z]", match.group(2)), match.group(1), match.group(0)))
    found = []
    for initials, surname, words in asked:
        key = normalise_name(surname)
        if len(key) < 2 or key in ASKING or " " in key:
            continue
        with catalog.session() as session:  # the surname's people, by their name terms (it was a scan of every name)
            term = aliased(ResearcherTerm)
            rows = session.exec(
                select(Researcher).join(term, term.researcher_id == Researcher.id)
                .where(term.term == word(key), Researcher.name_key.like(f"{initials[0].lower()}% {key}"))
                .order_by(term.papers.desc(), Researcher.id).limit(MOST_INITIALLED)).all()  # fmt: skip
        for researcher in rows:
            given = (researcher.name_key or "").split()[:-1]
            if _initials_match(given, [i.lower() for i in initials]):
                found.append((researcher, words))
    return found


def _by_first_and_last(catalog: Catalog, query: str) -> list[tuple[Researcher, str]]:
    """People named by their first name and surname, the middle names left out ("Joseph Hellerstein" for Joseph M.
    Hellerstein): each pair of capitalised words in the query (`_with_middle_names`)."""
    pairs = {}
    for match in _FIRST_AND_LAST.finditer(query):
        first, last = normalise_name(match.group(1)), normalise_name(match.group(2))
        if " " not in first + last and first not in NEVER_AT_EDGE and last not in NEVER_AT_EDGE:
            pairs[(first, last)] = f"{match.group(1)} {match.group(2)}"
    return _with_middle_names(catalog, pairs) if pairs else []


def _with_middle_names(catalog: Catalog, pairs: dict[tuple[str, str], str]) -> list[tuple[Researcher, str]]:
    """The people whose names are a (first name, surname) pair with middle names between, each with the words that
    named them: looked up by the two words among the researchers' name terms (`retrieval.scholarly.terms`; at most
    `MOST_NAMESAKES` a pair, most papers first). It was a scan of every name, paid by any query with two
    capitalised words ("Semantic Scholar"): BENCHMARKS.md, "Session 37"."""
    found = []
    surname, given = aliased(ResearcherTerm), aliased(ResearcherTerm)
    with catalog.session() as session:
        for (first, last), words in pairs.items():
            rows = session.exec(
                select(Researcher).join(surname, surname.researcher_id == Researcher.id)
                .join(given, given.researcher_id == Researcher.id)
                .where(surname.term == word(last), given.term == word(first),
                       Researcher.name_key.like(f"{first} % {last}"))
                .order_by(surname.papers.desc(), Researcher.id).limit(MOST_NAMESAKES)).all()  # fmt: skip
            for researcher in sorted(rows, key=lambda r: r.id):
                tokens = (researcher.name_key or "").split()
                if len(tokens) > 2 and tokens[0] == first and tokens[-1] == last:
                    found.append((researcher, words))
    return found


def named_people(catalog: Catalog, query: str) -> NamedPeople | None:
    """Who the query names, if anyone, and what it asks about them."""
    text = re.sub(r"['\u2019]s\b", "", clean_query(query))  # "Yan's work" -> "Yan work"
    words = normalise_name(text).split()
    people, used = _full_names(catalog, words)
    if people:  # and who has that first name and surname with middle names ("Matthew E. Peters", "Matthew Peters")
        pairs = {tuple(r.name_key.split()): r.name_key for r in people if len((r.name_key or "").split()) == 2}
        people = list({r.id: r for r in [*people, *(r for r, _ in _with_middle_names(catalog, pairs))]}.values())
    else:
        initialled = _by_initials(catalog, text) or _by_first_and_last(catalog, text)
        if not initialled:
            return None
        people = list({r.id: r for r, _ in initialled}.values())
        for _, named in initialled:
            text = text.replace(named, " ")
        used, words = set(), normalise_name(text).split()
    topic = " ".join(w for i, w in enumerate(words) if i not in used and w not in ASKING)
    return NamedPeople(tuple(sorted(people, key=lambda r: r.id)), topic)


def papers_of(catalog: Catalog, researcher_ids: tuple[int, ...], limit: int = MOST_PAPERS) -> list[str]:
    with catalog.session() as session:
        rows = session.exec(
            select(Authorship.paper_id).where(Authorship.researcher_id.in_(researcher_ids)).distinct().limit(limit)
        ).all()
    return list(rows)


def _newest_first(hits: list[SearchHit]) -> list[SearchHit]:
    def when(hit: SearchHit) -> tuple[str, int]:
        return (hit.paper.published.isoformat() if hit.paper.published else "", hit.paper.year or 0)

    return sorted(hits, key=when, reverse=True)


def people_first_search(
    catalog: Catalog,
    index: Index,
    embedder: Embedder,
    query: str,
    filters: Filters = Filters(),
    limit: int = 8,
    sentences: int = 0,
    quote_weak: bool = True,
) -> SearchResult:
    """`search`, except that the papers of the people the query names come first: ordered by the rest of the
    query when it asks about something, newest first when it only names them; then the other matches."""
    named = named_people(catalog, query)
    if named is None:
        return search(catalog, index, embedder, query, filters, limit, sentences, quote_weak=quote_weak)
    own = papers_of(catalog, named.ids)
    if filters.paper_ids:  # a search already narrowed to some papers (a chat about one paper) stays narrowed
        allowed = set(filters.paper_ids)
        own = [p for p in own if p in allowed]
    asked = named.topic or query
    first: list[SearchHit] = []
    if own:
        # (the person's papers are shown whatever their score: their full text need not be asked)
        mine = search(catalog, index, embedder, asked, replace(filters, paper_ids=tuple(own)), len(own), sentences,
                      full_text=False)  # fmt: skip
        first = mine.hits if named.topic else _newest_first(mine.hits)
    seen = {h.paper.id for h in first}
    # (a question that only names them asks for their papers: another paper's full text citing the name is none)
    rest = search(catalog, index, embedder, asked, filters, limit + len(seen), sentences, full_text=bool(named.topic),
                  quote_weak=quote_weak)  # fmt: skip
    merged = [replace(h, kind="author", clears=True) for h in first] + [h for h in rest.hits if h.paper.id not in seen]
    hits = [replace(h, rank=rank) for rank, h in enumerate(merged[:limit], start=1)]
    note = None if hits else rest.note
    return SearchResult(rest.query, hits, note, people=named.ids)
