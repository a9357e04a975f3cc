"""A question read once, without a model, into what it asks (`read_question` -> `ReadQuestion`): its intent, the
words to search, what it names (arXiv ids, a researcher or an institution, a coined term whose authors it wants),
the fact or figure it asks for (`assistant.asked_for.FactQuestion`) and what "it", "them" or "she" refers to in the
conversation's focus (the last answer's cards).

The rules sit in one table (`RULES`), in the order they are tried: a row is an intent, the patterns it reads and
when it fires. Every row that fires is kept (`ReadQuestion.intents`), so when a branch finds nothing (a comparison
whose tool fails, a name the catalog does not know) the next one answers, as the planner always has.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from assistant.asked_for import FactQuestion, asks_for_a_fact
from assistant.tools.base import Card, CardKind
from assistant.turn import Question
from retrieval.scholarly.arxiv_ids import NEW_ID, OLD_ID
from retrieval.search.relevance import named_terms

ARXIV_MENTION = re.compile(rf"\b({NEW_ID}(?:v\d+)?|{OLD_ID})\b")
_COMPARE = re.compile(r"\b(compar\w*|versus|vs\.?|side by side|contrast\w*|differ\w*)\b", re.I)
_ASPECTS = re.compile(r"\b(?:on|by|in terms of|regarding|for|across)\s+(?:their\s+|the\s+)?([^?.!]+?)\s*[?.!]*$", re.I)
_THEM = re.compile(r"\b(them|these|those|both|they|the (?:two|three|four|five|papers|ones))\b", re.I)
WHO_WROTE = re.compile(
    r"^\s*who\s+(?:wrote|authored|proposed|introduced|developed|created|invented|made)\s+(\S.{0,300}?)\s*\??\s*$", re.I
)
_POSSESSIVE = re.compile(r"['’]s\b")  # "Who wrote TinyBERT's teacher model?" asks for another work's authors
_PERSON = re.compile(r"\b(she|he|they|her|him|his|hers|their|them|this (?:person|researcher|author))\b", re.I)
_THING = re.compile(r"\b(it|its|this paper|that paper|the paper)\b", re.I)
_WROTE_WITH = re.compile(
    r"\b(co-?author\w*|collaborat\w*|(?:writ\w*|wrote|work\w*|publish\w*)\b[^?.!]{0,20}\bwith)\b", re.I
)
_CITES = re.compile(r"\b(cit(?:e|es|ed|ing|ation|ations)|follow(?:ed|s)? (?:up|on))\b", re.I)
_REFERENCES = re.compile(r"\b(reference\w*|build[s]? on|based on|prior work)\b", re.I)
# A word of a name is at most 40 characters: unbounded, each of the many starts in "A.A.A.A..." ran to the end.
_NAME = re.compile(r"\b([A-Z][\w'.-]{1,40}(?:\s+(?:[A-Z][\w'.-]{1,40}|de|van|von|da|di|del|la|le|of|for|and)){1,5})")
_ACRONYM = re.compile(r"\b([A-Z][A-Z&]{1,9})\b")
# Words of a question that asks about a person or a place as such ("What does X work on?", "Who at X has
# papers here?"); any other word means the question is about a topic, which a paper search answers better.
_PROFILE_WORDS = frozenset(
    "who what whom where which does do did is are was were has have had work works working worked on at in of "
    "about tell me us show give list the a an papers paper publications research researchers people "
    "here this archive there their his her its s summary summarize summarise profile field fields topics".split()
)
# After "it", words that make it refer to nothing ("Is it true that ...", "is it possible to ..."); after "the paper",
# words that describe another paper ("the paper on ...", "the paper that ...")
_EMPTY_IT = frozenset("true possible likely known necessary worth easy hard better is was seems".split())
_DESCRIBED = frozenset("on about that which by from where in with titled called named who for".split())
_THE_PAPER = frozenset({"it", "this", "that", "this paper", "that paper", "the paper"})


class Intent(StrEnum):
    """What a question asks for, as the retrieval-only planner answers it (`RULES` says when each is read)."""

    COMPARE = "compare"  # the papers it names by arXiv id, or "them": the papers just shown
    WHICH_TO_COMPARE = "which to compare"  # "compare them" with nothing worth comparing shown: ask which
    PAPER = "paper"  # a paper named by its arXiv id
    WHO_WROTE_IT = "who wrote it"  # the authors of the paper just shown
    COAUTHORS = "co-authors"  # of the researcher just shown ("who else did she write with?")
    RESEARCHER = "researcher"  # the researcher just shown ("what else did they write?")
    CITED_BY = "cited by"  # what cites the paper just shown
    REFERENCES = "references"  # what the paper just shown builds on
    PROFILE = "profile"  # a researcher or an institution it names as such (when the catalog knows them)
    WHO_WROTE = "who wrote"  # the authors of what it names ("Who wrote SPECTER?"), found by a search
    FACT = "fact"  # a figure, a definition or another fact, found by a search and quoted
    TOPIC = "topic"  # anything else: a search


@dataclass(frozen=True)
class ReadQuestion:
    """A question as read once a turn: what every branch of the planner, and the pipeline, reads of it."""

    intents: tuple[Intent, ...]  # every rule that fired, in `RULES` order (`TOPIC` always last)
    query: str  # the question as read: cleaned, with "it" named when it refers to the paper just shown
    searched: str  # the words a search runs with ("Who wrote CTIGuardian?": "CTIGuardian")
    arxiv_ids: tuple[str, ...] = ()  # the arXiv ids it mentions, each once, in order
    compared: tuple[str, ...] = ()  # the papers to compare: those it names, or those "them" refers to
    aspects: tuple[str, ...] = ()  # what to compare them on ("on task and data set")
    shown: tuple[Card, ...] = ()  # the papers the last answer showed ("them")
    weak: bool = False  # the last answer found nothing that answers well: "it" and "them" refer to nothing
    paper: Card | None = None  # the paper "it" can refer to (the last answer's first paper)
    person: Card | None = None  # the researcher "she" or "they" refers to, when the question says so
    named_people: tuple[str, ...] = ()  # names it is about as such, as a researcher may be named
    named_places: tuple[str, ...] = ()  # ... and as an institution may be (acronyms too: "MIT")
    authors_named: tuple[str, ...] = ()  # the names whose authors "who wrote X" asks for (lower case)
    fact: bool = False  # it asks for a fact (`asks_for_a_fact`): an answer line is looked for
    wants: FactQuestion | None = None  # the fact, figure or measure it asks for, read

    @property
    def intent(self) -> Intent:
        return self.intents[0]


@dataclass(frozen=True)
class _Clues:
    """What the rules test, read from the question and the focus once."""

    compares: bool
    them: bool
    ids: tuple[str, ...]
    shown: tuple[Card, ...]
    weak: bool
    paper: Card | None
    person: Card | None
    who: str | None  # X of "who wrote X" (the question as asked)
    it: bool  # it refers to the paper just shown
    wrote_with: bool
    cites: bool
    references: bool
    profiled: bool  # it names someone or somewhere as such
    who_named: bool  # "who wrote X" where X names something (after "it" is named)
    fact: bool


@dataclass(frozen=True)
class Rule:
    """One row of the table: an intent, the patterns it reads, and when it fires."""

    intent: Intent
    patterns: tuple[re.Pattern, ...]
    fires: Callable[[_Clues], bool]


RULES: tuple[Rule, ...] = (
    Rule(Intent.COMPARE, (_COMPARE, ARXIV_MENTION, _THEM),
         lambda c: c.compares and (len(c.ids) >= 2 or (c.them and not c.weak and len(c.shown) >= 2))),
    Rule(Intent.WHICH_TO_COMPARE, (_COMPARE, _THEM),
         lambda c: c.compares and len(c.ids) < 2 and c.them and (c.weak or len(c.shown) < 2)),
    Rule(Intent.PAPER, (ARXIV_MENTION,), lambda c: bool(c.ids)),
    Rule(Intent.WHO_WROTE_IT, (WHO_WROTE,),
         lambda c: c.paper is not None and c.who is not None and c.who.lower() in _THE_PAPER),
    Rule(Intent.COAUTHORS, (_PERSON, _WROTE_WITH), lambda c: c.person is not None and c.wrote_with),
    Rule(Intent.RESEARCHER, (_PERSON,), lambda c: c.person is not None and not c.wrote_with),
    # (a question about a person shown is about them, not about "it")
    Rule(Intent.CITED_BY, (_THING, _CITES), lambda c: c.person is None and c.paper is not None and c.it and c.cites),
    Rule(Intent.REFERENCES, (_THING, _REFERENCES),
         lambda c: c.person is None and c.paper is not None and c.it and not c.cites and c.references),
    Rule(Intent.PROFILE, (_NAME, _ACRONYM), lambda c: c.profiled),
    Rule(Intent.WHO_WROTE, (WHO_WROTE,), lambda c: c.who_named),
    Rule(Intent.FACT, (), lambda c: c.fact),  # (its patterns are the fact reader's: `assistant.asked_for`)
    Rule(Intent.TOPIC, (), lambda c: True),
)  # fmt: skip


def read_question(question: Question | str, focus: Sequence[Card] = (), weak: bool = False) -> ReadQuestion:
    """The question read against the conversation's `focus` (the last answer's cards; `weak`: they were only the
    closest matches to a question nothing here answered well)."""
    asked = question if isinstance(question, Question) else Question.of(question)
    query = asked.query
    ids = tuple(dict.fromkeys(m.group(1) for m in ARXIV_MENTION.finditer(query)))
    shown = tuple(c for c in focus if c.kind == CardKind.PAPER)
    paper = None if weak else next(iter(shown), None)
    researcher = next((c for c in focus if c.kind == CardKind.RESEARCHER), None)
    person = researcher if researcher is not None and _PERSON.search(query) else None
    who = WHO_WROTE.match(query)
    searched = _it_named(paper, asked.searched)  # "How many layers does it have?", after a paper was shown
    read = searched if searched != asked.searched else query
    named = WHO_WROTE.match(searched)
    who_named = bool(named and named_terms(searched))
    people, places = _profile_spans(query)
    clues = _Clues(
        compares=bool(_COMPARE.search(query)), them=bool(_THEM.search(query)), ids=ids, shown=shown, weak=weak,
        paper=paper, person=person, who=who.group(1) if who else None,
        it=paper is not None and _it(query) is not None, wrote_with=bool(_WROTE_WITH.search(query)),
        cites=bool(_CITES.search(query)), references=bool(_REFERENCES.search(query)), profiled=bool(people or places),
        who_named=who_named, fact=asks_for_a_fact(read),
    )  # fmt: skip
    return ReadQuestion(
        intents=tuple(rule.intent for rule in RULES if rule.fires(clues)),
        query=read,
        searched=named.group(1) if who_named and named else searched,  # ("CTIGuardian" clears its paper's floor)
        arxiv_ids=ids,
        compared=ids if len(ids) >= 2 else tuple(c.id for c in shown),
        aspects=_aspects(query),
        shown=shown, weak=weak, paper=paper, person=person,
        named_people=people, named_places=places,
        authors_named=_authors_named(read),
        fact=clues.fact,
        wants=FactQuestion.of(read),
    )  # fmt: skip


def _aspects(query: str) -> tuple[str, ...]:
    """What a comparison names after "on", "by" or "in terms of" ("task and data set": task, data set)."""
    named = _ASPECTS.search(ARXIV_MENTION.sub(" ", query))
    return tuple(a.strip() for a in re.split(r",|\band\b|;", named.group(1)) if a.strip()) if named else ()


def _authors_named(query: str) -> tuple[str, ...]:
    """What "who wrote X" names, whose authors it asks for, from the whole question ("Pyserini" after "Who wrote" is
    a name); nothing for another work of it ("Who wrote TinyBERT's teacher model?") or any other question."""
    asked = WHO_WROTE.match(query)
    if asked is None or _POSSESSIVE.search(asked.group(1)):
        return ()
    return tuple(named_terms(query))


def _profile_spans(query: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names a question is about as such, and nothing else (`_PROFILE_WORDS`): as a researcher may be named, and
    as an institution may be (acronyms too)."""
    names = [span for span in _NAME.findall(query) if _only_about(query, span)]
    acronyms = [span for span in _ACRONYM.findall(query) if _only_about(query, span)]
    return tuple(names), tuple([*names, *acronyms])


