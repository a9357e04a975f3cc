"""What a question asking for a fact wants, read once (`FactQuestion.of`): its terms and their weights, whether it
wants a figure or a definition, what it counts and what kind of thing it asks for. The answer line
(`assistant.answer_line`) weighs evidence against it.

A question's terms weigh by what they are: a name or a figure ("TripPy", "MultiWOZ", "2.1", "Semantic Scholar" inside
a question) three times a plain word. Words are compared as keys (`word_key`): lower case, a plain ending taken off.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

NAME, WORD = 3.0, 1.0  # a term's weight: a name or figure, a plain word

_STOP = frozenset(
    """a an the of on in to for by with and or at as from into about over under than then that this these those
    is are was were be been being do does did done has have had having can could should would will may might must
    what which who whom whose when where why how many much well often long large big fast
    it its their there they them he she his her we our you your i me my not no yes any some each every all both
    reach reached reaches achieve achieved achieves get gets got use used uses using give gives gave make makes
    report reported reports show shows shown say says said tell find found per""".split()
)
_WANTS_FIGURE = re.compile(
    r"\b(how (many|much|large|big|long|fast|often|high|low|small|well)|number of|accuracy|score\w*|rate|perplexity|"
    r"f1|bleu|rouge|precision|recall|percent\w*|size|length|margin|dimension\w*|speed-?up|latency|improve\w*|"
    r"correlat\w*)\b",
    re.I,
)
_ASKS_WHAT = re.compile(r"^\s*(?:what|who)\s+(?:is|are|was|were)\s+(?:an?\s+|the\s+)?([^?,]+?)(?:\s+and\b|[?,]|$)",
                        re.I)  # fmt: skip
_ASKS_WHICH = re.compile(r"^\s*(what|which|when|where)\b", re.I)
# What a results table reports (its rows may not say it): a "what X" question asking for one of these may be
# answered by a row quoted with its caption.
MEASURES = frozenset({"accuracy", "scor", "f1", "bleu", "rouge", "precision", "recall", "perplexity", "error", "map",
                      "auc", "performanc", "result"})  # (as keys, `word_key`)  # fmt: skip
_AUXILIARIES = frozenset("do does did is are was were has have had can could will would".split())
_ARTICLES = frozenset("the a an its their".split())
_CORRELATION = re.compile(r"\bcorrelat", re.I)
TRIM = re.compile(r"^[^\w]+|[^\w%]+$")
_COUNTED = re.compile(  # "how many X does ...": what is counted
    r"\bhow\s+(?:many|much)\s+(.+?)\s+(?:do|does|did|is|are|was|were|has|have|had|can|could|will|would)\b", re.I
)
_HOW_MANY = re.compile(r"\bhow\s+many\s+(\S+)", re.I)  # "how many annotators labeled ...": at least its first word


@lru_cache(maxsize=1 << 14)  # the same words come back in every run of a sentence (16K: a few MB)
def word_key(word: str) -> str:
    """A word as the question and the text are compared: lower case, no edge punctuation or possessive, a plain
    ending taken off and a final "e" after it ("trained", "training" -> "train"; "improve", "improved" -> "improv";
    "perplexities" -> "perplexity")."""
    word = TRIM.sub("", word.lower())
    if word.endswith(("'s", "\u2019s")):
        word = word[:-2]
    if word.endswith("ies") and len(word) > 5:
        return word[:-3] + "y"
    for ending in ("ing", "ed", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            word = word[: -len(ending)]
            break
    return word[:-1] if word.endswith("e") and len(word) >= 5 else word


def keyed(words: Iterable[str]) -> frozenset[str]:
    """The words as keys (`word_key`)."""
    return frozenset(map(word_key, words))


STOP_KEYS = keyed(_STOP)  # (a module constant: a handful of words, keyed once)


def name_or_figure(word: str, first: bool = True) -> bool:
    """A name or a figure: capitals past the first letter ("TripPy", "SPECTER", "ELMo"), or a digit ("2.1"); unless
    the word is `first` (of a sentence), a capital ("Semantic Scholar" inside a question)."""
    bare = TRIM.sub("", word)
    return any(c.isdigit() for c in bare) or any(c.isupper() for c in bare[1:]) or (
        not first and bare[:1].isupper())


def asks_for_a_fact(question: str) -> bool:
    """A question asking for a figure ("how many", "what accuracy"), a definition ("what is X") or another fact
    ("which data set"): the only kind an answer line is looked for (not a topic typed into a search box, a "how
    to", a yes-or-no question, or "who": a person's question is answered by their profile)."""
    return bool(_WANTS_FIGURE.search(question) or _ASKS_WHICH.match(question))


@dataclass(frozen=True)
class FactQuestion:
    """A question asking for a fact, as the answer line weighs evidence against it."""

    terms: dict[str, float]  # its terms as keys, each with its weight (`NAME` or `WORD`)
    wants_figure: bool  # how many, how much, a score ...
    subject: str | None  # X of "what is X" (a definition is wanted), unless a figure is
    counted: frozenset[str]  # what "how many X" counts, as keys
    versions: tuple[str, ...]  # names given with their version ("multiwoz 2.1"), as keys
    kind: frozenset[str]  # X of "what X does ..." as keys, or a correlation
    initials: str | None  # X's initials when it has two or more words ("jga")

    @property
    def names(self) -> set[str]:
        return {k for k, w in self.terms.items() if w == NAME}

    @property
    def tables(self) -> bool:
        """A result is asked for: its table may answer, its caption naming no measure."""
        return self.wants_figure and bool(self.kind & MEASURES)

    @classmethod
    def of(cls, question: str) -> FactQuestion | None:
        """The question read, or None when it asks for no fact (`asks_for_a_fact`) or holds no term."""
        if not asks_for_a_fact(question):
            return None
        terms = _terms(question)
        if not sum(terms.values()):
            return None
        wants_figure = bool(_WANTS_FIGURE.search(question))
        asked = _ASKS_WHAT.match(question)
        counting = _COUNTED.search(question) or _HOW_MANY.search(question)
        counted = frozenset(k for k in map(word_key, counting.group(1).split()) if k in terms) if counting else frozenset()
        kind, initials = _kind(question, terms)
        return cls(terms, wants_figure, asked.group(1).strip() if asked and not wants_figure else None, counted,
                   tuple(_versions(question)), kind, initials)  # fmt: skip


def _terms(question: str) -> dict[str, float]:
    """The question's terms as keys, each with its weight: a name (`name_or_figure`) or a plain word."""
    terms: dict[str, float] = {}
    words = question.split()
    for n, word in enumerate(words):
        key = word_key(word)
        if key and key not in STOP_KEYS and (len(key) > 1 or key.isdigit()):
            first = n == 0 or words[n - 1].endswith((".", "?", "!", ":"))
            terms[key] = max(terms.get(key, 0.0), NAME if name_or_figure(word, first) else WORD)
    return terms


def _versions(question: str) -> list[str]:
    """The names a question gives with their version ("MultiWOZ 2.1", "WOZ 2.0"): the line must hold them as they
    stand, as keys."""
    words = question.split()
    return [f"{word_key(a)} {word_key(b)}" for a, b in itertools.pairwise(words)
            if name_or_figure(a) and not any(c.isdigit() for c in a) and re.fullmatch(r"v?\d+(\.\d+)*\W*", b)]  # fmt: skip


def _kind(question: str, terms: dict[str, float]) -> tuple[frozenset[str], str | None]:
    """What a question asks for: the plain words of X in "what X does ..." or "which X is ..." as keys ("joint goal
    accuracy", "optimizer"), with their initials when there are two or more ("jga"); a correlation, when it asks how
    well two things correlate. Nothing when X is a clause ("what happens when ...")."""
    words = question.split()
    verb = next((n for n, w in enumerate(words[:12]) if n > 1 and w.lower() in _AUXILIARIES), None)
    if not words or words[0].lower() not in ("what", "which") or verb is None or any(
            word_key(w) in STOP_KEYS for w in words[1:verb]):  # fmt: skip
        if _CORRELATION.search(question):
            return frozenset({"correlat"}), None
        words = [w for w in _measured(words) if terms.get(word_key(w)) == WORD]
    else:
        words = [w for w in words[1:verb] if terms.get(word_key(w)) == WORD]
    initials = "".join(w[0] for w in words).lower() if len(words) > 1 else None
    if initials in STOP_KEYS:  # "input size": "is" says nothing
        initials = None
    return frozenset(map(word_key, words)), initials


def _measured(words: list[str]) -> list[str]:
    """The words that name the measure a question asks for, from an article to the measure ("How much does ELMo
    improve the test F1 on SQuAD?": "test F1": a development set's F1 is no answer; "What is the joint goal accuracy
    of ...": "joint goal accuracy")."""
    for n, word in enumerate(words):
        if word_key(word) in MEASURES:
            articles = [i for i in range(max(0, n - 3), n) if words[i].lower() in _ARTICLES]
            if articles:
                return words[articles[-1] + 1 : n + 1]
    return []
