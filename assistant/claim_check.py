"""Whether a cited sentence's terms and figures are in the text it cites (issue 71), without a model call.

"Found" means what this can see, not that the logic holds: every figure the sentence states is in the evidence
(4,096 and 4096 alike; 55.29 and 55.3 alike when one rounds to the other), the sentence is close to one sentence of
the evidence (or two neighbours) by the encoder's cosine, and the names it uses (a word with a capital inside, an
acronym, a word with digits) are in the evidence or the cited paper's title and abstract, unless it is closer still.
The thresholds are calibrated on the judged claims' calibration half (`python -m bench.claim_check --calibrate`),
never on the held-out half they are reported on. Not yet part of an answer: the composer calls it next.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from assistant.composer import CITATION

# Calibrated on the judged claims' calibration half (`python -m bench.claim_check --calibrate`, 2026-12-07): the
# cosine a found sentence reaches with its nearest evidence sentence, and the higher one that lets a name pass that
# the passage and the paper's title and abstract do not spell (a passage seldom repeats the paper's own name).
CLOSE, CLOSE_WITHOUT_A_NAME = 0.50, 0.63

_FIGURE = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?!\w)")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_HYPHEN_BREAK = re.compile(r"(\w)-\s*\n\s*(\w)")
_LIGATURES = str.maketrans({"ﬁ": "fi", "ﬂ": "fl", "ﬀ": "ff", "ﬃ": "ffi", "ﬄ": "ffl"})


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


def clean(text: str) -> str:
    """A PDF's text as words: lines joined, words broken at a line's end mended, ligatures spelled out."""
    return re.sub(r"\s+", " ", _HYPHEN_BREAK.sub(r"\1\2", text.translate(_LIGATURES))).strip()


def names(text: str) -> list[str]:
    """The words that name something: a capital after the first letter (ELMo, SciBERT, MultiWOZ, BERT) or a digit
    (L2, GPT2); each part of a hyphened word on its own (ELMo-enhanced: ELMo)."""
    words = _WORD.findall(text)
    return list(dict.fromkeys(w for w in words if any(ch.isupper() for ch in w[1:]) or any(ch.isdigit() for ch in w)))


def figures(text: str) -> list[str]:
    """The figures a text states, thousands' commas dropped; its citations ("[2, p. 7]") are no figures."""
    return [match.group(0).replace(",", "") for match in _FIGURE.finditer(CITATION.sub(" ", text))]


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


def sentences(evidence: str) -> list[str]:
    parts = [p.strip() for p in _SENTENCE.split(clean(evidence)) if p.strip()]
    return parts + [f"{a} {b}" for a, b in zip(parts, parts[1:])]


def check_sentence(sentence: str, evidence: list[str], encode, about: str = "") -> Verdict:
    """`sentence` against the passages shown for its citation; `about`: the cited paper's title and abstract, where
    the names it goes by stand (a passage seldom repeats them); `encode(texts)` gives the dense encoder's vectors."""
    text = clean(" ".join(evidence))
    given = set(figures(text))
    missing = [f for f in figures(sentence) if not _same_figure(f, given)]
    squeezed = re.sub(r"[\s-]+", "", f"{text} {clean(about)}").lower()  # Science Parse and ScienceParse alike
    unnamed = [n for n in names(sentence) if n.lower() not in squeezed]
    candidates = [s for passage in evidence for s in sentences(passage)] or [text]
    vectors = encode([sentence, *candidates])
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = vectors[1:] @ vectors[0]
    best = int(np.argmax(scores))
    closeness = float(scores[best])
    found = not missing and closeness >= (CLOSE_WITHOUT_A_NAME if unnamed else CLOSE)
    return Verdict(found, candidates[best], closeness, missing + unnamed)
