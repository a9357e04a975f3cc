"""What a PDF's first page says the paper is: its title, authors and abstract, read from the file itself: its
document info, then its first page's layout. `first_page_lines` runs in the PDF worker's child (`ingest.pdf_worker`;
it reads pypdf objects): the first page's text as lines, each with its font size and height on the page.
`guess_metadata` runs on what it read:

- title: the document info's title when it looks like one (not a file name, not "untitled", not a word
  processor's default), else the lines in the largest type in the top half of the page (small capitals, a
  large letter followed by smaller capitals with no space, are joined back into words);
- authors: the info's author field when it names people, else the lines between the title and "Abstract" that
  read as lists of names (affiliations, e-mails and addresses are left out);
- abstract: the paragraph after "Abstract", up to the first section heading.

Measured on the eight PDFs of the shared data in BENCHMARKS.md (`python -m bench.pdf_metadata`). The body and the
reference list are `ingest.pdf_text`'s."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from retrieval.scholarly.arxiv_ids import NEW_ID

MARK = "\ue000"  # where a line had a raised or lowered mark (it separates names in a byline)
Line = tuple[str, float, float]  # text, largest font size on the line, height on the page (PDF points, up)


def first_page_lines(reader, max_parts: int = 4000) -> list[Line]:
    """The first page's text runs grouped into lines, top to bottom. Each run is (text, size, y)."""
    if not len(reader.pages):
        return []
    runs: list[tuple[str, float, float]] = []

    def visit(text, cm, tm, _font, size) -> None:
        if len(runs) >= max_parts or not text:
            return
        # the text matrix times the current transformation: its vertical scale and its baseline's height
        scale = abs(tm[3] * cm[3] + tm[1] * cm[2]) or abs(tm[0] * cm[0]) or 1.0
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        runs.append((text, round(float(size) * scale, 1), round(float(y), 1)))

    reader.pages[0].extract_text(visitor_text=visit)
    return _lines(runs)


def _lines(runs: list[tuple[str, float, float]]) -> list[Line]:
    """Runs on one baseline make a line; a run in smaller type a little above or below it (a footnote mark, an
    affiliation number) belongs to that line too."""
    lines: list[list] = []  # [parts (text, size, y), size, baseline]
    for text, size, y in runs:
        for i, piece in enumerate(text.split("\n")):
            line = lines[-1] if lines else None
            near = line is not None and abs(line[2] - y) <= (2.0 if size >= line[1] else max(2.0, 0.5 * line[1]))
            if i or not near:
                if i and not piece:
                    continue
                line = [[], size, y]
                lines.append(line)
            if piece:
                line[0].append((piece, size, y))
                if piece.strip() and size > line[1]:
                    line[1], line[2] = size, y
    joined = [(_join(parts, size, y), size, y) for parts, size, y in lines]
    return [line for line in joined if line[0]]


_MODIFIERS = {
    "¨": "\u0308", "´": "\u0301", "`": "\u0300", "ˆ": "\u0302", "˜": "\u0303", "ˇ": "\u030c",
    "¸": "\u0327", "˚": "\u030a", "¯": "\u0304", "˘": "\u0306", "˙": "\u0307", "˝": "\u030b",
}  # fmt: skip


_ACCENT = re.compile("([" + "".join(_MODIFIERS) + "]) ?([A-Za-z])")
_NAME_BREAK = re.compile(rf",|;|\band\b|&|\s{{3,}}|{MARK}")  # what separates the names in a byline


def _accents(text: str) -> str:
    """TeX's accents come out of a PDF as a spacing mark before the letter ("Gaˇsi´c"): put them on it ("Gašić")."""
    text = _ACCENT.sub(lambda m: m[2] + _MODIFIERS[m[1]], text)
    return unicodedata.normalize("NFC", text)


def _join(parts: list[tuple[str, float, float]], size: float, baseline: float) -> str:
    """The line's runs as text: a mark in smaller type off the baseline becomes a space; a capital in large type
    directly followed by capitals in smaller type (small caps: "L" "ONG" "E" "VAL") becomes one word ("LongEval")."""
    out = ""
    for i, (text, own, y) in enumerate(parts):
        if own < 0.8 * size and abs(y - baseline) > 0.5:
            out += f" {MARK} "
            continue
        previous = parts[i - 1] if i else None
        if previous and previous[1] > own and re.fullmatch(r"[A-Z]", previous[0].strip()[-1:] or "") and (
            re.match(r"[A-Z]{2,}", text.strip())
        ):
            out = out.rstrip() + text.strip().lower()
            continue
        out += text
    return re.sub(r"\s+", " ", _small_caps_words(_accents(out))).strip()


def _small_caps_words(text: str) -> str:
    """"L ONG E VAL" (small caps extracted with spaces) -> "LongEval"."""
    return re.sub(r"\b([A-Z]) ([A-Z]{2,})\b(?: ([A-Z]) ([A-Z]{2,})\b)?",
                  lambda m: m[1] + m[2].lower() + ((m[3] + m[4].lower()) if m[3] else ""), text)  # fmt: skip


