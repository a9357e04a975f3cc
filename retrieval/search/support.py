"""Whether a text supports a sentence, without a model call (issue 71): the check behind every cited sentence of an
answer (`assistant.claim_check`) and behind `Archive.support` (a sentence against one paper's own text, for the
chat's tools, `/api/support` and `/mcp`).

"Found" means what this can see, not that the logic holds: every figure the sentence states is in the evidence
(4,096 and 4096 alike; 55.29 and 55.3 alike when one rounds to the other), the sentence is close to one sentence of
the evidence (or two neighbours) by the encoder's cosine, and the names it uses (a word with a capital inside, an
acronym, a word with digits) are in the evidence or the paper's title and abstract, unless it is closer still.
The thresholds are calibrated on the judged claims' calibration half (`python -m bench.claim_check --calibrate`),
never on the held-out half they are reported on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from retrieval.library.watches import CITED
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Paper
from retrieval.search.hybrid import search_passages
from retrieval.vectors.embeddings import Embedder, split_sentences
from retrieval.vectors.index import Filters, Index

# Calibrated on the judged claims' calibration half (`python -m bench.claim_check --calibrate`, 2026-12-07): the
# cosine a found sentence reaches with its nearest evidence sentence, and the higher one that lets a name pass that
# the passage and the paper's title and abstract do not spell (a passage seldom repeats the paper's own name).
CLOSE, CLOSE_WITHOUT_A_NAME = 0.50, 0.63

_BRACKETED = re.compile(r"\[[^\[\]\n]{0,40}\]")
_FIGURE = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?!\w)")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_HYPHEN_BREAK = re.compile(r"(\w)-\s*\n\s*(\w)")
_LIGATURES = str.maketrans({"ﬁ": "fi", "ﬂ": "fl", "ﬀ": "ff", "ﬃ": "ffi", "ﬄ": "ffl"})
# The evidence sentences (and pairs) nearest a claim in words, the only ones the encoder reads: on the judged claims
# with their paper's three passages nearest each as evidence (27 candidates a claim), 2, 3, 4 and 6 give the verdicts
# all 27 give, but one wrong-paper claim (2026-12-08).
SHORTLIST = 3


@dataclass(frozen=True)
class Verdict:
    found: bool
    support: str  # the evidence sentence closest to the claim
    closeness: float
    missing: list[str] = field(default_factory=list)  # figures and names of the sentence not in the evidence

    def reason(self) -> str:
        if self.found:
            return "found"
        if self.missing:
            return "not in the source: " + ", ".join(self.missing)
        return "no sentence of the source says it"


@lru_cache(maxsize=1024)  # (an answer's sentences are weighed against the same evidence, turn after turn)
def clean(text: str) -> str:
    """A PDF's text as words: lines joined, words broken at a line's end mended, ligatures spelled out."""
    return re.sub(r"\s+", " ", _HYPHEN_BREAK.sub(r"\1\2", text.translate(_LIGATURES))).strip()


def names(text: str) -> list[str]:
    """The words that name something: a capital after the first letter (ELMo, SciBERT, MultiWOZ, BERT) or a digit
    (L2, GPT2); each part of a hyphened word on its own (ELMo-enhanced: ELMo)."""
    words = _WORD.findall(text)
    return list(dict.fromkeys(w for w in words if any(ch.isupper() for ch in w[1:]) or any(ch.isdigit() for ch in w)))


def figures(text: str) -> list[str]:
    """The figures a text states, thousands' commas dropped; what stands in square brackets (a citation, "[2, p. 7]"
    or "[12]") is no figure."""
    return [match.group(0).replace(",", "") for match in _FIGURE.finditer(_BRACKETED.sub(" ", text))]


def _same_figure(stated: str, given: set[str]) -> bool:
    if stated in given:
        return True
    value = float(stated)
    for other in given:
        places = len(other.partition(".")[2]) if "." in other else 0
        mine = len(stated.partition(".")[2]) if "." in stated else 0
        if places < mine and round(value, places) == float(other):  # 55.29 stated, 55.3 given
            return True
        if mine < places and round(float(other), mine) == value:  # 55.3 stated, 55.29 given
            return True
    return False


@lru_cache(maxsize=2048)
def sentences(evidence: str) -> tuple[str, ...]:
    """The evidence's sentences, then each two neighbours together (a claim may join them)."""
    parts = [p.strip() for p in _SENTENCE.split(clean(evidence)) if p.strip()]
    return (*parts, *(f"{a} {b}" for a, b in zip(parts, parts[1:])))


@lru_cache(maxsize=8192)
def _words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text) if len(w) > 2)


