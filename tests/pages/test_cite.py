""""Cite this": /papers/<id>.bib and .ris, read back by bibtexparser and rispy."""

from __future__ import annotations

import bibtexparser
import httpx
import pytest
import rispy
from bibtexparser.middlewares import LatexDecodingMiddleware

from pages.cite import bibtex, ris

AUTHORS = [
    "Rolando Garcia", "Eric Liu", "Vikram Sreekanti", "Bobby Yan", "Anusha Dandamudi",
    "Joseph E. Gonzalez", "Joseph M. Hellerstein", "Koushik Sen",
]  # fmt: skip


LATEX_WRITTEN = ("--", "^", "<", ">", "\\", "``", "''", '"', "~")


def _read_bibtex(text: str):
    (entry,) = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware(keep_math_mode=True)]).entries
    return entry


@pytest.fixture(scope="module")
def client(demo):
    from scholarloom.app import create_app

    return httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(demo, with_chat=False)), base_url="http://t")


async def test_the_bibtex_of_an_arxiv_paper_follows_arxivs_conventions(client):
    for address in ("/papers/2006.07357.bib", "/papers/2006.07357v2.bib"):
        response = await client.get(address)
        assert response.status_code == 200 and response.headers["content-type"].startswith("application/x-bibtex")
        entry = _read_bibtex(response.text)
        assert entry.entry_type == "misc" and entry.key == "garcia2020hindsight"
        assert entry["title"] == "Hindsight Logging for Model Training"
        assert entry["author"].split(" and ") == AUTHORS
        assert (entry["year"], entry["eprint"], entry["archivePrefix"], entry["primaryClass"]) == (
            "2020", "2006.07357", "arXiv", "cs.DC"
        )
        assert entry["doi"] == "10.48550/arXiv.2006.07357"
    (record,) = rispy.loads((await client.get("/papers/2006.07357.ris")).text)
    assert record["title"] == "Hindsight Logging for Model Training" and record["authors"] == AUTHORS
    assert record["year"] == "2020" and record["doi"] == "10.48550/arXiv.2006.07357"
    assert (await client.get("/papers/9999.99999.bib")).status_code == 404
    described = (await client.get("/api/papers/2006.07357")).json()
    for key in ("bibtex_url", "ris_url"):
        assert (await client.get(described[key])).status_code == 200


def test_every_demo_paper_reads_back_as_written(demo):
    """Accents (José Santamaría), math in titles, `&`, `%`, `_` and braces: BibTeX reads back exactly, RIS too.
    Titles written in LaTeX by their authors (`--`, `^`, `<`, `\\`, quotes) read back as LaTeX means them, which
    the reader's decoder knows only in part, so for those the entry must parse whole, with every author."""
    from pylatexenc.latex2text import LatexNodes2Text

    decode = LatexNodes2Text(math_mode="verbatim", keep_braced_groups=False).latex_to_text  # as the reader's middleware
    library = demo.library()
    papers = list(library.catalog.iter_papers())
    names = library.author_names([p.id for p in papers])
    special = 0
    for paper in papers:
        authors = names.get(paper.id, [])
        entry = _read_bibtex(bibtex(paper, authors))
        title = paper.title.replace("\u2010", "-")  # (U+2010, a hyphen LaTeX has no other name for, is written "-")
        if not any(mark in title for mark in LATEX_WRITTEN):
            assert entry["title"] in (title, decode(title)), paper.id
        if authors:
            read = entry["author"].split(" and ")
            plain = [a.replace("\u2010", "-") for a in authors]
            same = [r in (a, decode(a)) or any(m in a for m in LATEX_WRITTEN) for r, a in zip(read, plain)]
            assert len(read) == len(plain) and all(same), paper.id
        (record,) = rispy.loads(ris(paper, authors))
        assert record["title"] == paper.title and record.get("authors", []) == authors, paper.id
        written = paper.title + "".join(authors)
        special += any(c in written for c in "&%_{}$") or not written.isascii()
    assert special >= 50  # the demo has them
    santamaria = next(p for p in papers if "José Santamaría" in names.get(p.id, []))
    assert "José Santamaría" in _read_bibtex(bibtex(santamaria, names[santamaria.id]))["author"].split(" and ")


async def test_the_paper_page_offers_both(client):
    from bs4 import BeautifulSoup

    address = "/papers/2006.07357-hindsight-logging-for-model-training"
    page = BeautifulSoup((await client.get(address)).text, "html.parser")
    assert [a["href"] for a in page.select(".actions .cite a")] == ["/papers/2006.07357.bib", "/papers/2006.07357.ris"]
    markdown = (await client.get(address + ".md")).text
    assert "- Cite: [BibTeX](/papers/2006.07357.bib), [RIS](/papers/2006.07357.ris)" in markdown
