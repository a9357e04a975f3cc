"""A reading list brought from elsewhere: a BibTeX, RIS or CSL-JSON export (what Zotero, Mendeley and JabRef write)
or a plain list of arXiv ids and DOIs, read into entries (an arXiv id, a DOI, a title, or why the entry cannot be
read). `bibtexparser` and `rispy` read their formats; CSL-JSON is JSON; nothing here is a hand-made parser of a
format. What becomes of each entry (joined, requested from arXiv, not found) is decided in
`jobs.requests.import_entries`.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

from common.bounded import Overrun, run_bounded
from retrieval.scholarly.records import arxiv_id_of, arxiv_ids_in

MAX_ENTRIES = 2_000
MAX_FIELD_CHARS = 2_000  # of a field scanned for an id: a url, journal or note longer than this is not a reference
MAX_LABEL_CHARS = 200
READ_SECONDS, READ_MEMORY_MB = 15.0, 512  # a real 2 MB BibTeX export (7,000 entries) is read in about 0.6 s
_DOI = re.compile(r"\b(10\.\d{4,9}/\S+)", re.I)


@dataclass(frozen=True)
class Entry:
    label: str  # how the user will recognise it: the citation key, the title, or the line
    arxiv_id: str | None = None
    doi: str | None = None
    title: str | None = None
    problem: str | None = None  # the entry could not be read: why


def _doi(text: str | None) -> str | None:
    found = _DOI.search(text or "")
    return found[1].rstrip(".,;}").lower() if found else None


def _entry(label: str, title: str | None, doi_text: str | None, *arxiv_texts: str | None) -> Entry:
    doi = _doi((doi_text or "")[:MAX_FIELD_CHARS])
    arxiv_id = arxiv_id_of(doi) if doi else None
    for text in arxiv_texts:
        if arxiv_id is None and text:
            text = text[:MAX_FIELD_CHARS]
            arxiv_id = arxiv_id_of(text) or next(iter(arxiv_ids_in(text, 1)), None)
    title = re.sub(r"\s+", " ", re.sub(r"[{}]", "", (title or "")[:MAX_FIELD_CHARS])).strip() or None
    label = label[:MAX_LABEL_CHARS]
    if not (arxiv_id or doi or title):
        return Entry(label, problem="no arXiv id, DOI or title")
    return Entry(label, arxiv_id, None if arxiv_id else doi, title)


def read_zotero_item(data: dict) -> Entry:
    """A Zotero item's `data` (the web and local API's JSON): its arXiv id from its DOI (10.48550/arXiv...), its
    archive id ("arXiv:2005.02877", on preprints), its URL or its Extra field; its DOI (its own field, or a "DOI:"
    line of Extra, where Zotero keeps it for item types without one); its title."""
    extra = str(data.get("extra") or "")
    doi = data.get("DOI") or next((line.split(":", 1)[1] for line in extra.splitlines()
                                   if line.lower().startswith("doi:")), None)  # fmt: skip
    title = str(data.get("title") or "") or None
    return _entry(title or str(data.get("key") or "an item"), title, str(doi) if doi else None,
                  str(data.get("archiveID") or ""), str(data.get("url") or ""), extra)


def read_bibtex(text: str) -> list[Entry]:
    import bibtexparser

    library = bibtexparser.parse_string(text)
    entries = []
    for e in library.entries:
        f = {k.lower(): str(v.value) for k, v in e.fields_dict.items()}
        arxiv_hint = f.get("eprint") if f.get("archiveprefix", "arxiv").lower() == "arxiv" else None
        entries.append(_entry(e.key, f.get("title"), f.get("doi"), arxiv_hint, f.get("url"), f.get("journal"),
                              f.get("note")))  # fmt: skip
    for block in library.failed_blocks:
        first = (block.raw or "").strip().splitlines()[0][:80] if (block.raw or "").strip() else "?"
        entries.append(Entry(first, problem=f"malformed BibTeX (line {block.start_line + 1}): {type(block).__name__}"))
    return entries


def read_ris(text: str) -> list[Entry]:
    import rispy
    from rispy.parser import RisParser

    lost: list[list[tuple[str, str]]] = []  # tagged lines rispy skipped, one list per entry that had no TY line

    class Reporting(RisParser):
        """rispy's parser, noting the entries it skips for want of a TY line (it would drop them silently)."""

        def _iter_till_start(self, lines) -> dict:
            skipped: list[tuple[str, str]] = []
            try:
                while True:
                    line = next(lines)
                    if line.startswith(self.START_TAG):
                        return {self.mapping[self.START_TAG]: self.parse_line(line)[1]}
                    tag, content = self.parse_line(line)
                    if tag == self.END_TAG and skipped:
                        lost.append(skipped)
                        skipped = []
                    elif tag:
                        skipped.append((tag, content))
            finally:
                if skipped:
                    lost.append(skipped)

    entries = []
    for i, e in enumerate(rispy.loads(text, implementation=Reporting), start=1):
        title = e.get("title") or e.get("primary_title")
        urls = " ".join(e.get("urls") or [])
        notes = " ".join(e.get("notes") or [])
        entries.append(_entry(title or f"entry {i}", title, e.get("doi"), urls, notes, e.get("number")))
    for tags in lost:
        label = next((content for tag, content in tags if tag in ("TI", "T1")), tags[0][1])[:120]
        entries.append(Entry(label or "?", problem="malformed RIS: an entry without its TY (type) line"))
    return entries


