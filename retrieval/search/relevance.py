"""When a hit is worth showing: the relevance floor.

Fused scores say only how a hit ranks against the others (each side's scores are divided by its best), so a list of
unrelated papers looks as confident as a list of right ones. The floor reads the dense side's own cosine instead. A
paper clears it when its best abstract point (abstract or sentence window) scores at least `dense` and no more than
`gap` under the best paper of the list. A full-text passage clears it at `passage`. And when the query names
something ("TripPy", "Semantic Scholar", "BM25"), what clears must name it too, when anything that clears does
(`Floor.naming`): a question about one system is not answered by the papers beside it; and when none that clears
names it, a paper under the cut that does clears (down to `phrase_dense`). A name most of the list holds ("LLM"
among security papers) names the field, not the subject, and is not weighed (`telling`). When nothing clears, a
query that is mostly a name ("TinyBERT", "What is ALBERT?", "Pyserini") is answered by the papers named after it
(`Floor.titled`: the title leads with it, or the abstract says the paper named it, "We introduce LLaMA, ...",
`names_its_own`): the encoder does not know a new name, and scores its paper under the cut (0.40 for "TinyBERT"). Of
the demo's 219 titles that begin with a one-word name and a colon, asking the name alone showed its paper 72 times
before, 214 after (BENCHMARKS.md, "Session 39"). A name no title is named after but the archive's texts spell out
("Group Relative Policy Optimization (GRPO)": `spelled_out`) is asked for again as they spell it
(`retrieval.search.spelling`); of the 643 such names of the demo, "What is X?" showed a paper spelling X out 73 times
before, 348 after (BENCHMARKS.md, "Session 40").

The numbers are those of the bundled encoder (all-MiniLM-L6-v2), calibrated on the judged questions
(`tests/fixtures/judged_questions.jsonl`, `python -m bench.precision`; BENCHMARKS.md, "Session 31"). On the
demo, the questions about subjects the archive does not hold had a best abstract cosine of 0.15-0.42 and a best
passage cosine of 0.11-0.32. The answerable ones had 0.64-0.90 on abstracts (topics), or 0.42-0.87 on passages
(facts in the full text); the passage that holds a fact's answer can score lower than the best one (0.35 and
up: 0.35 keeps 17 of the 21 answering passages, 0.37 kept 15; BENCHMARKS.md, "Session 32").

A paper under the cosine cut still clears, down to `phrase_dense`, when it holds the query's phrases (`phrases`:
two content words side by side, "prompt injection", "time series") about as well as the papers that clear. The
encoder ranks "ceLLMate: Sandboxing Browser AI Agents" at 0.43 for "prompt injection attacks on LLM applications",
though its abstract is about prompt injection attacks. With the phrases the gap narrowed from 0.25 to 0.2: on
the judged topics, shown precision 0.812 -> 0.828 and recall 0.882 -> 0.910; held out on alternate halves,
recall 0.839-0.874 -> 0.886-0.898 (BENCHMARKS.md, "Session 37").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Floor:
    dense: float = 0.5  # a paper's best abstract or window cosine, at least
    gap: float = 0.2  # and at most this far under the list's best paper
    passage: float = 0.35  # a full-text passage's cosine, at least
    pool: int = 10  # candidates weighed to fill a list, so a clearing paper ranked 6th can take a weak 5th's place
    phrase_dense: float = 0.35  # a paper holding the query's phrases clears down to this cosine, when it holds
    phrase_part: int = 3  # more than 1/phrase_part of the phrases the cleared paper holding the most holds
    titled_dense: float = 0.2  # a paper whose title names the name a query is about clears down to this (`titled`)

    def papers(self, cosines: list[float | None], held: list[int] | None = None) -> list[bool]:
        """Which papers of a list (their best dense cosines; None: the dense side did not score it) clear it. With
        `held` (how many of the query's phrases each paper holds, `phrases`), a paper under the cut clears when it
        holds more than a third of what the cleared paper holding the most holds, down to `phrase_dense`. Nothing
        clears when no paper reaches `dense`: phrases never make an answer of weak matches."""
        best = max((c for c in cosines if c is not None), default=None)
        if best is None:
            return [False for _ in cosines]
        low = max(self.dense, best - self.gap)
        clears = [c is not None and c >= low for c in cosines]
        most = max((n for n, c in zip(held or [], clears, strict=False) if c), default=0)
        if not most:  # (nothing clears, or what clears holds none of the phrases)
            return clears
        return [k or (c is not None and c >= self.phrase_dense and self.phrase_part * n > most)
                for k, c, n in zip(clears, cosines, held, strict=True)]  # fmt: skip

    def titled(self, cosines: list[float | None], titles: list[str], query: str,
               abstracts: list[str] | None = None) -> list[bool]:  # fmt: skip
        """When nothing clears: the papers named after what the query is about, down to `titled_dense`. A title is
        named after a name the query coins (`coined_terms`: "TinyBERT", "ALBERT") when it, or a part of it after a
        colon, leads with it (`leads`: "TinyBERT: ...", "... Framework: BM25 and Beyond"), and after another word
        of the query when that word is all it says before its colon ("Pyserini: A Python Toolkit ..."). The names
        some title is named after must make up at least a third of the query's content words ("How many
        parameters does TinyBERT have?"; not "LASER eye surgery recovery time", "efficiency of C4 photosynthesis
        in crops"), and fewer than half of the list's titles may hold them (`telling`: "3D" names a field). The
        encoder does not know a new name: TinyBERT's paper scores 0.40 for "TinyBERT" and 0.33 for the question,
        under the cut. A title that only mentions the name ("... in stretched dry DNA") is not about it. A paper
        whose abstract (`abstracts`, lower case) says it named a coined name ("We introduce LLaMA, a collection of
        ...": `names_its_own`) is named after it too. Those named after the most of the names clear."""
        coined = coined_terms(query)
        stop, _ = _words()
        plain = [w for w in dict.fromkeys(w.lower() for w in _WORD.findall(query)) if w not in coined and w not in stop]

        said = abstracts or ["" for _ in titles]

        def named(i: int, name: str) -> bool:
            if name in coined:
                return leads(titles[i], name) or names_its_own(said[i], name)
            head, colon, _ = titles[i].partition(":")
            return bool(colon) and head.strip() == name

        names = [name for name in [*coined, *plain] if any(named(i, name) for i in range(len(titles)))]
        names = telling(names, titles)
        if not names or 3 * len(names) < len(content_words(query)):
            return [False for _ in titles]
        found = [sum(1 for name in names if named(i, name)) for i in range(len(titles))]
        most = max((n for n, c in zip(found, cosines, strict=True) if (c or 0.0) >= self.titled_dense), default=0)
        return [most > 0 and n == most and (c or 0.0) >= self.titled_dense for n, c in zip(found, cosines, strict=True)]

    def passages(self, cosines: list[float | None]) -> list[bool]:
        return [c is not None and c >= self.passage for c in cosines]

    def naming(self, clears: list[bool], cosines: list[float | None], texts: list[str], names: list[str]) -> list[bool]:
        """Of the papers that clear the floor, those that name what the query names ("TripPy", "Semantic
        Scholar", "BM25": `named_terms`) keep clearing, when any of them names it (most of it: those naming the
        most of those words), and so do those closer to the query than every paper that names it ("deep learning or
        LLMs": a paper on the first); the others no longer do: a paper about something else near the subject is no
        answer to a question about it. When none that clears names it, the papers under the cut that name it most
        clear, down to `phrase_dense` ("How many papers does SciDocs contain?": SPECTER's paper, at 0.43, introduces
        SciDocs); never when nothing clears."""
        if not names:
            return clears
        found = [sum(1 for name in names if says(text, name)) for text in texts]
        most = max((n for n, c in zip(found, clears, strict=True) if c), default=0)
        if not most and any(clears):  # none that clears names it: those under the cut that name it most clear too
            most = max((n for n, c in zip(found, cosines, strict=True) if (c or 0.0) >= self.phrase_dense), default=0)
            clears = [k or (most > 0 and n == most and (c or 0.0) >= self.phrase_dense)
                      for k, n, c in zip(clears, found, cosines, strict=True)]  # fmt: skip
        if not most:
            return clears
        naming = max(c or 0.0 for c, n, k in zip(cosines, found, clears, strict=True) if k and n == most)
        return [k and (n == most or (c or 0.0) > naming) for k, c, n in zip(clears, cosines, found, strict=True)]


def telling(names: list[str], texts: list[str]) -> list[str]:
    """The names that tell a list apart: those fewer than half its texts hold. A name most candidates hold ("LLM"
    among security papers) names the field, not the subject; `Floor.naming` weighs only the others."""
    return [name for name in names if 2 * sum(says(text, name) for text in texts) < len(texts)]


def phrases(text: str) -> frozenset[tuple[str, str]]:
    """A text's phrases: each two content words side by side once the stop words are left out, stemmed ("attacks
    on LLM applications": (attack, llm), (llm, applic))."""
    words = content_words(text)
    return frozenset(zip(words, words[1:], strict=False))


def phrases_held(asked: frozenset[tuple[str, str]], text: str) -> int:
    """How many of a query's phrases (`phrases`) a text holds (its own are not gathered: 0.06 ms an abstract)."""
    if not asked:
        return 0
    words = content_words(text)
    return len(asked.intersection(zip(words, words[1:], strict=False)))


def content_words(text: str) -> list[str]:
    """The words of a text in order, lower case, stop words (BM25's list) left out, each stemmed (Snowball)."""
    stop, stemmer = _words()
    return stemmer.stem_words([w for w in _LETTERS.findall(text.lower()) if w not in stop])


@cache
def _words():
    from py_rust_stemmers import SnowballStemmer

    from retrieval.vectors.embeddings import STOPWORDS

    return frozenset(STOPWORDS.read_text(encoding="utf-8").split()), SnowballStemmer("english")


_LETTERS = re.compile(r"[^\W_]+")
_WORD = re.compile(r"[\w][\w.+-]*[\w+]|\w")


def is_name(word: str, first: bool = False) -> bool:
    """A name, not a plain word: capitals past its first letter ("TripPy", "SPECTER", "ELMo"), letters with
    digits ("BM25", "1B"), or a capital where a sentence does not begin ("Semantic Scholar" inside a question)."""
    if len(word) < 2 or word.isdigit() or not any(c.isalpha() for c in word):
        return False
    if any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:]):
        return True
    return word[0].isupper() and not first


