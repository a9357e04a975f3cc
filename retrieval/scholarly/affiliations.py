"""Resolving what people write about an institution to one institution of the catalog.

Input can be a name ("Massachusetts Institute of Technology"), an acronym ("MIT"), an alias, or a raw
affiliation string as publishers print it ("Dept. of EECS, Univ. of California, Berkeley, CA 94720, USA").
The resolver:

1. normalises text: HTML entities, accents, glued words ("CaliforniaBerkeley"), `&`, abbreviations
   (Univ., Inst., Natl., Dept., Lab., Tech. ...), the many spellings of "university", stop words and
   legal suffixes (Ltd, Inc, GmbH), numbers (postcodes);
2. cuts the string at commas, semicolons and line breaks, and reads every run of up to three consecutive
   pieces as a possible name;
3. scores each institution name that shares a word with the string by the IDF-weighted Dice overlap of
   the two word sets (so "Tokyo University" prefers "University of Tokyo" over "Tokyo University of
   Science", whose extra "Science" counts against it), keeps the best piece for each institution, and
   adds what the rest of the string says: a country or US state in the string that disagrees with the
   institution's country costs, its city named costs nothing and helps break ties;
4. reads a lone upper-case piece as an acronym ("MIT", "CNRS"), trusted when one institution holds it
   (or one in the string's country);
5. answers the best institution with its score; callers abstain below a threshold (see
   `bench/affiliations.py`, where the threshold was chosen on half of a gold set and scored on the other).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from retrieval.scholarly.affiliation_text import (
    COUNTRY_ALIASES,
    GENERIC,
    KIND_WEIGHT,
    KIND_WORDS,
    MAX_PIECES,
    US_STATES,
    as_phrase,
    deletions_of,
    pieces,
    trigrams_of,
    without_note,
    words,
)
from retrieval.scholarly.affiliation_types import InstitutionNames, Match, MatchedBy

__all__ = ["AffiliationResolver", "InstitutionNames", "Match", "MatchedBy"]


@dataclass
class AffiliationResolver:
    institutions: list[InstitutionNames]

    def __post_init__(self) -> None:
        self._names: list[tuple[int, tuple[str, ...], frozenset[str], str]] = []
        self._literal: list[str] = []  # each name as written (lower case, no accents or punctuation)
        self._display: list[bool] = []  # the institution's own name, not an alias or a translation
        self._stripped: list[bool] = []  # "Google" from "Google (Australia)"
        self._exact: dict[frozenset[str], set[int]] = defaultdict(set)
        self._acronyms: dict[str, set[int]] = defaultdict(set)
        self._countries: dict[str, str] = {}
        document_frequency: dict[str, int] = defaultdict(int)
        for number, inst in enumerate(self.institutions):
            seen_here: set[str] = set()
            for label in (inst.name, *inst.aliases):
                variants = {label, without_note(label)}
                for variant in variants:
                    sequence = tuple(words(variant))
                    if not sequence:
                        continue
                    tokens = frozenset(sequence)
                    self._names.append((number, sequence, tokens, label))
                    self._literal.append(as_phrase(variant))
                    self._display.append(label == inst.name)
                    self._stripped.append(variant != label)
                    self._exact[tokens].add(number)
                    seen_here |= tokens
            for token in seen_here:
                document_frequency[token] += 1
            for acronym in inst.acronyms:
                if acronym and len(acronym) >= 2:
                    self._acronyms[acronym.upper()].add(number)
            if inst.country_code and inst.country_name:
                self._countries[as_phrase(inst.country_name)] = inst.country_code.upper()
        total = max(1, len(self.institutions))
        self._idf = {t: math.log(1 + total / df) for t, df in document_frequency.items()}
        for token in KIND_WORDS & self._idf.keys():
            self._idf[token] = max(self._idf[token], KIND_WEIGHT)
        self._unknown_weight = math.log(1 + total)
        self._name_weight = [self._weight(tokens) for _n, _s, tokens, _l in self._names]
        self._by_word: dict[str, list[int]] = defaultdict(list)
        for position, (_number, _sequence, tokens, _label) in enumerate(self._names):
            for token in tokens:
                self._by_word[token].append(position)
        self._near: dict[str, set[str]] = defaultdict(set)  # one-edit neighbourhoods of longer words
        for token in self._idf:
            if len(token) >= 5:
                for variant in deletions_of(token) | {token}:
                    self._near[variant].add(token)
        self._countries.update(COUNTRY_ALIASES)
        self._cities = {as_phrase(i.city) for i in self.institutions if i.city}
        self._by_id = {i.id: i for i in self.institutions}
        self._initials = [
            "".join(w[0] for w in words(without_note(i.name))).upper() for i in self.institutions
        ]

    @classmethod
    def from_records(cls, records: Iterable) -> "AffiliationResolver":
        """From objects with name, aliases, acronyms, country and city (catalog rows or parsed records);
        the id is the catalog id when there is one, else the ROR id."""
        return cls(
            [
                InstitutionNames(
                    id=getattr(r, "id", None) or r.ror_id,
                    name=r.name,
                    aliases=tuple(r.aliases or ()),
                    acronyms=tuple(r.acronyms or ()),
                    country_code=r.country_code,
                    country_name=r.country_name,
                    city=r.city,
                    parents=tuple(r.parent_rors or ()),
                )
                for r in records
            ]
        )

    # --- reading the string ---------------------------------------------------------------------
    def _weight(self, tokens: Iterable[str]) -> float:
        return sum(self._idf.get(t, self._unknown_weight) for t in tokens)

    def _spelled(self, token: str) -> str:
        """A word the names use, for a word within one edit of it (Wuerzburg -> wurzburg, Angles -> angeles):
        a letter missing first, then one too many, then one changed; only when one word fits."""
        if token in self._idf or len(token) < 5:
            return token
        missing = self._near.get(token, set())
        extra = {d for d in deletions_of(token) if d in self._idf}
        changed = set().union(*(self._near.get(d, set()) for d in deletions_of(token))) - missing - extra
        for found in (missing, extra, changed):
            if len(found) == 1:
                return next(iter(found))
            if found:
                return token
        return token

    def countries_in(self, text: str) -> set[str]:
        """Country codes the string names: a country name or code as a whole piece (or its end), or a
        US state code next to a ZIP-like number."""
        found = set()
        for piece in pieces(text):
            phrase = as_phrase(piece)
            tail = phrase.split()
            for candidate in {phrase, " ".join(tail[-3:]), " ".join(tail[-2:]), tail[-1] if tail else ""}:
                code = self._countries.get(candidate)
                if code and (len(candidate) > 2 or candidate == phrase):
                    found.add(code)
            state = re.search(r"(?:^|\s)([A-Z]{2})(?:\s*\d{5}(?:-\d{4})?)?$", piece.strip())
            if state and state.group(1).lower() in US_STATES or phrase in US_STATES.values():
                found.add("US")
        return found

    def _is_place(self, piece: str) -> bool:
        phrase = as_phrase(piece)
        return phrase in self._countries or phrase in US_STATES or phrase in US_STATES.values()

    # --- resolving ------------------------------------------------------------------------------
    def resolve(self, text: str, limit: int = 5) -> list[Match]:
        """Institutions the string may name, best first, each with a score in 0..1."""
        text = (text or "").strip()[:1000]
        if not text:
            return []
        parts = pieces(text) or [text]
        countries = self.countries_in(text)
        lowered = f" {as_phrase(text)} "
        everything = self._weight(set(words(text))) or 1.0
        best: dict[int, Match] = {}

        def offer(number: int, score: float, matched: str, evidence: MatchedBy, covered: float) -> None:
            inst = self.institutions[number]
            code = (inst.country_code or "").upper()
            if countries and code and code not in countries:
                score *= 0.75  # the string places itself elsewhere
            # Of two names that fit as well, the one that accounts for more of the string wins
            # ("University of California, Davis" over "University of California").
            score *= 0.94 + 0.06 * min(1.0, covered / everything)
            if inst.city and len(inst.city) > 3 and f" {as_phrase(inst.city)} " in lowered:
                score += 0.01
            score = min(1.0, score)
            current = best.get(number)
            if current is None or score > current.score:
                best[number] = Match(inst.id, inst.name, round(score, 4), matched, evidence)

        windows = []
        for size in range(1, MAX_PIECES + 1):
            for start in range(0, len(parts) - size + 1):
                windows.append(" ".join(parts[start : start + size]))
        for window in dict.fromkeys(windows):
            sequence = tuple(self._spelled(t) for t in words(window))
            if sequence:
                self._score_window(sequence, offer, as_phrase(window))
        for part in parts:
            acronym = part.strip().strip(".()")
            capitals = sum(1 for ch in acronym if ch.isupper())
            if self._is_place(acronym):  # "USA" is a country here, not the United States Army
                continue
            if " " not in acronym and 2 <= len(acronym) <= 10 and (acronym.isupper() or capitals >= 2):
                holders = self._acronyms.get(acronym.upper(), set())
                local = {n for n in holders if (self.institutions[n].country_code or "").upper() in countries}
                spelled = {n for n in holders if self._initials[n] == acronym.upper()}  # CNRS: Centre National...
                chosen = local if len(local) == 1 else spelled if len(spelled) == 1 else holders
                weight = self._unknown_weight
                for number in chosen:
                    offer(number, 0.93 if len(chosen) == 1 else 0.6, acronym, MatchedBy.ACRONYM, weight)
        # Ties: the body others belong to ("Google (United States)" over "Google (Australia)").
        parents = {str(p) for m in best.values() for p in self._by_id[m.id].parents}
        ranked = sorted(best.values(), key=lambda m: (-m.score, str(m.id) not in parents, str(m.name)))
        if len(ranked) > 1 and ranked[1].score >= ranked[0].score - 0.005:
            first, second = ranked[0], ranked[1]
            related = str(second.id) in self._by_id[first.id].parents or str(first.id) in self._by_id[second.id].parents
            if not related:  # two unrelated bodies fit equally ("University of Newcastle"): say so
                ranked[0] = Match(first.id, first.name, round(first.score * 0.9, 4), first.matched, MatchedBy.AMBIGUOUS)
        return ranked[:limit]

    def _score_window(self, sequence: tuple[str, ...], offer, literal: str = "") -> None:
        tokens = frozenset(sequence)
        plain = " ".join(sequence)  # without numbers and initials: "Virginia 22315", "New York, N. Y."
        place_only = any(p in self._cities or p in self._countries or p in US_STATES.values() for p in (literal, plain))
        window_weight = self._weight(tokens)
        known = sorted((t for t in tokens if t in self._idf), key=lambda t: -self._idf[t])
        candidates: set[int] = set()
        for token in known[:3]:
            postings = self._by_word.get(token, ())
            if len(postings) <= 3000:
                candidates.update(postings)
        joined = " " + " ".join(sequence) + " "
        for position in candidates:
            number, name_sequence, name_tokens, label = self._names[position]
            shared = tokens & name_tokens
            if not shared:
                continue
            overlap = self._weight(shared)
            phrase = " ".join(name_sequence)
            same = self._literal[position] == literal
            if not shared - GENERIC and not same:
                continue  # only words like "Department", "Health", "Medical" in common
            if name_tokens == tokens:
                # Written the same way beats equal after normalising; the institution's own name beats an
                # alias or a translation ("Universidad de Tennessee" of a university system); a name with
                # its "(Country)" dropped comes last ("Google" of "Google (Australia)").
                if place_only and not same:
                    continue  # "Missouri" alone is a state, not "Missouri S&T"
                score = 1.0 if same else 0.98 if name_sequence == sequence else 0.96
                score -= 0.01 * (not self._display[position]) + 0.02 * self._stripped[position]
                evidence = MatchedBy.EXACT
            elif place_only:
                continue  # "Boston" alone names a city, not Boston University
            elif f" {phrase} " in joined and len(name_sequence) > 1:
                # The whole name, in order, inside a longer piece ("Sungkyunkwan University Gangnam-gu"),
                # a little better at its start, where people put the institution, and when written as is.
                at_start = joined.startswith(f" {phrase} ")
                as_written = f" {self._literal[position]} " in f" {literal} "
                score = 0.86 + 0.05 * at_start + 0.02 * as_written + 0.05 * self._name_weight[position] / window_weight
                evidence = MatchedBy.CONTAINS
            else:
                score = 2 * overlap / (window_weight + self._name_weight[position])
                if (name_tokens - tokens) & KIND_WORDS:
                    score *= 0.8  # the name says what kind of body it is; the string does not
                evidence = MatchedBy.WORDS
            offer(number, score, label, evidence, overlap)

    def closest(self, text: str, limit: int = 5) -> list[Match]:
        """Names that look most like the text letter by letter (character trigrams), for "not found, did you
        mean...": a fallback that needs no word in common."""
        grams = trigrams_of(as_phrase(text))
        if not grams:
            return []
        if not hasattr(self, "_grams"):
            self._grams: dict[str, list[int]] = defaultdict(list)
            self._gram_counts = []
            for position, literal in enumerate(self._literal):
                own = trigrams_of(literal)
                self._gram_counts.append(len(own))
                for gram in own:
                    self._grams[gram].append(position)
        common: dict[int, int] = defaultdict(int)
        for gram in grams:
            for position in self._grams.get(gram, ()):
                common[position] += 1
        scored: dict[int, Match] = {}
        for position, shared in common.items():
            number = self._names[position][0]
            score = shared / (len(grams) + self._gram_counts[position] - shared)
            if number not in scored or score > scored[number].score:
                inst = self.institutions[number]
                scored[number] = Match(inst.id, inst.name, round(score, 4), self._names[position][3], MatchedBy.LETTERS)
        return sorted(scored.values(), key=lambda m: (-m.score, str(m.name)))[:limit]

    def best(self, text: str, threshold: float = 0.0) -> Match | None:
        found = self.resolve(text, limit=1)
        return found[0] if found and found[0].score >= threshold else None