def read_csl_json(text: str) -> list[Entry]:
    items = json.loads(text)
    items = items if isinstance(items, list) else [items]
    entries = []
    for i, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            entries.append(Entry(f"item {i}", problem="malformed CSL-JSON: an item is not an object"))
            continue
        title = item.get("title") if isinstance(item.get("title"), str) else None
        texts = [str(item.get(k)) for k in ("URL", "number", "archive_location", "note") if item.get(k)]
        entries.append(_entry(str(item.get("id") or title or f"item {i}"), title, str(item.get("DOI") or ""), *texts))
    return entries


def read_identifiers(text: str) -> list[Entry]:
    entries = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        arxiv_id, doi = arxiv_id_of(line), _doi(line)
        if arxiv_id or doi:
            entries.append(Entry(line[:120], arxiv_id, None if arxiv_id else doi))
        else:
            entries.append(Entry(line[:120], problem="not an arXiv id, an arXiv URL or a DOI"))
    return entries


def read_reading_list(text: str) -> tuple[str, list[Entry]]:
    """The format (by content, not by the file's name) and its entries; ValueError when nothing can be read."""
    head = text.lstrip()[:200]
    if head.startswith("@"):
        name, reader = "BibTeX", read_bibtex
    elif re.match(r"TY  - ", head):
        name, reader = "RIS", read_ris
    elif head[:1] in "[{":
        name, reader = "CSL-JSON", read_csl_json
    else:
        name, reader = "identifiers", read_identifiers
    try:
        entries = reader(text)
    except RecursionError:  # JSON nested deeper than Python's stack ("[[[[...")
        raise ValueError(f"This {name} file cannot be read: it is nested too deeply.") from None
    except (ValueError, KeyError, TypeError, AttributeError, IOError) as exc:
        raise ValueError(f"This {name} file cannot be read: {str(exc)[:200]}") from exc
    if len(entries) > MAX_ENTRIES:
        raise ValueError(f"A reading list may hold at most {MAX_ENTRIES} entries; this one has {len(entries)}.")
    return name, entries


class ReadingListBusy(RuntimeError):
    """Other files are being read: the list was not read; try again."""


def _read_as_json(text: str) -> dict:  # what the child process runs (`read_reading_list_bounded`)
    name, entries = read_reading_list(text)
    return {"format": name, "entries": [asdict(e) for e in entries]}


def read_reading_list_bounded(text: str, seconds: float | None = None) -> tuple[str, list[Entry]]:
    """`read_reading_list` in a child process with a time and a memory limit (`common.bounded`), so no list, however
    made, holds the caller: ValueError when it cannot be read in time, ReadingListBusy when no reader is free."""
    try:
        answer = run_bounded("retrieval.library.reading_lists:_read_as_json", text, seconds=seconds or READ_SECONDS,
                             memory_mb=READ_MEMORY_MB)  # fmt: skip
    except Overrun as exc:
        if exc.busy:
            raise ReadingListBusy(str(exc)) from None
        raise ValueError(f"This file cannot be read: {exc}.") from None
    return answer["format"], [Entry(**e) for e in answer["entries"]]