def named_terms(query: str) -> list[str]:
    """What a query names (`is_name`), lower case, each once; a possessive's "'s" and an acronym's plural "s" left
    off."""
    words = _WORD.findall(re.sub(r"['’]s\b", "", query))
    names = [w[:-1] if w.endswith("s") and w[:-1].isupper() else w for n, w in enumerate(words)
             if is_name(w, first=n == 0)]  # ("LLMs": "LLM", whose plural `says` finds too)  # fmt: skip
    return list(dict.fromkeys(name.lower() for name in names))


def coined_terms(query: str) -> list[str]:
    """The names a query coins, lower case, each once: capitals past the first letter or letters with digits
    ("TinyBERT", "ALBERT", "BM25"; not "Semantic" nor a Roman numeral)."""
    words = _WORD.findall(re.sub(r"['’]s\b", "", query))
    names = [w[:-1] if w.endswith("s") and w[:-1].isupper() else w for w in words
             if is_name(w, first=True) and not _ROMAN.fullmatch(w)]  # fmt: skip
    return list(dict.fromkeys(name.lower() for name in names))


_ROMAN = re.compile(r"[IVXLC]+")


def leads(title: str, name: str) -> bool:
    """Whether a title, or a part of it after a colon, begins with `name` as a word of its own ("tinybert: distilling
    bert ...", "the probabilistic relevance framework: bm25 and beyond"; not "... localization in stretched dry
    dna")."""
    for part in title.split(":"):
        part = part.lstrip()
        if part.startswith(name) and (len(part) == len(name) or not is_word_char(part[len(name)])):
            return True
    return False


