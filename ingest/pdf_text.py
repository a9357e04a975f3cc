"""What a PDF's page texts say beyond its first page's title, authors and abstract (`ingest.pdf_meta`): its body as
blocks of one page and one section, and the works its reference list cites. Pure functions over what pypdf gives;
the PDF worker (`ingest.pdf_worker`) runs them, and `ingest.writer` cuts the blocks into passages.

The body: pypdf gives one string per page with the layout's line breaks: words hyphenated across lines, ligatures,
running heads and page numbers. We mend those, find section headings ("1 Introduction", "2.3 Data", "Abstract",
"References"...) and keep each page's text under its section; the reference list is not body (its entries become
citation edges)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from retrieval.scholarly.arxiv_ids import ARXIV_ID

# --- the body: headings, blocks of one page and section ------------------------------------------
_NAMED = (
    "abstract",
    "introduction",
    "background",
    "related work",
    "method",
    "methods",
    "methodology",
    "approach",
    "experiments",
    "experimental setup",
    "results",
    "evaluation",
    "discussion",
    "analysis",
    "conclusion",
    "conclusions",
    "limitations",
    "ethics statement",
    "ethical considerations",
    "acknowledgments",
    "acknowledgements",
    "references",
    "bibliography",
    "appendix",
    "appendices",
)
_NUMBERED = re.compile(r"^(?:(?:\d{1,2}(?:\.\d{1,2}){0,3})|[A-H](?:\.\d{1,2}){0,3}|[IVX]{1,4}\.)\s+([A-Z][^\n]{1,70})$")
_PAGE_NUMBER = re.compile(r"^\s*(?:page\s*)?\d{1,5}\s*(?:of\s*\d{1,5})?\s*$", re.IGNORECASE)
_HYPHEN_BREAK = re.compile(r"(\w)-\n(?=[a-z])")
_REFERENCE_SECTIONS = {"references", "bibliography"}


def _normal(text: str) -> str:
    # NFKC turns ligatures (ﬁ, ﬂ) into letters; the soft hyphen and zero-width characters go.
    text = unicodedata.normalize("NFKC", text)
    return re.sub("[\u00ad\u200b\u200c\u200d\ufeff]", "", text)


def heading_of(line: str) -> str | None:
    """The section name when the line is a heading, else None."""
    line = line.strip()
    if not line or len(line) > 80 or line.endswith((".", ",", ";", ":")) and not line.lower().startswith("appendix"):
        return None
    bare = re.sub(r"^(?:\d{1,2}(?:\.\d{1,2}){0,3}|[A-H](?:\.\d{1,2}){0,3}|[IVX]{1,4}\.)\s+", "", line)
    if bare.lower().rstrip(":") in _NAMED:
        return bare.rstrip(":")
    match = _NUMBERED.match(line)
    if match and not re.search(r"\d{3,}|[=<>%]|\bet al\b", match.group(1)) and len(match.group(1).split()) <= 8:
        return match.group(1).strip()
    return None


@dataclass(frozen=True)
class Block:
    page: int
    section: str | None
    text: str


def blocks(pages: list[str]) -> list[Block]:
    """Runs of text with one page and one section, in reading order; page numbers and references dropped."""
    blocks: list[Block] = []
    section: str | None = None
    for number, raw in enumerate(pages, start=1):
        text = _HYPHEN_BREAK.sub(r"\1", _normal(raw or ""))
        lines: list[str] = []
        for line in text.split("\n"):
            heading = heading_of(line)
            if heading:
                if lines:
                    blocks.append(Block(number, section, " ".join(lines)))
                    lines = []
                section = heading
                continue
            if _PAGE_NUMBER.match(line) or (section or "").lower() in _REFERENCE_SECTIONS:
                continue
            lines.append(line.strip())
        if lines:
            blocks.append(Block(number, section, " ".join(lines)))
    return [b for b in blocks if b.text.strip()]


# --- the reference list -----------------------------------------------------------------------
_SEPARATORS = r"[\s,:]{0,6}+"  # bounded and possessive: three unbounded runs in a row cost cubic time on ",,,,"
ARXIV_REF = re.compile(
    # arXiv:2006.14799, arXiv preprint arXiv:2006.14799, arXiv, abs/1609.08144, arxiv.org/abs/hep-th/9901001v2
    rf"arxiv(?:\.org/(?:abs|pdf)/|{_SEPARATORS}(?:preprint{_SEPARATORS})?(?:arxiv{_SEPARATORS})?(?:abs/)?)"
    rf"({ARXIV_ID})(?:v\d+)?",
    re.IGNORECASE,
)
DOI_REF = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)")
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)


def reference_text(pages: list[str], soft: bool = False) -> str:
    """The text under a References/Bibliography heading, up to the next other heading (an appendix).
    A line ending in a hyphen joins the next one with the hyphen kept, so a DOI broken there stays whole (with
    `soft`, the hyphen is marked as a line's: `ingest.references.SOFT`)."""
    inside = False
    kept: list[str] = []
    for raw in pages:
        for line in _normal(raw or "").split("\n"):
            heading = heading_of(line)
            if heading:
                inside = heading.lower() in _REFERENCE_SECTIONS
                continue
            if inside and not _PAGE_NUMBER.match(line):
                kept.append(line.strip())
    text = ""
    for line in kept:
        if soft and text.endswith("-") and line:
            text = text[:-1] + "\u00ad" + line
        else:
            text += line if text.endswith(("-", "/")) else (" " + line if text else line)
    return text


def cited_identifiers(text: str) -> list[tuple[str, str]]:
    """('arxiv', id) and ('doi', doi) pairs found in a reference list, in order, once each."""
    found: dict[tuple[str, str], None] = {}
    for match in ARXIV_REF.finditer(text):
        found[("arxiv", match.group(1))] = None
    for match in DOI_REF.finditer(text):
        doi = match.group(1).rstrip(".,;:)]}").lower()
        arxiv = _ARXIV_DOI.match(doi)
        found[("arxiv", arxiv.group(1)) if arxiv else ("doi", doi)] = None
    return list(found)
