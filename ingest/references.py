"""A PDF's reference list as entries a person can read: each entry split from the list and parsed into its authors,
year, title and venue, with the arXiv ids and DOIs it holds and its raw text.

No parser a package ships fits here (GROBID and CERMINE are Java services, anystyle is Ruby, refextract is not on
this machine's index), so this is ours, tested on the demo's six PDFs (`tests/ingest/test_references.py`,
`python -m bench.references`). It reads the text `ingest.pdf_text.reference_text` gives with `soft=True`: the
list's lines joined by spaces, a word broken at a line's end marked with a soft hyphen.

Two styles:

- numbered ("[12] A. Author and B. Author. Title. Venue, 2018."): an entry starts at each "[n]" that follows the
  one before it;
- author-year, as ACL and most of computing write them ("Jacob Devlin, Ming-Wei Chang, and Kristina Toutanova.
  2019. BERT: Pre-training of ... In NAACL."): each entry has one ". 2019." after its authors. The authors are the
  run of names just before it (capitalised words, initials, "and", "et al."), back to the word that ended the
  entry before (a word with a full stop that is not an initial: "arXiv:1810.00278.", "IEEE.", "263-272.").

The title is what follows the year (or, numbered, the authors) up to the first full stop, question or exclamation
mark that a capital or the end follows ("Layer normalization.CoRR"); the venue is the rest, without its ids and
pages. A word broken across lines is joined when it goes on in lower case ("Scal-able" -> "Scalable"); otherwise
its hyphen stays ("SciB-ERT").
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from dataclasses import dataclass, field

from ingest.pdf_text import ARXIV_REF, DOI_REF, cited_identifiers

SOFT = "\u00ad"  # a word broken at a line's end (`reference_text(soft=True)`)
MAX_ENTRIES = 2000  # a reference list longer than this is a parse gone wrong; the rest is not read
MAX_ENTRY_CHARS = 2000  # an entry is read up to this long (the last can run on into what follows the list)

_NUMBERED = re.compile(r"(?:^|(?<=\s))\[(\d{1,4})\]\s")
_YEAR = re.compile(r"(?<=[.,]) ((?:19|20)\d\d)[a-z]?\.(?= |$)")  # ". 2019." / ", 2019a."
_ANY_YEAR = re.compile(r"\b((?:19|20)\d\d)[a-z]?\b")
# Accents as separate characters: spacing forms made combining; a combining mark moved onto its letter
_SPACING_ACCENTS = {"\u02c7": "\u030c", "\u00b4": "\u0301", "\u00a8": "\u0308", "\u02dc": "\u0303",
                    "\u02c6": "\u0302", "\u02da": "\u030a", "\u00b8": "\u0327", "\u02d8": "\u0306",
                    "\u02dd": "\u030b", "\u02db": "\u0328"}  # fmt: skip
# pypdf's torn form has a space before the mark ("Gaˇsi ́c"); a mark right after its letter is Unicode's own form
_MARK_BELOW = re.compile(r"(\w) ([\u0327\u0328])")  # cedilla, ogonek: after their letter
_MARK_ABOVE = re.compile(r" ([\u0300-\u0326\u0329-\u036f])(\w)")  # the others: before it
_SPACING_BELOW = re.compile(r"(\w)([\u00b8\u02db])")
_SPACING_ABOVE = re.compile(r"([\u02c7\u00b4\u00a8\u02dc\u02c6\u02da\u02d8\u02dd])(\w)")
_TOKEN = re.compile(r"\S+")
_SOFT_BREAK = re.compile(r"(?<!\w)(\w+)\u00ad\s*(\w+)")  # a word broken at a line's end (`SOFT`)
_HYPHENATED = re.compile(r"(?<![\w-])\w+(?:-\w+)+")
_AND = re.compile(r",\s*(?:and\s+)?|(?<!\s)\s+and\s+|(?<!\s)\s*&\s*")  # between two names
_PAGES = re.compile(r"(?:,\s*)?\bpages?\s*\d+\s*[–-]\s*\d+|\barxiv\s+preprint\b", re.IGNORECASE)
# A title's end: not "2.1", "arXiv:1810.00278" or "? dual"; "normalization.CoRR" and "modelling. arXiv" are ends
_TITLE_END = re.compile(r"[.?!](?=\s+[A-Z\d(\[\u201c\"]|\s*ar[Xx]iv\b|[A-Z]|\s*$)")
_NAME_PARTICLES = frozenset({"van", "von", "de", "der", "den", "del", "della", "da", "di", "du", "le", "la", "dos",
                             "das", "bin", "al", "el", "ten", "ter", "y"})  # fmt: skip


@dataclass(frozen=True)
class Reference:
    """One entry of a reference list, as its source wrote it."""

    raw: str
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    title: str | None = None
    venue: str | None = None
    arxiv_id: str | None = None
    doi: str | None = None


def split_references(text: str) -> list[str]:
    """The entries of a reference list's text, in order (numbered or author-year; see the module's text)."""
    text = " ".join(text.split())
    numbered = _numbered_starts(text)
    if numbered:
        starts = numbered
    else:
        tokens = list(_TOKEN.finditer(text))
        at = [t.start() for t in tokens]
        starts = sorted({_authors_start(tokens, bisect.bisect_left(at, m.start())) for m in _YEAR.finditer(text)})
        if not starts:
            return [text] if text else []
        starts[0] = 0  # what comes before the first entry's authors is its start (a heading's leftovers at most)
    bounds = [*starts, len(text)]
    entries = [text[a:b].strip() for a, b in itertools.pairwise(bounds)]
    return [e for e in entries if e][:MAX_ENTRIES]


def _numbered_starts(text: str) -> list[int]:
    """Where "[1]", "[2]", ... start, each number the one after the last (a "[3]" inside an entry is skipped)."""
    starts, expected = [], 1
    for match in _NUMBERED.finditer(text):
        if int(match.group(1)) == expected:
            starts.append(match.start())
            expected += 1
    return starts if len(starts) >= 2 else []


def _is_initial(word: str) -> bool:
    """An initial: "D.", "J.-P.", "D" (ACL drops the full stop), or "Jr."."""
    bare = word.rstrip(".,")
    parts = [part for part in bare.replace("-", ".").split(".") if part]
    return bare in ("Jr", "Sr") or all(len(part) <= 2 and part[:1].isupper() for part in parts)


def _is_name_word(word: str) -> bool:
    bare = word.strip(",").rstrip(".")
    if not bare:
        return False
    if bare in ("and", "&", "et", "al") or bare.lower() in _NAME_PARTICLES:
        return True
    first = bare.replace(SOFT, "")[:1]
    # a capital, or a letter pypdf split off a name (the "́c" of "Gaˇsi ́c")
    return first.isupper() or unicodedata.combining(first) != 0 or unicodedata.category(first) in ("Sk", "Lm")


def _authors_start(tokens: list[re.Match], before: int) -> int:
    """Where the run of author names that ends at token `before` (a year's) begins. The walk stops at the entry
    before's last word at the latest (its own year, "2018.", is one), so all walks together read the text once."""
    start = tokens[before].start() if before < len(tokens) else 0
    for i in range(before - 1, -1, -1):
        word = tokens[i].group()
        if i < before - 1 and word.endswith(".") and not _is_initial(word) and word.rstrip(".") != "al":
            break  # the word that ended the entry before ("arXiv:1810.00278.", "IEEE.", "263-272.")
        if not _is_name_word(word) and not _inside_a_name(tokens, i):
            break
        start = tokens[i].start()
    return start


def _inside_a_name(tokens: list[re.Match], i: int) -> bool:
    """A short word in lower case between two parts of a name ("Xiang qian Qi")."""
    word = tokens[i].group()
    return (word.isalpha() and word.islower() and len(word) <= 6 and 0 < i < len(tokens) - 1
            and _is_name_word(tokens[i - 1].group()) and not tokens[i - 1].group().endswith((".", ","))
            and _is_name_word(tokens[i + 1].group()))  # fmt: skip


def mend(text: str, hyphenated: frozenset[str] = frozenset()) -> str:
    """A soft-hyphenated word joined when it goes on in lower case ("Scal-able"), unless the list writes it with a
    hyphen elsewhere (`hyphenated`: "task-oriented"); else its hyphen kept. Spaces tidied."""

    def join(match: re.Match) -> str:
        a, b = match.group(1), match.group(2)
        return f"{a}-{b}" if f"{a}-{b}".lower() in hyphenated or not b[:1].islower() else a + b

    text = _SOFT_BREAK.sub(join, text)
    return _accents(" ".join(text.replace(SOFT, "-").split()))


def _accents(text: str) -> str:
    """Accents pypdf sets apart put back on their letters: "Gaˇsi ́c" -> "Gašić", "J ̈urgen" -> "Jürgen",
    "Franc ̧ois" -> "François" (a mark above comes before its letter, a mark below after it)."""
    if not any(unicodedata.combining(c) or c in _SPACING_ACCENTS for c in text):
        return text
    text = _MARK_ABOVE.sub(r"\2\1", _MARK_BELOW.sub(r"\1\2", text))  # " ́c": the space is pypdf's
    # "ˇs", "Radim ˇReh": a spacing accent, with no space of pypdf's
    text = _SPACING_BELOW.sub(lambda m: m.group(1) + _SPACING_ACCENTS[m.group(2)], text)
    text = _SPACING_ABOVE.sub(lambda m: m.group(2) + _SPACING_ACCENTS[m.group(1)], text)
    return unicodedata.normalize("NFC", text)


def hyphenated_words(text: str) -> frozenset[str]:
    """The words a text writes with a hyphen inside a line ("task-oriented"), lower case."""
    return frozenset(m.group().lower() for m in _HYPHENATED.finditer(text))


def parse_reference(entry: str, hyphenated: frozenset[str] = frozenset()) -> Reference:
    """An entry's authors, year, title, venue and ids (those it does not hold are None); `hyphenated` as `mend`."""
    entry = entry[:MAX_ENTRY_CHARS]  # the last entry can run on into what follows the list
    raw = mend(entry, hyphenated)
    found = cited_identifiers(entry.replace(SOFT, "-"))  # as the citation edges are read
    ids = {
        "arxiv_id": next((v for k, v in found if k == "arxiv"), None),
        "doi": next((v for k, v in found if k == "doi"), None),
    }
    numbered = _NUMBERED.match(entry)
    body = entry[numbered.end() :] if numbered else entry
    year_at = None if numbered else _YEAR.search(body)
    if year_at:  # author-year: authors. year. title. venue.
        authors_text, rest, year = body[: year_at.start()], body[year_at.end() :].strip(), year_at.group(1)
    else:  # numbered: authors. title. venue, year.
        split = next((m for m in _TITLE_END.finditer(body)
                      if not _is_initial(body[body.rfind(" ", 0, m.start()) + 1 : m.end()])), None)  # fmt: skip
        authors_text, rest = (body[: split.start()], body[split.end() :].strip()) if split else ("", body.strip())
        year = next(iter(reversed(_ANY_YEAR.findall(rest))), None)
    end = _TITLE_END.search(rest)
    title = rest[: end.start() + (0 if rest[end.start()] == "." else 1)] if end else rest
    venue = rest[end.end() :] if end else ""
    if _ANY_YEAR.fullmatch(title.strip(" .")):  # "Anonymous. 2019.": no title
        title = ""
    venue = ARXIV_REF.sub("", DOI_REF.sub("", venue))
    venue = mend(_PAGES.sub("", venue), hyphenated).strip(" .,;")
    if len(venue) > 300:  # what follows the list, run on into its last entry
        venue = venue[:300].rsplit(". ", 1)[0]
    venue = re.sub(r"^In(?=[A-Z])", "In ", venue)  # "InACL": pypdf lost the space
    return Reference(raw, authors=_authors(mend(authors_text, hyphenated)), year=int(year) if year else None,
                     title=mend(title, hyphenated).strip() or None, venue=venue or None, **ids)  # fmt: skip


def _authors(text: str) -> list[str]:
    """The names of "A, B, and C", "A and B" or "A, B, et al."."""
    text = text.strip().rstrip(".")
    if text.endswith("et al"):
        text = text[: -len("et al")].rstrip(" ,")
    parts = _AND.split(text)
    return [p.strip() for p in parts if p.strip()]


def references(text: str) -> list[Reference]:
    """Every entry of a reference list, parsed."""
    hyphenated = hyphenated_words(text)
    return [parse_reference(entry, hyphenated) for entry in split_references(text)]
