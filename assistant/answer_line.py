"""The answer sentence: the words of a passage or an abstract that answer a question, found without a model.

Retrieval-only mode leads with them ("TripPy 55.29±0.28% Table 1: DST Results on MultiWOZ 2.1 in JGA", quoted from
[1, p. 6]) when a question asks for a fact. The line is always the source's own words, a whole sentence when the
sentence is short, else the shortest run of its words (at most `SPAN_WORDS`) holding the question's terms, marked
"…" where it was cut. A question's terms weigh by what they are: a name or a figure ("TripPy", "MultiWOZ", "2.1",
"Semantic Scholar" inside a question) three times a plain word; a question asking how many or how much wants a
figure the question does not hold, beside what it counts (not as one item of a list: "280M nodes, representing
papers, authors, entities" does not count author nodes); a "what X does ..." or "which X is ..." question wants X,
so the line must say it (most of X's words, or their initials: "JGA"; for a result, a table's caption will do, its
rows naming no measure), as does a measure named after an article ("the test F1": a development set's F1 is no
answer), and "how well ... correlate" wants a correlation; a "what is X" question prefers the sentence that defines
X (its paper's title alone, when that is the definition). A text of the paper whose title or abstract (or two of
whose texts found) names what the question names (SPECTER's "adding authors as an input hurts performance") holds
that name, though a text that names it itself ranks first. When no run holds enough of the question, there is no
line: an answer is never forced. Retrieval-only mode hands it up to ten passages of the papers it found, beyond the
three a paper shows (`assistant.retrieval_only`). A measure pypdf ran into the next word ("F1improved") is read as
two words.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from assistant.asked_for import STOP_KEYS, TRIM, WORD, FactQuestion, asks_for_a_fact, keyed, word_key
from assistant.tools.base import Evidence
from retrieval.search.spelling import spelled_out
from retrieval.vectors.embeddings import split_sentences

SPAN_WORDS = 30  # the longest run of words quoted from inside a long sentence (a table's text is one "sentence")
SENTENCE_CHARS = 300  # a sentence up to this long is quoted whole
WANTED_FIGURE = 3.0  # what a figure weighs in a run, when the question asks for one
DEFINES = 3.0  # what a defining phrase ("X is a", "we propose X") weighs, when the question asks what X is
COVERED = 0.5  # the share of the question's weight a run must hold when it asks for a figure or a definition
COVERED_ELSE = 0.75  # ... and when it asks anything else
LEAST_WORDS = 5  # a line of fewer words ("ELMo?", "… paper draft 13 …": its "…" not counted) says nothing
NEAR = 4  # a wanted figure stands at most this many words from one of the question's terms (stop words not counted)
PAIRED = 0.5  # what quoting each sentence before it costs (one sentence is preferred when it holds as much)

_NUMBER_WORDS = frozenset(  # (not "one": "in one of the papers", "one can" count nothing)
    """two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen
    eighteen nineteen twenty thirty forty fifty hundred thousand million billion dozen half twice""".split()
)
_CAPTION = re.compile(r"\bTable\s*\d+\s*:")  # a table's caption: its rows may not name the measure
_FIGURE = re.compile(  # "55.29±0.28%", "23K", "2e-5" (a learning rate), "(4,096)"
    r"^[(\[~≈<>±−-]*\d[\d,.]*(?:[eE][−-]?\d+)?(?:\s*±\s*[\d.]+)?(?:%|[KMBkmb]|x|×)?(?:±[\d.]+%?)?[)\],.;:∗*]*$"
)
_ENUMERATION = re.compile(r"^\(?\d{1,2}\)[,.;:]?$")  # "(3)" of a list, not a figure
_YEAR = re.compile(r"^\(?(19[5-9]\d|20[0-3]\d)[a-z]?[).,;:]*$")
# After a name: "SPECTER, a ...", "SPECTER: the ...", "SPECTER(a ...": starting a word only (linear under any scan);
# a comma only before an article ("TripPy, we hope ..." defines nothing), never a name in brackets ("our embeddings
# (SPECTER) compared")
_APPOSITION = re.compile(r"(?<!\S)[^\s,:(]+(?:,\s*(?:an?|the)\b|[:(]\s*(?:an?|the)?\b)")
_IS_A = re.compile(r"(?<!\S)\S+\s+(?:is|are)\s+(?:an?|the)\b")  # "SPECTER is a ..."
# A measure's name pypdf ran into the next word ("test set F1improved by 4.7%", "pushes F1to 87.4"): a capital, a few
# letters and digits, then two or more lower-case letters ("word2vec" and "Mp3s" stay whole)
_GLUED = re.compile(r"(?<!\S)([A-Z][A-Za-z]{0,3}\d+(?:\.\d+)?)([a-z]{2,})(?=[\s,.;:)]|$)")
_NOT_A_FIGURE_AFTER = frozenset({"table", "figure", "fig", "section", "sec", "eq", "equation", "appendix", "§",
                                 "chapter", "step", "line", "page", "al", "et"})


__all__ = ["AnswerLine", "Evidence", "answer_line", "asks_for_a_fact"]


@dataclass(frozen=True)
class AnswerLine:
    """The line an answer leads with, and the evidence it is quoted from."""

    quote: str  # the source's own words, "…" where a sentence was cut
    evidence: Evidence


# The word lists as keys (module constants: a handful of words, keyed once)
_NOT_A_FIGURE_AFTER_KEYS = keyed(_NOT_A_FIGURE_AFTER)
_NAMING_VERBS = keyed(["propose", "introduce", "call", "present", "name"])  # "we propose X", "called X"


def _figures(words: list[str], terms: dict[str, float], counts: bool) -> list[bool]:
    """Which words are a figure the question does not already hold ("55.29±0.28%", "23K"; "eight" when it `counts`,
    as "how many" does: a score is not written in words; not the "2.1" it asks about, nor "Table 1", "(Chelba et
    al., 2014)" or a list's "(3)")."""
    found = []
    for i, word in enumerate(words):
        key, before = word_key(word), word_key(words[i - 1]) if i else ""
        figure = bool(_FIGURE.match(word)) or (counts and TRIM.sub("", word.lower()) in _NUMBER_WORDS)
        if key in terms or before in _NOT_A_FIGURE_AFTER_KEYS or _YEAR.match(word) or _ENUMERATION.match(word):
            figure = False
        found.append(figure)
    return found


