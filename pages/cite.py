""""Cite this": a paper as BibTeX (bibtexparser) and RIS (rispy), from catalog values only.

arXiv papers follow arXiv's own conventions: `@misc` with `eprint`, `archivePrefix = {arXiv}`, `primaryClass`, and
the arXiv DOI `10.48550/arXiv.<id>` unless a published DOI is known. Text is LaTeX-encoded by bibtexparser's
middleware (accents, `&`, `%`, `$`, braces), so any title or name reads back as it was written.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from fastapi.responses import PlainTextResponse, Response

from pages.addresses import split_paper_address
from pages.http import PagesDeps, page_headers
from retrieval.models import Paper

BIBTEX = "application/x-bibtex; charset=utf-8"
RIS = "application/x-research-info-systems; charset=utf-8"


def _key(paper: Paper, authors: list[str]) -> str:
    """garcia2020hindsight: the first author's surname, the year and the title's first long word, ASCII only."""

    def ascii_word(text: str) -> str:
        plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
        return re.sub(r"[^a-z0-9]", "", plain.lower())

    surname = ascii_word(authors[0].split()[-1]) if authors else "anonymous"
    words = [ascii_word(w) for w in re.findall(r"[^\W\d_]{4,}", paper.title)]
    return f"{surname or 'anonymous'}{paper.year or ''}{next((w for w in words if w), '')}"


def _doi(paper: Paper) -> str | None:
    return paper.doi or (f"10.48550/arXiv.{paper.arxiv_id}" if paper.arxiv_id else None)


def bibtex(paper: Paper, authors: list[str]) -> str:
    import bibtexparser
    from bibtexparser import model
    from bibtexparser.middlewares import LatexEncodingMiddleware

    fields = {"title": paper.title, "author": " and ".join(authors), "year": str(paper.year) if paper.year else None}
    if paper.arxiv_id:
        fields |= {"eprint": paper.arxiv_id, "archivePrefix": "arXiv", "primaryClass": paper.primary_category,
                   "url": f"https://arxiv.org/abs/{paper.arxiv_id}"}  # fmt: skip
    else:
        fields |= {"journal": paper.venue, "url": paper.landing_url}
    fields["doi"] = _doi(paper)
    entry_type = "misc" if paper.arxiv_id or not paper.venue else "article"
    entry = model.Entry(entry_type, _key(paper, authors), [model.Field(k, v) for k, v in fields.items() if v])
    library = bibtexparser.Library([entry])
    return bibtexparser.write_string(library, prepend_middleware=[LatexEncodingMiddleware(encoder=_encoder())])


@functools.cache  # one encoder for every export (it holds no state between calls)
def _encoder():
    """Unicode to LaTeX as bibtexparser's middleware does it (math kept as written, `&`, `%`, `#`, `_`, braces and
    accents escaped), minus its URL wrapping, and keeping what LaTeX has no name for (CJK names) without a warning."""
    from pylatexenc.latexencode import RULE_REGEX, UnicodeToLatexConversionRule, UnicodeToLatexEncoder

    math = UnicodeToLatexConversionRule(rule_type=RULE_REGEX, rule=[(re.compile(r"(?<!\\)(\$.*[^\\]\$)"), r"\1")])
    return UnicodeToLatexEncoder(conversion_rules=[math, "defaults"], unknown_char_policy="keep",
                                 unknown_char_warning=False)  # fmt: skip


def ris(paper: Paper, authors: list[str]) -> str:
    import rispy

    url = f"https://arxiv.org/abs/{paper.arxiv_id}" if paper.arxiv_id else paper.landing_url
    entry = {
        "type_of_reference": "UNPB" if paper.arxiv_id else "JOUR",
        "title": paper.title,
        "authors": list(authors),
        "year": str(paper.year) if paper.year else None,
        "abstract": paper.abstract or None,
        "doi": _doi(paper),
        "urls": [url] if url else None,
        "journal_name": paper.venue if not paper.arxiv_id else None,
        "keywords": list(paper.categories) or None,
    }
    return rispy.dumps([{k: v for k, v in entry.items() if v}])


def citation(deps: PagesDeps, address: str) -> Response:
    """/papers/<id>.bib and .ris: "cite this", as a file to save."""
    stem, kind = address[:-4], address[-3:]
    parts = split_paper_address(stem)
    paper_id = deps.library.resolve_paper_id(parts[0]) if parts else None
    if paper_id is None:
        return PlainTextResponse("No such paper in this archive.\n", status_code=404, headers=page_headers())
    paper = deps.library.papers([paper_id])[paper_id]
    authors = deps.library.author_names([paper_id]).get(paper_id, [])
    text, media = (bibtex(paper, authors), BIBTEX) if kind == "bib" else (ris(paper, authors), RIS)
    filename = re.sub(r"[^A-Za-z0-9.-]", "_", paper_id) + "." + kind
    headers = {**page_headers(), "Content-Disposition": f'inline; filename="{filename}"'}
    return Response(text, media_type=media, headers=headers)