def _only_about(query: str, span: str) -> bool:
    rest = re.findall(r"[a-z]+", query.replace(span, " ").lower())
    return all(word in _PROFILE_WORDS for word in rest)


def _it(query: str) -> re.Match | None:
    """Where a question refers to the last answer's paper ("it", "its", "this paper", "the paper"), if it does."""
    found = _THING.search(query)
    if found is None:
        return None
    after = query[found.end() :].split()[:1]
    word = after[0].lower().strip("?.,!") if after else ""
    said = found.group(1).lower()
    if (said == "it" and word in _EMPTY_IT) or (said.endswith("paper") and word in _DESCRIBED):
        return None
    return found


def _it_named(paper: Card | None, text: str) -> str:
    """A question about "it" (or "its", "this paper", "the paper") after an answer that showed a paper, as search
    reads it: the paper named where the question says "it" ("How many layers does it have?" after TinyBERT's paper:
    "How many layers does TinyBERT have?"), by its title's name ("TinyBERT: ...") or else its whole title in quotes.
    The question as it is when nothing was shown, or "it" refers to nothing (`_it`: "Is it true that ...", "the
    paper on ...")."""
    found = _it(text) if paper is not None else None
    if found is None or paper is None:
        return text
    head, colon, _ = paper.title.partition(":")
    name = head.strip() if colon and len(head.split()) <= 3 else f'"{paper.title}"'
    said = f"{name}'s" if found.group(1).lower() == "its" else name
    return f"{text[: found.start()]}{said}{text[found.end() :]}"