@dataclass(frozen=True)
class _Unit:
    score: float
    held: float  # the question's weight the unit holds
    quote: str


def _scored(words: list[str], terms: dict[str, float], wants_figure: bool, defining: set[int] | None,
            counted: frozenset[str] = frozenset(), given: frozenset[str] = frozenset(),
            figures_from: int = 0, figures: list[bool] | None = None) -> tuple[float, float]:
    """(score, weight held) of a run of words. The weight held counts the names its paper is about (`given`); the
    score counts only what the run says, so a text that names them itself ranks first. Score -1 when the question
    wants a figure and none stands within `NEAR` words of the question's terms in it (of what it counts, for "how
    many X": all of X's words held), or asks what X is (`defining` not None) and the run does not define it. The
    figure is looked for from word `figures_from` (a pair's second sentence: the one before only names what it is
    about, and earns nothing for a name of its paper's). `figures`: which words are figures, as read in the whole
    sentence when the run is cut from one."""
    keys = [word_key(w) for w in words]
    said = {k: terms[k] for k in keys if k in terms}
    held = said | {k: terms[k] for k in given if k in terms}
    weight = sum(held.values())
    if defining is not None and not defining:
        return -1.0, weight
    answering = set(keys[figures_from:])  # (the sentences before it only say what it is of)
    scored = {k: w for k, w in said.items() if k not in given or k in answering}
    score = sum(scored.values()) + (DEFINES if defining else 0.0) - 0.01 * len(words)
    if counted:  # what it counts, said (not as one item of a list: a figure then counts them all) or given
        alone = {k for i, k in enumerate(keys) if k in counted and not _listed(words, i)}
        if not counted <= alone | (held.keys() - said.keys()):
            return -1.0, weight
    if wants_figure:
        figures = _figures(words, terms, bool(counted)) if figures is None else figures
        at = list(itertools.accumulate((k not in STOP_KEYS for k in keys), initial=0))  # content words before
        near = [at[i] for i, k in enumerate(keys) if k in (counted or terms)]
        if not any(f and i >= figures_from and any(abs(at[i] - j) <= NEAR for j in near)
                   for i, f in enumerate(figures)):  # fmt: skip
            return -1.0, weight
        score += WANTED_FIGURE
    return score, weight


