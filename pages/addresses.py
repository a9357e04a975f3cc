"""Addresses of pages: slugs, canonical paths, and parsing what a visitor typed."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

from retrieval.library.uploads import upload_number
from retrieval.scholarly.models import Paper

_ID_AT_START = re.compile(
    r"^(?P<id>\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7}|openalex:W\d+)(?P<version>v\d+)?(?P<rest>.*)$"
)


def slugify(text: str, max_words: int = 8) -> str:
    """'Hindsight Logging for Model Training' -> 'hindsight-logging-for-model-training'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return "-".join(words[:max_words])


def paper_path(paper: Paper) -> str:
    if (number := upload_number(paper.id)) is not None:  # a user's own upload: its private page
        return f"/me/library/{number}"
    slug = slugify(paper.title)
    return "/papers/" + quote(paper.id, safe="/:") + (f"-{slug}" if slug else "")


def external(base: str, identifier: str) -> str:
    """A scholarly site's address for an identifier from the data, which may hold anything: percent-encoded
    so it stays one URL (no spaces, brackets or parentheses to break out of a markdown link)."""
    return base + quote(identifier, safe="/:.;-_~")


def split_paper_address(address: str) -> tuple[str, str | None, str] | None:
    """'2006.07357v2-hindsight' -> ('2006.07357', 'v2', '-hindsight'); None when no id is recognised."""
    match = _ID_AT_START.match(address)
    if not match:
        return None
    return match.group("id"), match.group("version"), match.group("rest")


def researcher_path(researcher_id: int, name: str) -> str:
    slug = slugify(name)
    return f"/researchers/{researcher_id}" + (f"-{slug}" if slug else "")


def institution_path(institution_id: int, name: str) -> str:
    slug = slugify(name)
    return f"/institutions/{institution_id}" + (f"-{slug}" if slug else "")
