"""Names the archive spells out: where a text defines a name by spelling it out ("Group Relative Policy Optimization
(GRPO)": `spelled_out`), and a query about a name the encoder may not know ("What is GRPO?") read as the texts spell
it out, so `search` and `search_passages` can ask again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from retrieval.library.visible import visible_papers
from retrieval.scholarly.catalog import Catalog
from retrieval.search.relevance import bare, is_word_char, says
from retrieval.vectors.embeddings import Embedded
from retrieval.vectors.index import Filters, Index
from retrieval.vectors.store import SPARSE

READING_DEPTH = 30  # the papers BM25 ranks first for a query whose name the encoder may not know, read for how
# they spell the name out (`spelled_out`)
_SMALL = frozenset("of and for the in on to a an with by".split())  # words a spelling may leave out ("of", "and")


def read_spelled_names(query: str, names: list[str], texts: list[str]) -> dict[str, str]:
    """The names a query is about (`about_names`, lower case) that the texts spell out: the name as the query
    writes it -> the words the texts spell it out as (`spelled_out`)."""
    written = {}
    for word in query.split():
        word = bare(word)  # ("GRPO's": "GRPO")
        written.setdefault(word.lower(), word)
    reading = {}
    for name in names:
        own = written.get(name) or written.get(f"{name}s", "")[:-1]  # ("LLMs": "LLM", whose plural texts hold too)
        words = spelled_out(own, texts) if own else None
        if words:
            reading[own] = words
    return reading


def lexical_texts(catalog: Catalog, index: Index, embedded: Embedded, filters: Filters) -> list[str]:
    """The titles and abstracts BM25 ranks first for a query (`READING_DEPTH`): those that hold its words, names the
    encoder may not know included."""
    lexical = [s.paper_id for s in index.papers(embedded, filters, limit=READING_DEPTH, sides=(SPARSE,))]
    holders = visible_papers(catalog, lexical, filters.viewer)
    return [f"{holders[i].title} {holders[i].abstract}" for i in lexical if i in holders]


def spelled_query(text: str, reading: dict[str, str]) -> str:
    """The query asked again: its words, then each name's spelling."""
    return f"{text} ({'; '.join(reading.values())})"


def reading_note(reading: dict[str, str]) -> str:
    """The note that tells the reader how the names were read."""
    read = ", ".join(f'"{name}" as "{words}"' for name, words in reading.items())
    return f"Read {read}, as papers in this archive spell {'it' if len(reading) == 1 else 'them'} out."


def names_one_spelled(text: str, spelled: dict[str, str]) -> bool:
    """Whether a text names one of the names spelled out, or says one of their spellings."""
    lower = text.lower()
    return any(says(lower, name.lower()) or words.lower() in lower for name, words in spelled.items())


def spelled_out(name: str, texts: Iterable[str]) -> str | None:
    """What the texts spell a name out as, where they define it: the words right before "(NAME)" whose initials are
    the name's capitals ("Stanford Question Answering Dataset (SQuAD)", "Low-Rank Adaptation (LoRA)", "Group
    Relative Policy Optimization (GRPO)", "normalized Discounted Cumulative Gain (nDCG)"; a hyphen's parts may count
    as words, and "of", "and", ... may be left out), or the words in brackets right after it ("FED (fine-grained
    evaluation of dialog)"), as most of them spell it (case aside; ties: the first met). None when no text spells
    it out. A plain scan for the name, no pattern built from it."""
    capitals = [c.lower() for c in name if c.isupper()]
    if name[:1].islower():  # a prefix's word is spelled out too ("multimodal Retrieval-Augmented Generation (mRAG)")
        capitals.insert(0, name[0])
    if len(capitals) < 2:
        return None
    spellings: list[str] = []
    for text in texts:
        for marker in (f"({name})", f"({name}s)"):
            start = text.find(marker)
            while start != -1:
                words = text[max(0, start - 200) : start].split()[-(2 * len(capitals) + 2) :]
                spellings += filter(None, [_initialled(words, capitals)])
                start = text.find(marker, start + 1)
        spellings += _spelled_after(text, name, capitals)  # the other way round: "FED (fine-grained evaluation ...)"
    counts = Counter(s.lower() for s in spellings)
    first = {}
    for s in spellings:
        first.setdefault(s.lower(), s)
    return first[max(counts, key=counts.__getitem__)] if counts else None  # (ties: the first met)


def _spelled_after(text: str, name: str, capitals: list[str]) -> list[str]:
    """The spellings a text gives in brackets right after the name, all the brackets spelling it ("FED (fine-grained
    evaluation of dialog)")."""
    found = []
    start = text.find(f"{name} (")
    while start != -1:
        opened = start + len(name) + 2
        closed = text.find(")", opened, opened + 100)
        inside = text[opened:closed] if closed != -1 and not (start and is_word_char(text[start - 1])) else "("
        words = [w.strip(",;:") for w in inside.split()]
        if words and "(" not in inside and all(words) and _spells(words, capitals):
            found.append(" ".join(words))
        start = text.find(f"{name} (", start + 1)
    return found


def _initialled(words: list[str], capitals: list[str]) -> str | None:
    """The shortest run of words ending the list whose initials spell `capitals` (see `spelled_out`)."""
    for start in range(len(words) - 1, -1, -1):
        run = [w.strip("\"'“”‘’,;:") for w in words[start:]]
        if not run[0][:1].isalpha() or any(not w for w in run):
            return None
        if _spells(run, capitals):
            return " ".join(run)
    return None


def _spells(run: list[str], capitals: list[str]) -> bool:
    """Whether a run of words spells the capitals by its initials: each word, or each part of a hyphened word,
    gives its first letter; a small word ("of", "and") may give none."""
    options: list[list[list[str]]] = []
    for word in run:
        parts = [p for p in word.split("-") if p]
        forms = [[word[0].lower()], [p[0].lower() for p in parts]]
        if word.lower() in _SMALL:
            forms.append([])
        options.append(forms)
    reach = {0}  # how many of the capitals the words so far can spell
    for forms in options:
        reach = {n + len(f) for n in reach for f in forms if capitals[n : n + len(f)] == f}
        if not reach:
            return False
    return len(capitals) in reach