def _listed(words: list[str], i: int) -> bool:
    """Whether word `i` is one item of a list of single words ("papers, authors, entities and ...", "A, B and C")."""
    def comma(j: int) -> bool:
        return 0 <= j < len(words) and words[j].endswith(",")

    def joined(j: int) -> bool:
        return 0 <= j < len(words) and words[j].lower() in ("and", "or")

    return ((comma(i) and (comma(i - 1) or comma(i + 1))) or (comma(i - 1) and joined(i + 1))
            or (joined(i - 1) and comma(i - 2)))  # fmt: skip


def _units(text: str, terms: dict[str, float], wants_figure: bool, subject: str | None,
           counted: frozenset[str], given: frozenset[str], whole: bool = False) -> list[_Unit]:
    """What a text may be quoted as: each sentence up to `SENTENCE_CHARS` whole (or with the one or two sentences
    before, when those name the subject: "Among these, MultiWOZ 2.1 is ... There are 5 domains ..."), and inside a
    longer one (a table's text is one "sentence") each shortest run of at most `SPAN_WORDS` words that begins and
    ends on a term or a figure."""
    units = []
    sentences = split_sentences(_GLUED.sub(r"\1 \2", " ".join(text.split())))
    for n, sentence in enumerate(sentences):
        words = sentence.split(" ")
        fragment = n == 0 and not whole and sentence[:1].islower()  # a passage can begin inside a sentence
        if len(sentence) <= SENTENCE_CHARS:
            defining = _defining_positions(words, subject) if subject else None
            score, held = _scored(words, terms, wants_figure, defining, counted, given)
            units.append(_Unit(score, held, ("… " if fragment else "") + sentence))
            for back in (1, 2):
                if n >= back and sum(len(x) for x in sentences[n - back : n + 1]) <= SENTENCE_CHARS * 3 // 2:
                    pair = " ".join(sentences[n - back : n + 1]).split(" ")
                    defining = _defining_positions(pair, subject) if subject else None
                    score, held = _scored(pair, terms, wants_figure, defining, counted, given, len(pair) - len(words))
                    units.append(_Unit(score - PAIRED * back, held, " ".join(pair)))
            continue
        if not wants_figure:
            continue  # a run cut from a long sentence answers a figure (a table's row), nothing else
        keys = [word_key(w) for w in words]
        figures = _figures(words, terms, bool(counted))
        needed = [i for i, k in enumerate(keys) if k in terms or figures[i]]
        for a, start in enumerate(needed):
            for end in needed[a:]:
                if end - start >= SPAN_WORDS:
                    break
                run = words[start : end + 1]
                score, held = _scored(run, terms, wants_figure, None, counted, given, figures=figures[start : end + 1])
                head = "… " if start > 0 else ""
                tail = " …" if end + 1 < len(words) else ""
                units.append(_Unit(score, held, head + " ".join(run) + tail))
    return units


def _defining_positions(words: list[str], subject: str) -> set[int]:
    """Where a text defines `subject`: "X is a", "X, a" (not a list's last item: "A and X, the"), "X (", "X:",
    "propose(s) X", "introduce(s) X", "called X", and where it spells X out ("Stanford Question Answering Dataset
    (SQuAD)": `spelled_out`)."""
    wanted = [word_key(w) for w in subject.split() if word_key(w)]
    found: set[int] = set()
    if not wanted:
        return found
    size = len(wanted)
    for i in range(len(words) - size + 1):
        if [word_key(w) for w in words[i : i + size]] != wanted:
            continue
        after = " ".join(words[i + size - 1 : i + size + 2]).lower()
        before = word_key(words[i - 1]) if i else ""
        listed = before in ("and", "or") and words[i + size - 1].endswith(",")  # "coreference and SQuAD, the λ"
        if ((_APPOSITION.match(after) and not listed) or _IS_A.match(after) or before in _NAMING_VERBS
                or (size == 1 and words[i].startswith("(")
                    and spelled_out(subject.strip(), [" ".join(words[max(0, i - 12) : i + 1])]))):  # fmt: skip
            found.add(i)
    return found


