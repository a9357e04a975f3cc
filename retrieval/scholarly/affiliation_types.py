"""What the affiliation resolver works on and answers: an institution's names, how a text matched, a match."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True)
class InstitutionNames:
    """What the resolver knows about one institution."""

    id: int | str
    name: str
    aliases: tuple[str, ...] = ()
    acronyms: tuple[str, ...] = ()
    country_code: str | None = None
    country_name: str | None = None
    city: str | None = None
    parents: tuple[str, ...] = ()


class MatchedBy(StrEnum):
    """How a text was matched to an institution; the value is what pages and tools print."""

    ID = "id"
    ROR = "ROR id"
    OPENALEX = "OpenAlex id"
    EXACT = "exact"  # a name, alias or translation, equal after normalising
    ACRONYM = "acronym"
    CONTAINS = "contains"  # the whole name, in order, inside a longer piece
    WORDS = "words"  # words in common, weighted
    AMBIGUOUS = "ambiguous"  # an acronym several institutions hold
    LETTERS = "letters"  # only looks alike letter by letter (a "did you mean" candidate)
    NOT_FOUND = "not found"
    EMPTY = "empty"

    @property
    def certain(self) -> bool:
        """An id, or a name or acronym that names this institution as such (not a guess from shared words)."""
        return self in (MatchedBy.ID, MatchedBy.ROR, MatchedBy.OPENALEX, MatchedBy.EXACT, MatchedBy.ACRONYM)


@dataclass(frozen=True)
class Match:
    id: int | str
    name: str
    score: float
    matched: str  # the name, alias or acronym that matched
    evidence: MatchedBy
