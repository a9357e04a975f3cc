"""OpenAlex works, authors and institutions (single records, plain lists and API list envelopes)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timezone

from ingest.parsers.common import attempt, text_or_none
from ingest.report import Failure
from retrieval.scholarly.records import (
    AffiliationRecord,
    AuthorRecord,
    InstitutionRecord,
    PaperRecord,
    ReferenceRecord,
    ResearcherRecord,
    is_arxiv_id,
    split_arxiv_version,
)

SOURCE = "openalex"
_ARXIV_DOI = re.compile(r"10\.48550/arxiv\.(.+)$", re.I)


def short_id(url: str | None) -> str | None:
    """'https://openalex.org/W123' -> 'W123'; ROR and ORCID URLs keep only their last segment."""
    if not url:
        return None
    return str(url).rstrip("/").rsplit("/", 1)[-1] or None


def bare_doi(doi: str | None) -> str | None:
    if not doi:
        return None
    return re.sub(r"^https?://(dx\.)?doi\.org/", "", doi.strip(), flags=re.I).lower() or None


def results(payload) -> list:
    """The records of a payload: an API envelope's results, a plain list, or one record."""
    if isinstance(payload, dict) and isinstance(payload.get("results"), list):
        return payload["results"]
    if isinstance(payload, list):
        return payload
    return [payload]


def abstract_from_index(index: dict | None) -> str:
    if not index:
        return ""
    positions = [(pos, word) for word, places in index.items() for pos in places]
    return " ".join(word for _pos, word in sorted(positions))


def work_arxiv_id(work: dict) -> str | None:
    doi = bare_doi(work.get("doi") or (work.get("ids") or {}).get("doi"))
    if doi and (match := _ARXIV_DOI.search(doi)):
        return split_arxiv_version(match.group(1))[0]
    locations = [work.get("primary_location") or {}, *(work.get("locations") or [])]
    for location in locations:
        url = (location or {}).get("landing_page_url") or ""
        if "arxiv.org/abs/" in url:
            candidate = split_arxiv_version(url)[0]
            if is_arxiv_id(candidate):
                return candidate
    return None


def parse_works(payload, source: str = SOURCE) -> Iterator[PaperRecord | Failure]:
    for number, work in enumerate(results(payload)):
        key = short_id(work.get("id")) if isinstance(work, dict) else None
        yield attempt(source, key or f"result {number}", lambda work=work: work_record(work, source))


def _published(work: dict) -> datetime | None:
    if work.get("publication_date"):
        return datetime.fromisoformat(work["publication_date"]).replace(tzinfo=timezone.utc)
    return None


def work_record(work: dict, source: str = SOURCE) -> PaperRecord:
    openalex_id = short_id(work["id"])
    arxiv_id = work_arxiv_id(work)
    location = work.get("primary_location") or {}
    authors = []
    for authorship in work.get("authorships") or []:
        author = authorship.get("author") or {}
        institutions = authorship.get("institutions") or []
        raws = authorship.get("raw_affiliation_strings") or []
        affiliations = [
            AffiliationRecord(
                raw=raws[0] if raws else None,
                institution_openalex_id=short_id(inst.get("id")),
                ror_id=short_id(inst.get("ror")),
                name=inst.get("display_name"),
                country_code=inst.get("country_code"),
            )
            for inst in institutions
        ] or ([AffiliationRecord(raw=raws[0])] if raws else [])
        authors.append(
            AuthorRecord(
                name=author.get("display_name") or authorship.get("raw_author_name") or "",
                openalex_id=short_id(author.get("id")),
                orcid=short_id(author.get("orcid")),
                affiliations=affiliations,
            )
        )
    return PaperRecord(
        id=arxiv_id or f"openalex:{openalex_id}",
        arxiv_id=arxiv_id,
        openalex_id=openalex_id,
        doi=bare_doi(work.get("doi")),
        title=work.get("display_name") or work.get("title"),
        abstract=abstract_from_index(work.get("abstract_inverted_index")),
        authors=authors,
        published=_published(work),
        year=work.get("publication_year"),
        landing_url=location.get("landing_page_url"),
        pdf_url=location.get("pdf_url"),
        venue=((location.get("source") or {}).get("display_name")),
        cited_by_count=work.get("cited_by_count"),
        references=[ReferenceRecord(openalex_id=short_id(ref)) for ref in work.get("referenced_works") or []],
        source=source,
    )


def parse_authors(payload, source: str = SOURCE) -> Iterator[ResearcherRecord | Failure]:
    for number, author in enumerate(results(payload)):
        key = short_id(author.get("id")) if isinstance(author, dict) else None

        def build(author=author) -> ResearcherRecord:
            last = author.get("last_known_institutions") or []
            return ResearcherRecord(
                name=author["display_name"],
                openalex_id=short_id(author["id"]),
                orcid=short_id(author.get("orcid")),
                aliases=[a for a in author.get("display_name_alternatives") or [] if a != author["display_name"]],
                institution_rors=[short_id(i.get("ror")) for i in last if i.get("ror")],
                source=source,
            )

        yield attempt(source, key or f"result {number}", build)


def parse_institutions(payload, source: str = SOURCE) -> Iterator[InstitutionRecord | Failure]:
    for number, inst in enumerate(results(payload)):
        key = short_id(inst.get("id")) if isinstance(inst, dict) else None

        def build(inst=inst) -> InstitutionRecord:
            geo = inst.get("geo") or {}
            return InstitutionRecord(
                name=inst["display_name"],
                ror_id=short_id(inst.get("ror")),
                openalex_id=short_id(inst["id"]),
                aliases=inst.get("display_name_alternatives") or [],
                acronyms=inst.get("display_name_acronyms") or [],
                country_code=geo.get("country_code") or inst.get("country_code"),
                country_name=geo.get("country"),
                city=geo.get("city"),
                types=[inst["type"]] if inst.get("type") else [],
                website=text_or_none(inst.get("homepage_url")),
                source=source,
            )

        yield attempt(source, key or f"result {number}", build)
