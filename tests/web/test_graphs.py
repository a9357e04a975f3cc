"""Issue 40: the citation neighbourhood and the co-author network drawn as SVG on the server: every node a link
named by its whole title, titles escaped, a text alternative and a legend, and a bounded drawing however large the
graph. The pages' pictures are checked on the demo; axe-core checks them in tests/browser/test_pages_browser.py."""

from xml.etree import ElementTree

import httpx
import pytest
from bs4 import BeautifulSoup

from pages.graphs import MAX_COAUTHORS, MAX_SIDE, Person, Work, coauthor_network, paper_neighbourhood
from web.http import WebDeps
from web.render import Renderer
from web.routes import make_router

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = 'Tricks <script>alert(1)</script> & "quotes" <a href="javascript:x">'


def _parsed(svg: str) -> ElementTree.Element:
    return ElementTree.fromstring(svg)  # well-formed XML, or this fails


def test_titles_are_escaped_and_every_node_is_a_named_link():
    cites = [Work(HOSTILE, "/papers/2001.00001", "held", 40), Work("Not here", "/papers/2001.00002", "not-held"),
             Work("A DOI", "https://doi.org/10.1/x", "leaves"), Work("Listed by title only", None, "not-held")]
    graph = paper_neighbourhood("The <b>paper</b>", cites, [Work("A citer", "/papers/2101.00001", "held")], 4, 1)
    svg = graph.svg()
    assert "<script" not in svg and "<b>" not in svg and 'href="javascript' not in svg
    root = _parsed(svg)
    assert root.get("role") == "group" and root.get("aria-label") == "Citation neighbourhood of The <b>paper</b>"
    assert root.find(f"{SVG}title").text == "Citation neighbourhood of The <b>paper</b>"
    assert "cites 4 works; of the 4 drawn, 1 is in this archive" in root.find(f"{SVG}desc").text
    links = root.iter(f"{SVG}a")
    named = {a.get("href"): a.get("aria-label") for a in links}
    assert named == {
        "/papers/2001.00001": f"{HOSTILE} (cited by this paper; in this archive)",
        "/papers/2001.00002": "Not here (cited by this paper; not held here)",
        "https://doi.org/10.1/x": "A DOI (cited by this paper; outside ScholarLoom (the link leaves))",
        "/papers/2101.00001": "A citer (cites this paper; in this archive)",
    }
    leaving = [a for a in root.iter(f"{SVG}a") if a.get("href").startswith("https://")]
    assert [a.get("rel") for a in leaving] == ["external noopener"]
    classes = [c.get("class") for c in root.iter(f"{SVG}circle")]
    assert {"node held", "node not-held", "node leaves", "node center"} <= set(classes)
    legend = [t.text for t in root.find(f"{SVG}g[@class='legend']").iter(f"{SVG}text")]
    assert legend == ["this paper", "in this archive", "not held here", "leaves ScholarLoom"]
    widths = [float(c.get("r")) for c in root.iter(f"{SVG}circle") if c.get("class") == "node held"]
    assert widths[0] > widths[1]  # sized by citations: 40 against none


def test_a_huge_graph_is_drawn_within_bounds_and_says_how_many_more():
    cites = [Work(f"Cited work {n}", f"/papers/1{n:03d}.00001", "held", n) for n in range(500)]
    citing = [Work(f"Citing paper {n}", f"/papers/2{n:03d}.00001", "held") for n in range(300)]
    svg = paper_neighbourhood("Hub", cites, citing, 5000, 3000).svg()
    root = _parsed(svg)
    assert len(list(root.iter(f"{SVG}a"))) == 2 * MAX_SIDE and len(svg) < 40_000
    notes = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "note"]
    assert "+ 4975 more (the lists below)" in notes and "+ 2975 more (the lists below)" in notes
    assert float(root.get("viewBox").split()[3]) < 1000  # the picture's height stays bounded too
    people = [Person(n, f"Person {n}", f"/researchers/{n}-person", 100 - n) for n in range(1, 100)]
    links = [(1, 2, 3), (2, 50, 1)]  # 50 is not drawn: its line is not either
    network = _parsed(coauthor_network("Hub <i>", people, links, 99).svg())
    assert len(list(network.iter(f"{SVG}a"))) == MAX_COAUTHORS
    assert len([line for line in network.iter(f"{SVG}line") if "among" in line.get("class")]) == 1
    assert "+ 79 more co-authors in the list below" in [t.text for t in network.iter(f"{SVG}text")]
    assert network.get("aria-label") == "Co-author network of Hub <i>"


def test_no_graph_for_a_paper_with_no_citations_or_a_researcher_alone():
    assert paper_neighbourhood("Alone", [], [], 0, 0) is None and coauthor_network("Solo", [], [], 0) is None


@pytest.fixture(scope="module")
def client(demo):
    from fastapi import FastAPI

    app = FastAPI()
    app.include_router(make_router(WebDeps(demo.archive(), Renderer("http://test"))))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


async def test_the_paper_page_draws_its_neighbourhood_with_the_lists_links(client):
    page = BeautifulSoup((await client.get("/papers/2005.02877", follow_redirects=True)).text, "html.parser")
    figure = page.select_one("#neighbourhood figure")
    drawn = [a["href"] for a in figure.select("svg a")]
    listed = [a["href"] for a in page.select("#references ol.refs a")]
    assert drawn and drawn == listed[: len(drawn)]  # the same works, the same addresses, in the list's order
    # the first 25 of its 28 references are drawn; 20 of those have an address (the others are listed by title only)
    assert len(drawn) == 20 and len(figure.select("svg circle.node")) == 1 + 25 + 4  # and the legend's four
    assert "TripPy" in figure.figcaption.text and "cites 28 works" in figure.figcaption.text
    held = [a["href"] for a in figure.select("svg a") if a.select_one("circle.held")]
    assert held and all("-" in href.rsplit("/", 1)[-1] for href in held)  # held: its page, with its title


async def test_the_researcher_page_draws_the_coauthor_network(client):
    page = await client.get("/papers/2006.07357", follow_redirects=True)
    first_author = BeautifulSoup(page.text, "html.parser").select_one(".authors .author > a")["href"]
    researcher = BeautifulSoup((await client.get(first_author)).text, "html.parser")
    figure = researcher.select_one("#network figure")
    drawn = [a["href"] for a in figure.select("svg a")]
    listed = [a["href"] for a in researcher.select("#network ul.people a")]
    assert drawn == listed and len(drawn) >= 7  # Hindsight logging has eight authors
    assert "Co-author network of Rolando Garcia" == figure.svg["aria-label"]
    assert "pairs of them who also wrote together" in figure.figcaption.text
