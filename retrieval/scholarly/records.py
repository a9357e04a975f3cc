"""Normalised, validated records: what every parser produces and the catalog accepts."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

from retrieval.scholarly.arxiv_ids import ARXIV_ID, NEW_ID, OLD_ID

MAX_ABSTRACT_CHARS = 50_000
MAX_TITLE_CHARS = 1_000
MAX_AUTHORS = 2_000

_NEW_ID = re.compile(rf"^{NEW_ID}$")
_OLD_ID = re.compile(rf"^{OLD_ID}$")
_VERSION = re.compile(r"v(\d+)$")


def split_arxiv_version(raw: str) -> tuple[str, int | None]:
    """'2006.07357v2' -> ('2006.07357', 2); also accepts abs URLs and 'arXiv:' prefixes."""
    text = raw.strip()
    text = re.sub(r"^(https?://(export\.)?arxiv\.org/(abs|pdf)/)", "", text, flags=re.I)
    text = re.sub(r"^arxiv:", "", text, flags=re.I).removesuffix(".pdf")
    version = None
    match = _VERSION.search(text)
    if match:
        version = int(match.group(1))
        text = text[: match.start()]
    return text, version


def is_arxiv_id(text: str) -> bool:
    return bool(_NEW_ID.match(text) or _OLD_ID.match(text))


_MENTION = re.compile(
    r"(?:https?://(?:export\.)?arxiv\.org/(?:abs|pdf)/|(?:https?://(?:dx\.)?doi\.org/)?10\.48550/arxiv\.|arxiv:)?"
    rf"({ARXIV_ID})(?:v\d+)?(?![\d.])",
    re.I,
)


def arxiv_ids_in(text: str, limit: int = 3) -> list[str]:
    """The arXiv ids a message mentions (bare, versioned, as URLs or DOIs), first mention first, at most `limit`."""
    found = []
    for match in _MENTION.finditer((text or "")[:5000]):
        bare = match.group(1)
        if is_arxiv_id(bare) and bare not in found:
            found.append(bare)
    return found[:limit]


def arxiv_id_of(text: str) -> str | None:
    """The bare arXiv id a person may paste: an id (any version, 'arXiv:' or not), an abs or PDF URL, or the arXiv
    DOI (10.48550/arXiv.<id>, bare or as a doi.org URL); None for anything else."""
    candidate = (text or "").strip()[:300]
    candidate = re.sub(r"^(https?://(dx\.)?doi\.org/)?(doi:)?10\.48550/arxiv\.", "", candidate, flags=re.I)
    bare, _version = split_arxiv_version(candidate)
    return bare if is_arxiv_id(bare) else None


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


class _Record(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True, extra="forbid")

    def content_hash(self) -> str:
        payload = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()


class AffiliationRecord(_Record):
    raw: str | None = None
    institution_openalex_id: str | None = None
    ror_id: str | None = None
    name: str | None = None
    country_code: str | None = None


class AuthorRecord(_Record):
    name: str = Field(min_length=1, max_length=500)
    openalex_id: str | None = None
    orcid: str | None = None
    s2_id: str | None = None
    affiliations: list[AffiliationRecord] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return _clean(value)


class ReferenceRecord(_Record):
    """A cited work; at least one identifier."""

    openalex_id: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    title: str | None = None


class PaperRecord(_Record):
    id: str = Field(min_length=1, max_length=200)
    arxiv_id: str | None = None
    openalex_id: str | None = None
    doi: str | None = None
    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    abstract: str = Field("", max_length=MAX_ABSTRACT_CHARS)
    authors: list[AuthorRecord] = Field(max_length=MAX_AUTHORS)
    categories: list[str] = Field(default_factory=list)
    primary_category: str | None = None
    published: datetime | None = None
    updated: datetime | None = None
    year: int | None = Field(None, ge=1000, le=3000, description="publication year; from published when that is known")
    version: int | None = None
    landing_url: str | None = None
    pdf_url: str | None = None
    journal_ref: str | None = None
    comments: str | None = None
    license: str | None = None
    venue: str | None = None
    cited_by_count: int | None = None
    references: list[ReferenceRecord] = Field(default_factory=list)
    source: str

    @field_validator("title", "abstract")
    @classmethod
    def _collapse(cls, value: str) -> str:
        return _clean(value)

    @field_validator("categories")
    @classmethod
    def _primary_first(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(c.strip() for c in value if c and c.strip()))

    def model_post_init(self, _context) -> None:
        if self.year is None and self.published:
            self.year = self.published.year
        if self.primary_category is None and self.categories:
            self.primary_category = self.categories[0]
        if self.primary_category and self.primary_category in self.categories:
            self.categories.remove(self.primary_category)
        if self.primary_category:
            self.categories.insert(0, self.primary_category)


class InstitutionRecord(_Record):
    name: str = Field(min_length=1, max_length=500)
    ror_id: str | None = None
    openalex_id: str | None = None
    aliases: list[str] = Field(default_factory=list)
    acronyms: list[str] = Field(default_factory=list)
    country_code: str | None = None
    country_name: str | None = None
    city: str | None = None
    types: list[str] = Field(default_factory=list)
    established: int | None = None
    website: str | None = None
    parent_rors: list[str] = Field(default_factory=list)
    child_rors: list[str] = Field(default_factory=list)
    source: str


class ResearcherRecord(_Record):
    name: str = Field(min_length=1, max_length=500)
    openalex_id: str | None = None
    orcid: str | None = None
    s2_id: str | None = None
    aliases: list[str] = Field(default_factory=list)
    institution_rors: list[str] = Field(default_factory=list)
    source: str


_WHOLE = re.compile(r"[0-9]{1,18}")


def whole_number(value: str | None) -> int | None:
    """A non-negative integer written in ASCII digits (at most 18, so it fits a database integer); None for
    anything else. `str.isdigit` is not enough: it accepts "²" and other digits `int` refuses."""
    text = (value or "").strip()
    return int(text) if _WHOLE.fullmatch(text) else None
