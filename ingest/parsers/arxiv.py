"""arXiv formats: API Atom feeds, Kaggle/OAI snapshot JSON lines, and the reference site's record (OAI-PMH pages:
`ingest.parsers.arxiv_oai`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from email.utils import parsedate_to_datetime

from ingest.parsers.common import attempt, parse_json_lines, text_or_none
from ingest.report import Failure
from retrieval.scholarly.models import utc
from retrieval.scholarly.records import AuthorRecord, PaperRecord, split_arxiv_version, whole_number

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
    return utc(datetime.fromisoformat(value.replace("Z", "+00:00")))


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
        name = " ".join(part for part in (first, last, suffix) if part)
        if not _ET_AL.match(name) and "(" not in name and ")" not in name:  # not "et al", no affiliation's remains
            names.append(name)
    return names


_ET_AL = re.compile(r"^et\.? al\.?$|(?<!\s)\s+et\.? al\.?$", re.IGNORECASE)  # a run of spaces entered once


def names_from_string(authors: str) -> list[str]:
    """The names in arXiv's author line ("A, B, and C"; "Collaboration: A"): affiliations in parentheses (nested
    ones too, as in "A (1), B (2) ((1) CREST, (2) The University of Tokyo)") and "et al" are not names."""
    text = without_parentheses(re.sub(r"\s+", " ", authors))
    parts = (_ET_AL.sub("", p.strip()).strip() for p in _AUTHOR_BREAK.split(text))
    return [p for p in parts if p]


_AUTHOR_BREAK = re.compile(r",\s*(?:(?:and|&)\s+)?|:\s+|(?<!\s)\s+(?:and|&)\s+")


def without_parentheses(text: str) -> str:
    """The text without what is in parentheses, nested ones too; an unclosed one cuts the rest, a stray ")" goes.
    One pass (removing the innermost pairs again and again took time quadratic in how deep they nest)."""
    opened: list[int] = []
    cut = [0] * (len(text) + 1)  # +1 where a removed stretch starts, -1 after it ends
    for i, ch in enumerate(text):
        if ch == "(":
            opened.append(i)
        elif ch == ")" and opened:
            cut[opened.pop()] += 1
            cut[i + 1] -= 1
    end = opened[0] if opened else len(text)  # the first parenthesis never closed
    kept, depth = [], 0
    for i in range(end):
        depth += cut[i]
        if depth == 0 and text[i] != ")":
            kept.append(text[i])
    return "".join(kept)


def version_dates(versions: list) -> tuple[datetime | None, datetime | None, int | None]:
    if not versions:
        return None, None, None
    dates = [parsedate_to_datetime(v["created"]) for v in versions]
    return dates[0], dates[-1], len(versions)


def snapshot_record(raw: dict, source: str) -> PaperRecord:
    arxiv_id = str(raw["id"]).strip()
    if raw.get("authors_parsed"):
        names = _names_from_parsed(raw["authors_parsed"])
    elif isinstance(raw.get("authors"), str):
        names = names_from_string(latex_to_text(raw["authors"]))
    else:
        raise ValueError("record has no authors")
    published, updated, version = version_dates(raw.get("versions") or [])
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
        published, updated, version = version_dates((arxiv_record or {}).get("versions") or [])
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
