"""arXiv's OAI-PMH ListRecords pages, in the arXiv and arXivRaw metadata formats."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from ingest.parsers.arxiv import abs_url, latex_to_text, names_from_string, pdf_url, version_dates
from ingest.parsers.common import attempt, text_or_none
from retrieval.scholarly.records import AuthorRecord, PaperRecord, whole_number

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
    published, updated, version = version_dates([v for v in versions if v["created"]])
    authors = [AuthorRecord(name=n) for n in names_from_string(latex_to_text(authors_text))]
    return _oai_common(
        element, OAI_ARXIV_RAW, arxiv_id, authors, source, published=published, updated=updated, version=version
    )