def shortlist(sentence: str, candidates: list[str], most: int = SHORTLIST) -> list[str]:
    """The `most` candidates sharing most of the sentence's words (ties: the earlier), the only ones worth the
    encoder's time: a sentence close in meaning to one of them shares its terms."""
    if len(candidates) <= most:
        return candidates
    mine = _words(sentence)
    shared = [len(mine & _words(c)) / (1 + len(_words(c))) ** 0.5 for c in candidates]
    kept = sorted(sorted(range(len(candidates)), key=lambda i: -shared[i])[:most])
    return [candidates[i] for i in kept]


def check_sentence(sentence: str, evidence: list[str], encode, about: str = "", known: Iterable[str] = ()) -> Verdict:
    """`sentence` against the passages shown for its citation; `about`: the cited paper's title and abstract, where
    the names it goes by stand (a passage seldom repeats them); `known`: figures shown beside the text, not in it
    (the paper's year, its title's, the page the sentence cites); `encode(texts)` gives the dense encoder's
    vectors."""
    text = clean(" ".join(evidence))
    given = {*figures(text), *known}
    missing = [f for f in figures(sentence) if not _same_figure(f, given)]
    squeezed = re.sub(r"[\s-]+", "", f"{text} {clean(about)}").lower()  # Science Parse and ScienceParse alike
    unnamed = [n for n in names(sentence) if n.lower() not in squeezed]
    candidates = shortlist(sentence, list(dict.fromkeys(s for passage in evidence for s in sentences(passage)))
                           or [text])  # fmt: skip
    vectors = encode([sentence, *candidates])
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = vectors[1:] @ vectors[0]
    best = int(np.argmax(scores))
    closeness = float(scores[best])
    found = not missing and closeness >= (CLOSE_WITHOUT_A_NAME if unnamed else CLOSE)
    return Verdict(found, candidates[best], closeness, missing + unnamed)


def shown_beside(paper: Paper) -> tuple[str, ...]:
    """The figures a paper is shown with, beside its text: its year and the figures of its title ("Hindsight is
    20/20")."""
    return (*figures(paper.title), *([str(paper.year)] if paper.year else []))


@dataclass(frozen=True)
class Supported:
    """A sentence weighed against one paper's own text: its abstract and its full-text passages nearest the
    sentence; `page`: where the supporting sentence stands (None: the abstract, or no full text)."""

    paper: Paper
    verdict: Verdict
    page: int | None = None


def paper_support(catalog: Catalog, index: Index, embedder: Embedder, paper: Paper, sentence: str,
                  viewer: str | None = None, passages: int = 3) -> Supported:  # fmt: skip
    """Whether `paper`'s own text supports `sentence` (`check_sentence`): its abstract and the `passages` of its full
    text nearest the sentence (`viewer`: whose uploads the search may see, the paper being one of them)."""
    hits = search_passages(catalog, index, embedder, sentence, Filters(paper_ids=(paper.id,), viewer=viewer),
                           limit=passages).hits  # fmt: skip
    about = f"{paper.title}. {paper.abstract or ''}"
    verdict = check_sentence(sentence, [paper.abstract or paper.title, *(h.text for h in hits)],
                             embedder.dense_remembered, about, shown_beside(paper))  # fmt: skip
    page = next((h.page for h in hits if verdict.support[:60] in clean(h.text)), None)
    return Supported(paper, verdict, page)


def checked_judgement(text: str, texts: list[tuple[str, list[str]]], encode) -> dict:
    """Each sentence of a judgement that cites, against the texts it cites (`texts`: each number's title and the
    quotes the model was given), as the chat checks its answers' cited sentences (`retrieval.search.support`):
    {found, sentences, missed: the sentences not found}."""
    sentences: list[str] = []
    for piece in split_sentences(text):
        if sentences and not any(ch.isalpha() for ch in piece):  # "... the results. [3]": the sentence's citation
            sentences[-1] += f" {piece}"
        else:
            sentences.append(piece)
    checked, missed = 0, []
    for sentence in sentences:
        numbers = [int(n) for n in CITED.findall(sentence) if 1 <= int(n) <= len(texts)]
        if not numbers:
            continue
        quotes = [str(q) for n in numbers for q in texts[n - 1][1][:2]]
        checked += 1
        if not check_sentence(sentence, quotes or [texts[numbers[0] - 1][0]], encode,
                              " ".join(texts[n - 1][0] for n in numbers)).found:  # fmt: skip
            missed.append(sentence)
    return {"found": checked - len(missed), "sentences": checked, "missed": missed}
