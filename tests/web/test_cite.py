""""Cite this": /papers/<id>.bib, .ris and .json (CSL), and /cite.* for several papers, read back by bibtexparser,
rispy and citeproc-py."""

from __future__ import annotations

from pathlib import Path

import bibtexparser
import httpx
import pytest
import rispy
from bibtexparser.middlewares import LatexDecodingMiddleware

from web.cite import bibtex, csl_json, ris

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
    for key in ("bibtex_url", "ris_url", "csl_url"):
        assert (await client.get(described[key])).status_code == 200


def test_every_demo_paper_reads_back_as_written(demo):
    """Accents (José Santamaría), math in titles, `&`, `%`, `_` and braces: BibTeX reads back exactly, RIS too.
    Titles written in LaTeX by their authors (`--`, `^`, `<`, `\\`, quotes) read back as LaTeX means them, which
    the reader's decoder knows only in part, so for those the entry must parse whole, with every author."""
    from pylatexenc.latex2text import LatexNodes2Text

    decode = LatexNodes2Text(math_mode="verbatim", keep_braced_groups=False).latex_to_text  # as the reader's middleware
    archive = demo.archive()
    papers = list(archive.catalog.iter_papers())
    names = archive.author_names([p.id for p in papers])
    special = 0
    for paper in papers:
        authors = names.get(paper.id, [])
        entry = _read_bibtex(bibtex([(paper, authors)]))
        title = paper.title.replace("\u2010", "-")  # (U+2010, a hyphen LaTeX has no other name for, is written "-")
        if not any(mark in title for mark in LATEX_WRITTEN):
            assert entry["title"] == title or entry["title"] == decode(title), paper.id  # (decoded only if needed)
        if authors:
            read = entry["author"].split(" and ")
            plain = [a.replace("\u2010", "-") for a in authors]
            same = [r == a or r == decode(a) or any(m in a for m in LATEX_WRITTEN) for r, a in zip(read, plain)]
            assert len(read) == len(plain) and all(same), paper.id
        (record,) = rispy.loads(ris([(paper, authors)]))
        assert record["title"] == paper.title and record.get("authors", []) == authors, paper.id
        written = paper.title + "".join(authors)
        special += any(c in written for c in "&%_{}$") or not written.isascii()
    assert special >= 50  # the demo has them
    santamaria = next(p for p in papers if "José Santamaría" in names.get(p.id, []))
    assert "José Santamaría" in _read_bibtex(bibtex([(santamaria, names[santamaria.id])]))["author"].split(" and ")


async def test_the_paper_page_offers_both(client):
    from bs4 import BeautifulSoup

    address = "/papers/2006.07357-hindsight-logging-for-model-training"
    page = BeautifulSoup((await client.get(address)).text, "html.parser")
    assert [a["href"] for a in page.select(".actions .cite a")] == [
        "/papers/2006.07357.bib", "/papers/2006.07357.ris", "/papers/2006.07357.json"
    ]  # fmt: skip
    markdown = (await client.get(address + ".md")).text
    assert ("- Cite: [BibTeX](/papers/2006.07357.bib), [RIS](/papers/2006.07357.ris), "
            "[CSL-JSON](/papers/2006.07357.json)") in markdown  # fmt: skip