def _of_kind(quote: str, kind: frozenset[str], initials: str | None, tables: bool) -> bool:
    """Whether a line says what it is about: more than half the words of the kind asked for (a word of the line
    beginning with one: "correlation" for "correlat"), or their initials ("JGA"), or, when a result is asked for
    (`tables`), a table's caption (a row's measure is in its table's header: "Table 2: DST Results")."""
    keys = {word_key(w) for w in quote.split()}
    said = sum(1 for k in kind if any(key.startswith(k) for key in keys))
    return 2 * said > len(kind) or (initials is not None and initials in keys) or (
        tables and bool(_CAPTION.search(quote)))


def answer_line(question: str, evidence: Iterable[Evidence]) -> AnswerLine | None:
    """The words of `evidence` that answer `question` best, or None when none holds enough of it (see the module's
    text); ties go to the earlier evidence (the search's order)."""
    asked = FactQuestion.of(question)
    if asked is None:
        return None
    terms, names, total = asked.terms, asked.names, sum(asked.terms.values())
    plain = terms.keys() - names
    wants_figure, subject = asked.wants_figure, asked.subject
    covered = COVERED if wants_figure or subject else COVERED_ELSE
    looked_for = terms | {asked.initials: WORD} if asked.initials else terms  # ("JGA" may end a run, not count)
    evidence = list(evidence)
    named_by = _named_by(evidence, {n for n in names if not any(c.isdigit() for c in n)})
    best: tuple[_Unit, Evidence] | None = None
    for item in evidence:
        # "TripPy" for each text of the TripPy paper (a name, not a version: "2.1" is not what the paper is about)
        given = named_by[item.paper_id]
        for unit in _units(item.text, looked_for, wants_figure, subject, asked.counted, given, item.whole):
            if unit.score < 0 or unit.held < covered * total or len(unit.quote.replace("…", " ").split()) < LEAST_WORDS:
                continue
            if asked.kind and not _of_kind(unit.quote, asked.kind, asked.initials, asked.tables):
                continue  # "What margin ...": a figure of something else (a click-through rate) is no answer
            quoted = {word_key(w) for w in unit.quote.split()}
            if names and not names & (quoted | given):
                continue  # the question names its subject: the line, or the paper it is from, must name it too
            if plain and not (wants_figure or subject) and not plain & quoted:
                continue  # names alone, no figure nor definition ("Iz Beltagy, Kyle Lo, Arman Cohan": "What has Iz
                # Beltagy written?")
            said = " ".join(word_key(w) for w in unit.quote.split())
            if any(f" {v} " not in f" {said} " for v in asked.versions):
                continue  # "WOZ 2.0" is not "MultiWOZ 2.0"
            if best is None or unit.score > best[0].score:
                best = (unit, item)
    if best is None:
        return None
    unit, item = best
    return AnswerLine(_title_alone(unit.quote, item.title) if subject else unit.quote, item)


def _named_by(evidence: list[Evidence], names: set[str]) -> dict[str, frozenset[str]]:
    """The names each paper of the evidence is about: those its title or abstract holds, and those two or more of its
    texts hold (ELMo's paper names ELMo in its full text only: "we call them ELMo"; a paper naming it once, as
    related work, is not about it)."""
    texts: dict[str, list[Evidence]] = {}
    for item in evidence:
        texts.setdefault(item.paper_id, []).append(item)
    about = {}
    for paper, items in texts.items():
        in_about = names & {word_key(w) for item in {item.about for item in items} for w in item.split()}
        told = [names & {word_key(w) for w in item.text.split()} for item in items]
        about[paper] = frozenset(n for n in names if n in in_about or sum(n in held for held in told) >= 2)
    return about


def _title_alone(quote: str, title: str) -> str:
    """A definition that is its paper's title ("TripPy: A Triple Copy Strategy for ..."), quoted from the first page
    where pypdf runs the title into the authors' names and addresses as one sentence: the title alone."""
    title = " ".join(title.split())
    if title and len(quote) > len(title) and quote.lower().startswith(title.lower()):
        return quote[: len(title)]
    return quote
