"""arXiv formats: API Atom feeds, Kaggle/OAI snapshot JSON lines, and the reference site's record."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

from ingest.parsers.common import attempt, parse_json_lines, text_or_none
from ingest.report import Failure
from retrieval.records import AuthorRecord, PaperRecord, split_arxiv_version, whole_number

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"


def abs_url(arxiv_id: str) -> str:
    return f"https://arxiv.org/abs/{arxiv_id}"


def pdf_url(arxiv_id: str) -> str:
    return f"https://arxiv.org/pdf/{arxiv_id}"


def latex_to_text(text: str) -> str:
    """Accents written in LaTeX (C. Bal\\'azs) to Unicode; other text unchanged."""
    if "\\" not in text and "{" not in text:
        return text
    from pylatexenc.latex2text import LatexNodes2Text

    try:
        return LatexNodes2Text(math_mode="verbatim").latex_to_text(text)
    except Exception:  # pylatexenc raises its own errors on unbalanced input; keep the raw text
        return text


def _iso(value: str | None) -> datetime | None:
    if not value:
        return None
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


# --- API Atom ---------------------------------------------------------------------------------
def parse_atom(xml: bytes, source: str = "arxiv_api") -> Iterator[PaperRecord | Failure]:
    """Entries of one arXiv API response page."""
    from defusedxml import ElementTree

    root = ElementTree.fromstring(xml)
    for number, entry in enumerate(root.iter(f"{ATOM}entry")):
        raw_id = entry.findtext(f"{ATOM}id") or ""
        key = raw_id or f"entry {number}"
        yield attempt(source, key, lambda entry=entry, raw_id=raw_id: _atom_entry(entry, raw_id, source))


def atom_total(xml: bytes) -> int | None:
    """opensearch:totalResults of a page, for paging."""
    from defusedxml import ElementTree

    value = ElementTree.fromstring(xml).findtext(f"{OPENSEARCH}totalResults")
    return whole_number(value)


def atom_error(xml: bytes) -> str | None:
    """The message of an arXiv API error feed (one entry whose id is under arxiv.org/api/errors), if it is one."""
    from defusedxml import ElementTree

    for entry in ElementTree.fromstring(xml).iter(f"{ATOM}entry"):
        if "/api/errors" in (entry.findtext(f"{ATOM}id") or ""):
            return re.sub(r"\s+", " ", entry.findtext(f"{ATOM}summary") or "error").strip()
    return None


def _atom_entry(entry, raw_id: str, source: str) -> PaperRecord:
    arxiv_id, version = split_arxiv_version(raw_id)
    if not arxiv_id:
        raise ValueError("entry has no arXiv id")
    authors = [
        AuthorRecord(
            name=a.findtext(f"{ATOM}name") or "",
            affiliations=[{"raw": aff.text.strip()} for aff in a.findall(f"{ARXIV}affiliation") if aff.text],
        )
        for a in entry.findall(f"{ATOM}author")
    ]
    primary = entry.find(f"{ARXIV}primary_category")
    return PaperRecord(
        id=arxiv_id,
        arxiv_id=arxiv_id,
        doi=text_or_none(entry.findtext(f"{ARXIV}doi")),
        title=entry.findtext(f"{ATOM}title") or "",
        abstract=entry.findtext(f"{ATOM}summary") or "",
        authors=authors,
        categories=[c.get("term", "") for c in entry.findall(f"{ATOM}category")],
        primary_category=primary.get("term") if primary is not None else None,
        published=_iso(entry.findtext(f"{ATOM}published")),
        updated=_iso(entry.findtext(f"{ATOM}updated")),
        version=version,
        landing_url=abs_url(arxiv_id),
        pdf_url=pdf_url(arxiv_id),
        journal_ref=text_or_none(entry.findtext(f"{ARXIV}journal_ref")),
        comments=text_or_none(entry.findtext(f"{ARXIV}comment")),
        source=source,
    )


# --- Kaggle / OAI snapshot JSON lines -----------------------------------------------------------
def parse_snapshot_lines(lines: Iterator[str], source: str = "arxiv_snapshot") -> Iterator[PaperRecord | Failure]:
    """One Kaggle-format arXiv record per line."""
    return parse_json_lines(
        lines, source, lambda raw: raw.get("id") and str(raw["id"]), lambda raw: snapshot_record(raw, source)
    )


def _names_from_parsed(parsed: list) -> list[str]:
    names = []
    for last, first, *rest in parsed:
        suffix = rest[0] if rest else ""
        names.append(" ".join(part for part in (first, last, suffix) if part))
    return names


def _names_from_string(authors: str) -> list[str]:
    text = re.sub(r"\s+", " ", authors)
    text = re.sub(r"\([^)]*\)", "", text)  # affiliations in parentheses
    parts = re.split(r",\s*|\s+and\s+", text)
    return [p.strip() for p in parts if p.strip()]


def _version_dates(versions: list) -> tuple[datetime | None, datetime | None, int | None]:
    if not versions:
        return None, None, None
    dates = [parsedate_to_datetime(v["created"]) for v in versions]
    return dates[0], dates[-1], len(versions)


def snapshot_record(raw: dict, source: str) -> PaperRecord:
    arxiv_id = str(raw["id"]).strip()
    if raw.get("authors_parsed"):
        names = _names_from_parsed(raw["authors_parsed"])
    elif isinstance(raw.get("authors"), str):
        names = _names_from_string(latex_to_text(raw["authors"]))
    else:
        raise ValueError("record has no authors")
    published, updated, version = _version_dates(raw.get("versions") or [])
    categories = raw.get("categories")
    if not isinstance(categories, str):
        raise TypeError("categories must be a space-separated string")
    return PaperRecord(
        id=arxiv_id,
        arxiv_id=arxiv_id,
        doi=text_or_none(raw.get("doi")),
        title=latex_to_text(raw["title"]) if isinstance(raw.get("title"), str) else raw.get("title"),
        abstract=raw.get("abstract") or "",
        authors=[AuthorRecord(name=latex_to_text(n)) for n in names],
        categories=categories.split(),
        published=published,
        updated=updated,
        version=version,
        landing_url=abs_url(arxiv_id),
        pdf_url=pdf_url(arxiv_id),
        journal_ref=text_or_none(raw.get("journal-ref")),
        comments=text_or_none(raw.get("comments")),
        license=text_or_none(raw.get("license")),
        source=source,
    )


# --- the reference site's record, with arXiv's own dates ----------------------------------------
def parse_site_record(
    site: dict, arxiv_record: dict | None = None, source: str = "arxiv_site"
) -> PaperRecord | Failure:
    """A record as the reference site hands it to its page; arXiv's version dates win over its 'published'."""
    key = str(site.get("arxiv_id", "?")) if isinstance(site, dict) else "?"

    def build() -> PaperRecord:
        arxiv_id = site["arxiv_id"]
        published, updated, version = _version_dates((arxiv_record or {}).get("versions") or [])
        return PaperRecord(
            id=arxiv_id,
            arxiv_id=arxiv_id,
            title=site["title"],
            abstract=site.get("abstract") or "",
            authors=[AuthorRecord(name=n) for n in site["authors"]],
            categories=site.get("categories") or [],
            primary_category=site.get("primary_category"),
            published=published or _iso(site.get("published")),
            updated=updated,
            version=version,
            landing_url=abs_url(arxiv_id),
            pdf_url=pdf_url(arxiv_id),
            cited_by_count=site.get("cited_by_count"),
            source=source,
        )

    return attempt(source, key, build)


# --- OAI-PMH (ListRecords in the arXiv and arXivRaw formats) ------------------------------------
OAI = "{http://www.openarchives.org/OAI/2.0/}"
OAI_ARXIV = "{http://arxiv.org/OAI/arXiv/}"
OAI_ARXIV_RAW = "{http://arxiv.org/OAI/arXivRaw/}"


@dataclass
class OaiPage:
    """One ListRecords answer: its records, deletions, the resumption token and where the list stands."""

    records: list = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    token: str | None = None
    complete_size: int | None = None
    cursor: int | None = None
    last_datestamp: str | None = None
    error: tuple[str, str] | None = None


def parse_oai(xml: bytes, source: str = "arxiv_oai") -> OaiPage:
    """A ListRecords response (OAI-PMH 2.0), with `arXiv` or `arXivRaw` metadata. An OAI error element
    (noRecordsMatch, badResumptionToken, ...) is returned in `error`, not raised."""
    from defusedxml import ElementTree

    root = ElementTree.fromstring(xml)
    page = OaiPage()
    error = root.find(f"{OAI}error")
    if error is not None:
        page.error = (error.get("code", "unknown"), (error.text or "").strip())
        return page
    for number, record in enumerate(root.iter(f"{OAI}record")):
        header = record.find(f"{OAI}header")
        identifier = header.findtext(f"{OAI}identifier", "") if header is not None else ""
        datestamp = header.findtext(f"{OAI}datestamp") if header is not None else None
        if datestamp and (page.last_datestamp is None or datestamp > page.last_datestamp):
            page.last_datestamp = datestamp
        key = identifier.removeprefix("oai:arXiv.org:") or f"record {number}"
        if header is not None and header.get("status") == "deleted":
            page.deleted.append(key)
            continue
        metadata = record.find(f"{OAI}metadata")
        page.records.append(attempt(source, key, lambda metadata=metadata: _oai_record(metadata, source)))
    token = root.find(f".//{OAI}resumptionToken")
    if token is not None:
        page.token = (token.text or "").strip() or None
        size, cursor = token.get("completeListSize"), token.get("cursor")
        page.complete_size = whole_number(size)
        page.cursor = whole_number(cursor)
    return page


def _oai_date(value: str | None) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(value.strip()).replace(tzinfo=timezone.utc)


def _oai_record(metadata, source: str) -> PaperRecord:
    if metadata is None:
        raise ValueError("record has no metadata")
    arxiv = metadata.find(f"{OAI_ARXIV}arXiv")
    if arxiv is not None:
        return _oai_arxiv(arxiv, source)
    raw = metadata.find(f"{OAI_ARXIV_RAW}arXivRaw")
    if raw is not None:
        return _oai_arxiv_raw(raw, source)
    raise ValueError("metadata is neither arXiv nor arXivRaw")


def _oai_common(element, ns: str, arxiv_id: str, authors: list[AuthorRecord], source: str, **dates) -> PaperRecord:
    def text(name: str) -> str | None:
        return text_or_none(element.findtext(f"{ns}{name}"))

    categories = (text("categories") or "").split()
    return PaperRecord(
        id=arxiv_id,
        arxiv_id=arxiv_id,
        doi=text("doi"),
        title=latex_to_text(element.findtext(f"{ns}title") or ""),
        abstract=element.findtext(f"{ns}abstract") or "",
        authors=authors,
        categories=categories,
        landing_url=abs_url(arxiv_id),
        pdf_url=pdf_url(arxiv_id),
        journal_ref=text("journal-ref"),
        comments=text("comments"),
        license=text("license"),
        source=source,
        **dates,
    )


def _oai_arxiv(element, source: str) -> PaperRecord:
    arxiv_id = (element.findtext(f"{OAI_ARXIV}id") or "").strip()
    if not arxiv_id:
        raise ValueError("record has no arXiv id")
    authors = []
    for author in element.iter(f"{OAI_ARXIV}author"):
        parts = [author.findtext(f"{OAI_ARXIV}{p}") for p in ("forenames", "keyname", "suffix")]
        name = latex_to_text(" ".join(p.strip() for p in parts if p and p.strip()))
        affiliations = [{"raw": a.text.strip()} for a in author.findall(f"{OAI_ARXIV}affiliation") if a.text]
        authors.append(AuthorRecord(name=name, affiliations=affiliations))
    # `created` is the first version's date; `updated` the latest version's, when there are several.
    published = _oai_date(element.findtext(f"{OAI_ARXIV}created"))
    updated = _oai_date(element.findtext(f"{OAI_ARXIV}updated")) or published
    return _oai_common(element, OAI_ARXIV, arxiv_id, authors, source, published=published, updated=updated)


def _oai_arxiv_raw(element, source: str) -> PaperRecord:
    arxiv_id = (element.findtext(f"{OAI_ARXIV_RAW}id") or "").strip()
    if not arxiv_id:
        raise ValueError("record has no arXiv id")
    authors_text = element.findtext(f"{OAI_ARXIV_RAW}authors")
    if not authors_text:
        raise ValueError("record has no authors")
    versions = [{"created": v.findtext(f"{OAI_ARXIV_RAW}date")} for v in element.findall(f"{OAI_ARXIV_RAW}version")]
    published, updated, version = _version_dates([v for v in versions if v["created"]])
    authors = [AuthorRecord(name=n) for n in _names_from_string(latex_to_text(authors_text))]
    return _oai_common(
        element, OAI_ARXIV_RAW, arxiv_id, authors, source, published=published, updated=updated, version=version
    )