@dataclass(frozen=True)
class FileMetadata:
    title: str = ""
    authors: list[str] = field(default_factory=list)
    abstract: str = ""
    arxiv_id: str | None = None
    doi: str | None = None


_BAD_TITLES = re.compile(r"^(untitled|microsoft word|title|document\d*|slide \d+)\b|\.(dvi|tex|docx?|pdf)$", re.I)
_NOT_NAME = re.compile(
    r"@|\d|\b(universit|institut|college|school|department|dept|laborator|lab\b|research|inc\b|corp|center|centre|"
    r"allen|google|microsoft|facebook|meta\b|amazon|abstract|and\s*$)",
    re.I,
)
_ABSTRACT = re.compile(r"^\s*abstract\b[\s.:—-]*", re.I)
_SECTION = re.compile(r"^\s*(1\.?\s+|I\.\s+)?(introduction|keywords|index terms|ccs concepts)\b", re.I)
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;)])")
_ARXIV = re.compile(rf"arXiv:\s*({NEW_ID})(v\d+)?", re.I)


def guess_metadata(info: dict, lines: list[Line], first_page: str) -> FileMetadata:
    title_lines, title = _title_from_layout(lines)
    info_title = (info.get("title") or "").strip()
    if _plausible_title(info_title):
        title = info_title
    # The byline as printed beats the info field (which often drops middle names or a last author's capitals).
    authors = _authors_from_layout(lines, title_lines) or _names(info.get("author") or "", capitals=False)
    arxiv = _ARXIV.search(first_page)
    doi = _DOI.search(first_page)
    return FileMetadata(
        title=re.sub(r"\s+", " ", title).strip()[:500],
        authors=authors[:50],
        abstract=_abstract(first_page)[:5000],
        arxiv_id=arxiv[1] if arxiv else None,
        doi=doi[1].lower() if doi else None,
    )


def _plausible_title(text: str) -> bool:
    return len(text) >= 8 and len(text.split()) >= 2 and not _BAD_TITLES.search(text)


def _title_from_layout(lines: list[Line]) -> tuple[list[int], str]:
    if not lines:
        return [], ""
    top = max(y for _, _, y in lines)
    bottom = min(y for _, _, y in lines)
    upper = [i for i, (_, _, y) in enumerate(lines) if y >= bottom + (top - bottom) / 2]
    sizes = [lines[i][1] for i in upper if len(lines[i][0]) > 3 and not _ARXIV.search(lines[i][0])]
    if not sizes:
        return [], ""
    biggest = max(sizes)
    chosen = [i for i in upper if lines[i][1] >= biggest - 0.5 and not _ARXIV.search(lines[i][0])]
    run = [chosen[0]]  # the first block of title-sized lines, in reading order
    for i in chosen[1:]:
        if i == run[-1] + 1:
            run.append(i)
    return run, " ".join(lines[i][0] for i in run).replace(MARK, " ")


def _authors_from_layout(lines: list[Line], title_lines: list[int]) -> list[str]:
    start = (title_lines[-1] + 1) if title_lines else 0
    names: list[str] = []
    for text, _, _ in lines[start:]:
        if _ABSTRACT.match(text) or _SECTION.match(text):
            break
        names += _names(text)
    return list(dict.fromkeys(names))


def _names(text: str, capitals: bool = True) -> list[str]:
    """People named in a line ("A. Name, B. Name and C. Name"), or none when it reads as something else; with
    `capitals` False (a document info field) a name may be written in lower case."""
    text = re.sub(r"[*†‡§¶♠♣♥♦]|\^\w|\(\s*\)", " ", text)
    found = []
    for part in _NAME_BREAK.split(text):
        part = re.sub(r"\s+", " ", part).strip(" .")
        if re.fullmatch(r"[A-Z][a-z]+[A-Z][a-z]+", part):  # one word cannot be a name: "QiZhu" lost its space
            part = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", part)
        words = part.split()
        if not 2 <= len(words) <= 5 or _NOT_NAME.search(part):
            continue
        if not capitals and all(re.fullmatch(r"[^\W\d_][\w'’.-]*", w) for w in words):
            part = " ".join(w if w[0].isupper() or w in _PARTICLES else w[:1].upper() + w[1:] for w in words)
            words = part.split()
        if all(re.fullmatch(r"[A-Z][\w'’.-]*", w) or w in _PARTICLES for w in words):
            found.append(part)
    return found


_PARTICLES = {"van", "von", "de", "der", "da", "del", "la", "le", "di", "du"}


def _abstract(first_page: str) -> str:
    """The paragraph after the "Abstract" heading on the first page, up to the first section heading."""
    start = re.search(r"(?im)^[^\S\n]*abstract\b[\s.:—-]*", first_page)  # (`^\s*` re-scans blank lines)
    if not start:
        return ""
    rest = first_page[start.end() :]
    end = re.search(r"(?im)^[^\S\n]*(1\.?\s*|I\.\s+)?(introduction|keywords|index terms|ccs concepts)\b", rest)
    text = rest[: end.start()] if end else rest[:3000]
    text = re.sub(r"(\w)-\n(?=[a-z])", r"\1", text)  # a word broken at the line's end
    return re.sub(r"\s+", " ", text).strip()