# The parts of CSL 1.0.2's data schema (csl-data.json) that our items use; the schema file itself ships in no package
# this machine can install, so its rules for these fields are written out here.
_NAME = {"type": "object", "additionalProperties": False, "properties": {
    k: {"type": "string"}
    for k in ("family", "given", "non-dropping-particle", "dropping-particle", "suffix", "literal")
}}  # fmt: skip
CSL_ITEMS = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["id", "type"],
        "additionalProperties": False,
        "properties": {
            "id": {"type": ["string", "number"]},
            "type": {"enum": ["article", "article-journal", "paper-conference", "report", "thesis", "book"]},
            "author": {"type": "array", "items": _NAME},
            "issued": {"type": "object", "additionalProperties": False, "properties": {"date-parts": {
                "type": "array", "minItems": 1, "maxItems": 2,
                "items": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": ["string", "number"]}}}}},
            **{k: {"type": "string"} for k in ("title", "abstract", "DOI", "URL", "publisher", "number",
                                                "container-title", "keyword")},
        },
    },
}  # fmt: skip


def _bibliography(text: str) -> list[str]:
    """The items as a CSL processor formats them (citeproc-py, Harvard style); any variable it does not know fails."""
    import json
    import warnings

    from citeproc import Citation, CitationItem, CitationStylesBibliography, CitationStylesStyle, formatter
    from citeproc.source.json import CiteProcJSON

    items = json.loads(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        source = CiteProcJSON(items)
    style_file = next((Path(__import__("citeproc").__file__).parent / "data" / "styles").glob("harvard*.csl"))
    bibliography = CitationStylesBibliography(CitationStylesStyle(str(style_file), validate=False), source,
                                              formatter.plain)  # fmt: skip
    for item in items:
        bibliography.register(Citation([CitationItem(item["id"])]))
    return [str(entry) for entry in bibliography.bibliography()]


async def test_csl_json_fits_the_schema_and_a_csl_processor_formats_it(client, demo):
    import json

    import jsonschema

    response = await client.get("/papers/2006.07357v2.json")
    assert response.headers["content-type"].startswith("application/vnd.citationstyles.csl+json")
    (item,) = items = response.json()
    jsonschema.validate(items, CSL_ITEMS)
    assert (item["id"], item["type"]) == ("2006.07357", "article")
    assert item["title"] == "Hindsight Logging for Model Training"
    assert [" ".join((a["given"], a["family"])) for a in item["author"]] == AUTHORS
    assert item["issued"]["date-parts"][0][0] == 2020
    assert (item["number"], item["publisher"]) == ("arXiv:2006.07357", "arXiv")
    assert item["DOI"] == "10.48550/arXiv.2006.07357"
    (formatted,) = _bibliography(response.text)
    assert formatted.startswith("Garcia, R. et al. (2020)") or formatted.startswith("Garcia, R., Liu, E."), formatted
    assert "Hindsight Logging for Model Training" in formatted
    # every demo paper: valid, formatted, names and titles kept as written (no LaTeX in CSL)
    archive = demo.archive()
    papers = list(archive.catalog.iter_papers())
    names = archive.author_names([p.id for p in papers])
    text = csl_json([(p, names.get(p.id, [])) for p in papers])
    every = json.loads(text)
    jsonschema.validate(every, CSL_ITEMS)
    assert [i["title"] for i in every] == [p.title for p in papers]
    santamaria = next(i for i in every if {"given": "José", "family": "Santamaría"} in i.get("author", []))
    assert santamaria
    assert len(_bibliography(text)) == len(papers)


async def test_an_answers_sources_export_in_one_file(client):
    ids = "2006.07357,1802.05365,9999.99999,2004.07180v1"
    response = await client.get(f"/cite.bib?ids={ids}")
    assert response.status_code == 200
    entries = bibtexparser.parse_string(response.text).entries
    assert [e["eprint"] for e in entries] == ["2006.07357", "1802.05365", "2004.07180"]
    assert len({e.key for e in entries}) == 3
    records = rispy.loads((await client.get(f"/cite.ris?ids={ids}")).text)
    assert [r["urls"] for r in records] == [[f"https://arxiv.org/abs/{i}"] for i in ("2006.07357", "1802.05365",
                                                                                      "2004.07180")]  # fmt: skip
    assert [i["id"] for i in (await client.get(f"/cite.json?ids={ids}")).json()] == ["2006.07357", "1802.05365",
                                                                                     "2004.07180"]  # fmt: skip
    assert (await client.get("/cite.bib?ids=9999.99999")).status_code == 404
    assert (await client.get("/cite.exe?ids=2006.07357")).status_code == 404


def test_a_title_or_a_name_cannot_write_fields_of_its_own():
    """Math in a title is kept as LaTeX only when its braces balance: `$x}, url = {...}, note = {$` once closed the
    title and wrote a `url` of the attacker's into every export (/papers/<id>.bib, /cite.bib, a thread's .bib)."""
    from retrieval.scholarly.models import Paper

    hostile = "Math $x}, url = {https://evil.example/p}, note = {$ end"
    name = "Eve $}, url = {https://evil.example/a}, x = {$ Doe"
    paper = Paper(id="2001.00001", arxiv_id="2001.00001", title=hostile, abstract="")
    written = bibtex([(paper, [name, "Ana Lima"])])
    entry = _read_bibtex(written)
    assert entry.fields_dict.keys() == {"title", "author", "eprint", "archivePrefix", "url", "doi"}
    assert entry["url"] == "https://arxiv.org/abs/2001.00001" and "evil" not in written.split("url = ")[-1]
    assert entry["title"] == hostile and entry["author"].split(" and ") == [name, "Ana Lima"]
    for line in written.splitlines()[1:-1]:  # each field's braces balance, counted as BibTeX counts them
        depth = 0
        for ch in line:
            depth += {"{": 1, "}": -1}.get(ch, 0)
            assert depth >= 0, line
        assert depth == 0, line
    fine = Paper(id="2001.00002", arxiv_id="2001.00002", title="Bounds $\\frac{1}{2}$ and $x^{2}$", abstract="")
    assert "$\\frac{1}{2}$ and $x^{2}$" in bibtex([(fine, [])])  # balanced math stays LaTeX
