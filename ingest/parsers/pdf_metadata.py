"""The metadata file that travels with a folder of PDFs (`metadata.jsonl`): one paper a line, named by arXiv id.

Fields read: id (arXiv id), title, authors (names in order), abstract, categories, published (a date), doi,
venue, licence. The others (where each field came from, the file's source and checksum) are provenance for people.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime, timezone

from ingest.parsers.common import parse_json_lines, text_or_none
from ingest.report import Failure
from retrieval.scholarly.records import AuthorRecord, PaperRecord, split_arxiv_version


def pdf_metadata_record(raw: dict, source: str) -> PaperRecord:
    arxiv_id, _ = split_arxiv_version(str(raw["id"]).strip())
    authors = raw.get("authors")
    if not isinstance(authors, list) or not all(isinstance(a, str) for a in authors):
        raise TypeError("authors must be a list of names")
    categories = raw.get("categories") or []
    if not isinstance(categories, list):
        raise TypeError("categories must be a list")
    published = text_or_none(raw.get("published"))
    return PaperRecord(
        id=arxiv_id,
        arxiv_id=arxiv_id,
        doi=text_or_none(raw.get("doi")),
        title=raw["title"],
        abstract=raw.get("abstract") or "",
        authors=[AuthorRecord(name=name) for name in authors],
        categories=categories,
        published=datetime.fromisoformat(published).replace(tzinfo=timezone.utc) if published else None,
        venue=text_or_none(raw.get("venue")),
        license=text_or_none(raw.get("licence")),
        source=source,
    )


def parse_pdf_metadata_lines(lines: Iterable[str], source: str = "pdf_metadata") -> Iterator[PaperRecord | Failure]:
    return parse_json_lines(
        lines, source, lambda raw: raw.get("id") and str(raw["id"]), lambda raw: pdf_metadata_record(raw, source)
    )
