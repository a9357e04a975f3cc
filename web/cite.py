""""Cite this": papers as BibTeX (bibtexparser), RIS (rispy) and CSL-JSON, from catalog values only.

arXiv papers follow arXiv's own conventions: `@misc` with `eprint`, `archivePrefix = {arXiv}`, `primaryClass`, and
the arXiv DOI `10.48550/arXiv.<id>` unless a published DOI is known. Text is LaTeX-encoded by bibtexparser's
middleware (accents, `&`, `%`, `$`, braces), so any title or name reads back as it was written. CSL-JSON follows
CSL 1.0.2's data schema with what reference managers write for an arXiv preprint (`article`, publisher arXiv, number
`arXiv:<id>`).
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata

from fastapi.responses import PlainTextResponse, Response

from retrieval.archive import Archive
from retrieval.scholarly.models import Paper
from pages.base import split_paper_address
from web.http import WebDeps, page_headers

BIBTEX = "application/x-bibtex; charset=utf-8"
RIS = "application/x-research-info-systems; charset=utf-8"
CSL_JSON = "application/vnd.citationstyles.csl+json; charset=utf-8"
FORMATS = ("bib", "ris", "json")
MAX_PAPERS = 100  # papers in one multi-paper export


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


def bibtex(cited: list[tuple[Paper, list[str]]]) -> str:
    """BibTeX entries of the papers (with their author lists), keys made unique in the file (`...a`, `...b`)."""
    import bibtexparser
    from bibtexparser import model
    from bibtexparser.middlewares import LatexEncodingMiddleware

    entries, keys = [], set()
    for paper, authors in cited:
        key = base = _key(paper, authors)
        for suffix in "abcdefghijklmnopqrstuvwxyz":
            if key not in keys:
                break
            key = base + suffix
        keys.add(key)
        entries.append(model.Entry(_entry_type(paper), key, [model.Field(k, v) for k, v in _fields(paper, authors)]))
    library = bibtexparser.Library(entries)
    return bibtexparser.write_string(library, prepend_middleware=[LatexEncodingMiddleware(encoder=_encoder())])


def _entry_type(paper: Paper) -> str:
    return "misc" if paper.arxiv_id or not paper.venue else "article"


def _fields(paper: Paper, authors: list[str]) -> list[tuple[str, str]]:
    fields = {"title": paper.title, "author": " and ".join(authors), "year": str(paper.year) if paper.year else None}
    if paper.arxiv_id:
        fields |= {"eprint": paper.arxiv_id, "archivePrefix": "arXiv", "primaryClass": paper.primary_category,
                   "url": f"https://arxiv.org/abs/{paper.arxiv_id}"}  # fmt: skip
    else:
        fields |= {"journal": paper.venue, "url": paper.landing_url}
    fields["doi"] = _doi(paper)
    return [(k, v) for k, v in fields.items() if v]


@functools.cache  # one encoder for every export (it holds no state between calls)
def _encoder():
    """Unicode to LaTeX as bibtexparser's middleware does it (math kept as written, `&`, `%`, `#`, `_`, braces and
    accents escaped), minus its URL wrapping, and keeping what LaTeX has no name for (CJK names) without a warning."""
    from pylatexenc.latexencode import RULE_CALLABLE, UnicodeToLatexConversionRule, UnicodeToLatexEncoder

    math = UnicodeToLatexConversionRule(RULE_CALLABLE, math_as_written, replacement_latex_protection="none")
    return UnicodeToLatexEncoder(conversion_rules=[math, "defaults"], unknown_char_policy="keep",
                                 unknown_char_warning=False)  # fmt: skip


def math_as_written(text: str, start: int) -> tuple[int, str] | None:
    """`$...$` from `start`, kept as written (it is LaTeX already) when its braces balance; otherwise None, and its
    `$` and braces are escaped like any text. A field ends where its braces balance, so math with a lone `}` could
    close the title and write fields of its own (`$x}, url = {https://evil.example/p}, note = {$`)."""
    if text[start] != "$" or (start and text[start - 1] == "\\"):
        return None
    end = start + 1
    while (end := text.find("$", end)) != -1 and text[end - 1] == "\\":
        end += 1
    if end == -1 or end == start + 1:
        return None
    span, depth = text[start : end + 1], 0
    for ch in span:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return None
    return (len(span), span) if depth == 0 else None


def ris(cited: list[tuple[Paper, list[str]]]) -> str:
    import rispy

    return rispy.dumps([_ris_entry(paper, authors) for paper, authors in cited])


def _ris_entry(paper: Paper, authors: list[str]) -> dict:
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
    return {k: v for k, v in entry.items() if v}


def csl_json(cited: list[tuple[Paper, list[str]]]) -> str:
    """A CSL-JSON array (what Zotero, Pandoc and citeproc read): one item per paper."""
    return json.dumps([_csl_item(paper, authors) for paper, authors in cited], ensure_ascii=False, indent=1) + "\n"


def _csl_item(paper: Paper, authors: list[str]) -> dict:
    published = paper.published
    parts = [published.year, published.month, published.day] if published else [paper.year] if paper.year else None
    item = {
        "id": paper.id,
        "type": "article" if paper.arxiv_id else "article-journal",
        "title": paper.title,
        "author": [_csl_name(name) for name in authors],
        "issued": {"date-parts": [parts]} if parts else None,
        "abstract": paper.abstract or None,
        "DOI": _doi(paper),
        "URL": f"https://arxiv.org/abs/{paper.arxiv_id}" if paper.arxiv_id else paper.landing_url,
        "publisher": "arXiv" if paper.arxiv_id else None,
        "number": f"arXiv:{paper.arxiv_id}" if paper.arxiv_id else None,
        "container-title": paper.venue if not paper.arxiv_id else None,
        "keyword": ", ".join(paper.categories) or None,
    }
    return {k: v for k, v in item.items() if v}


def _csl_name(name: str) -> dict:
    """"Ludwig van Beethoven" -> given Ludwig, particle van, family Beethoven (BibTeX's name rules, by bibtexparser)."""
    from bibtexparser.middlewares.names import parse_single_name_into_parts

    parts = parse_single_name_into_parts(name, strict=False)
    if not parts.last:
        return {"literal": name}
    named = {"family": " ".join(parts.last), "given": " ".join(parts.first),
             "non-dropping-particle": " ".join(parts.von), "suffix": " ".join(parts.jr)}  # fmt: skip
    return {k: v for k, v in named.items() if v}


def citation(deps: WebDeps, address: str) -> Response:
    """/papers/<id>.bib, .ris and .json (CSL): "cite this", as a file to save."""
    stem, kind = address.rsplit(".", 1)
    parts = split_paper_address(stem)
    paper_id = deps.archive.resolve_paper_id(parts[0]) if parts else None
    if paper_id is None:
        return PlainTextResponse("No such paper in this archive.\n", status_code=404, headers=page_headers())
    return _export(deps, [paper_id], kind, re.sub(r"[^A-Za-z0-9.-]", "_", paper_id))


def citations(deps: WebDeps, ids: list[str], kind: str) -> Response:
    """/cite.bib?ids=a,b,c (and .ris, .json): several papers in one file (an answer's sources); ids the archive
    does not hold are left out, and none known is a 404."""
    known = [found for raw in ids[:MAX_PAPERS] if (found := deps.archive.resolve_paper_id(raw.strip()[:100]))]
    if not known:
        return PlainTextResponse("None of these papers is in this archive.\n", status_code=404, headers=page_headers())
    return _export(deps, list(dict.fromkeys(known)), kind, "sources")


def cited_papers(archive: Archive, paper_ids: list[str]) -> list[tuple[Paper, list[str]]]:
    """The papers of these catalog ids with their author lists, in order (ids no longer here left out)."""
    papers = archive.papers(paper_ids)
    authors = archive.author_names(paper_ids)
    return [(papers[pid], authors.get(pid, [])) for pid in paper_ids if pid in papers]


def _export(deps: WebDeps, paper_ids: list[str], kind: str, name: str) -> Response:
    cited = cited_papers(deps.archive, paper_ids)
    write, media = {"bib": (bibtex, BIBTEX), "ris": (ris, RIS), "json": (csl_json, CSL_JSON)}[kind]
    headers = {**page_headers(), "Content-Disposition": f'inline; filename="{name}.{kind}"'}
    return Response(write(cited), media_type=media, headers=headers)