def about_names(query: str) -> list[str]:
    """The names a query coins (`coined_terms`) when it is about them: they make up at least a third of its content
    words ("How many parameters does TinyBERT have?", "What is GRPO?"; not "LASER eye surgery recovery time")."""
    coined = coined_terms(query)
    return coined if coined and 3 * len(coined) >= len(content_words(query)) else []


# "we call them ELMo", "We propose SPECTER", "This paper introduces the FED dataset": a name of the paper's own
_NAMING = re.compile(r"\b(?:we|this (?:paper|work|article)|it(?: also)?)\s+(?:call|propose|introduce|present|name|dub|"
                     r"term)\w*\b", re.I)  # fmt: skip
_NAMED_WITHIN = 4  # words after the verb: "we call them ELMo", "We call our model SPECTER", "introduces the FED"
_TIES = frozenset("to use using on with based of from for by and or in upon over via".split())
_EDGE = "\"'“”‘’()[]{}.,;:!?"  # what a word of a query or a text may be wrapped in


def bare(word: str) -> str:
    """A word without what wraps it nor its possessive ("(GRPO's)": "GRPO"), as `named_terms` reads it."""
    return word.strip(_EDGE).removesuffix("'s").removesuffix("’s")


def names_its_own(text: str, name: str) -> bool:
    """Whether a text says its paper named `name` (lower case): a naming verb after "we", "this paper" or "it", then
    the name within `_NAMED_WITHIN` words, none of them tying it to something else ("we propose a method based on
    BERT", "we present SPECTER, using BERT" name no BERT of their own; nor does "a BERT-based model")."""
    for found in _NAMING.finditer(text):
        for word in text[found.end() : found.end() + 200].split()[:_NAMED_WITHIN]:
            said = word.strip(_EDGE).lower()  # (a possessive names another work: "we present ELMo's ...")
            if said in (name, f"{name}s"):
                return True
            if said in _TIES or word.endswith((".", ",", ";", ":")):
                break
    return False


def says(text: str, name: str) -> bool:
    """Whether `text` holds `name` as a word of its own, or its plural ("LLM": "LLMs" too). Not a pattern built from
    the name: a plain scan, linear in the text whatever the name."""
    start = text.find(name)
    while start != -1:
        end = start + len(name)
        if (start == 0 or not is_word_char(text[start - 1], "-")) and any(
                text.startswith(tail, end) and (end + len(tail) == len(text) or not is_word_char(text[end + len(tail)]))
                for tail in ("", "s", "es")):  # fmt: skip
            return True
        start = text.find(name, start + 1)
    return False


def is_word_char(char: str, also: str = "") -> bool:
    """Whether a character is part of a word (`also`: characters that count here too)."""
    return char.isalnum() or char == "_" or char in also


FLOOR = Floor()
