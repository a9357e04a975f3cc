"""The paper page through the ASGI app: canonical addresses, HTML parsed for real, markdown for agents."""

import json
import re

import httpx
import pytest
from bs4 import BeautifulSoup

from retrieval.archive import Archive
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Citation, Paper
from web.http import WebDeps
from pages.paper import paper_page
from web.render import Renderer
from web.routes import make_router

CANONICAL = "/papers/2006.07357-hindsight-logging-for-model-training"
AUTHORS = [
    "Rolando Garcia", "Eric Liu", "Vikram Sreekanti", "Bobby Yan", "Anusha Dandamudi",
    "Joseph E. Gonzalez", "Joseph M. Hellerstein", "Koushik Sen",
]  # fmt: skip


@pytest.fixture(scope="module")
def client(demo):
    from fastapi import FastAPI

    app = FastAPI()
    deps = WebDeps(demo.archive(), Renderer("http://test"))
    app.include_router(make_router(deps))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


@pytest.mark.parametrize("address", ["/papers/2006.07357", "/papers/2006.07357v2", "/papers/2006.07357-wrong-slug"])
async def test_other_addresses_redirect_to_canonical(client, address):
    response = await client.get(address)
    assert response.status_code == 301 and response.headers["location"] == CANONICAL


async def test_paper_html(client):
    response = await client.get(CANONICAL)
    assert response.status_code == 200
    assert "default-src 'self'" in response.headers["content-security-policy"]
    soup = BeautifulSoup(response.text, "html.parser")
    assert soup.h1.get_text(strip=True) == "Hindsight Logging for Model Training"
    authors = soup.select(".authors .author > a")
    assert [a.get_text(strip=True) for a in authors] == AUTHORS  # each linked to their researcher page
    assert all(re.fullmatch(r"/researchers/\d+-[a-z0-9-]+", a["href"]) for a in authors)
    assert soup.find("link", rel="canonical")["href"] == "http://test" + CANONICAL
    assert "Submitted 12 June 2020" in soup.select_one(".dates").get_text(" ", strip=True)
    versions = soup.select(".dates .versions a")  # 2006.07357 is at v2 on arXiv
    assert [(a.get_text(), a["href"]) for a in versions] == [(f"v{n}", f"https://arxiv.org/abs/2006.07357v{n}")
                                                             for n in (1, 2)]  # fmt: skip
    assert soup.select_one('a[href="/chat?paper=2006.07357"]').get_text() == "Chat about this paper"
    blocks = [json.loads(s.string) for s in soup.find_all("script", type="application/ld+json")]
    assert {b["@type"] for b in blocks} == {"ScholarlyArticle", "BreadcrumbList"}
    article = next(b for b in blocks if b["@type"] == "ScholarlyArticle")
    assert [a["name"] for a in article["author"]] == AUTHORS


async def test_paper_markdown_by_accept_and_suffix(client, demo):
    by_accept = await client.get(CANONICAL, headers={"Accept": "text/markdown"})
    by_suffix = await client.get(CANONICAL + ".md")
    assert by_accept.headers["content-type"].startswith("text/markdown")
    assert by_accept.text == by_suffix.text == paper_page(demo.archive(), "2006.07357").to_markdown()
    assert by_accept.text.startswith("# Hindsight Logging for Model Training")
    byline = next(line for line in by_accept.text.splitlines() if line.startswith("**Authors:**"))
    assert re.findall(r"\[([^\]]+)\]\(/researchers/", byline) == AUTHORS
    versions = "[v1](https://arxiv.org/abs/2006.07357v1), [v2](https://arxiv.org/abs/2006.07357v2)"
    assert f"- arXiv versions: {versions}" in by_accept.text.splitlines()


@pytest.mark.parametrize("address", ["/papers/9999.99999", "/papers/not-an-id", "/papers/..%2F..%2Fetc%2Fpasswd"])
async def test_unknown_paper_is_404_page(client, address):
    response = await client.get(address)
    assert response.status_code == 404
    soup = BeautifulSoup(response.text, "html.parser")
    assert soup.h1.get_text() == "Not found" and "may not be harvested yet" in soup.get_text()


async def test_search_page(client):
    response = await client.get("/search", params={"q": "replay log statements from checkpoints after training"})
    soup = BeautifulSoup(response.text, "html.parser")
    assert soup.select("ol.results a.title")[0]["href"] == CANONICAL


HOSTILE = "<img src=x onerror=alert(1)></script><script>alert(2)</script>"


@pytest.fixture
async def small_client(tmp_path):
    """A catalog of two hand-made papers: a hostile title and an old-style arXiv id."""
    from fastapi import FastAPI

    catalog = Catalog(f"sqlite:///{tmp_path / 'x.db'}")
    with catalog.session() as session:
        session.add(
            Paper(
                id="2401.00001",
                arxiv_id="2401.00001",
                title=HOSTILE,
                abstract=HOSTILE,
                categories=["cs.CR"],
                doi="10.1/x) [evil](https://evil.example",
            )
        )
        session.flush()
        # a reference title read from a PDF's list (`ingest.references`): the PDF's words, untrusted
        session.add(Citation(citing_id="2401.00001", cited_key="arxiv:2401.99999", cited_arxiv_id="2401.99999",
                             cited_title=HOSTILE))  # fmt: skip
        session.add(Citation(citing_id="2401.00001", cited_key="doi:10.1/y", cited_doi="10.1/y",
                             cited_title="A work known by its DOI"))  # fmt: skip
        session.add(
            Paper(
                id="astro-ph/9901001", arxiv_id="astro-ph/9901001", title="Dark Matter Halos", categories=["astro-ph"]
            )
        )
        session.commit()
    app = FastAPI()
    app.include_router(make_router(WebDeps(Archive(catalog, None, None), Renderer("http://test"))))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        yield client
    catalog.close()


async def test_old_style_id_redirects_to_canonical(small_client):
    response = await small_client.get("/papers/astro-ph/9901001")
    assert response.status_code == 301
    assert response.headers["location"] == "/papers/astro-ph/9901001-dark-matter-halos"
    page = await small_client.get(response.headers["location"])
    assert page.status_code == 200 and "Dark Matter Halos" in page.text


async def test_hostile_title_renders_as_text(small_client):
    page = await small_client.get("/papers/2401.00001", follow_redirects=True)
    markdown = await small_client.get("/papers/2401.00001", follow_redirects=True, headers={"Accept": "text/markdown"})
    soup = BeautifulSoup(page.text, "html.parser")
    assert soup.find("img") is None
    assert all(s.get("type") == "application/ld+json" for s in soup.find_all("script"))
    assert soup.h1.get_text() == HOSTILE
    refs = soup.select("ol.refs li")  # its references' titles too; one not held here, one known by its DOI only
    assert refs[0].get_text(strip=True) == HOSTILE and refs[0].a["href"] == "/papers/2401.99999"
    assert refs[1].a["href"] == "https://doi.org/10.1/y" and refs[1].select_one(".leaves").get_text() == (
        "(leaves ScholarLoom)")  # fmt: skip
    assert "<img" not in markdown.text and "&lt;img" in markdown.text
    # A hostile DOI stays inside its own link, in the markdown and in the HTML.
    assert not re.search(r"(?<!\\)\]\(https://evil", markdown.text)  # only escaped brackets before it
    assert "- [DOI](https://doi.org/10.1/x%29%20%5Bevil%5D%28https://evil.example)" in markdown.text
    assert all(not a["href"].startswith("https://evil") for a in soup.find_all("a"))


async def test_openalex_paper_page(client):
    response = await client.get("/papers/openalex:W3140854437", follow_redirects=True)
    assert response.status_code == 200
    assert str(response.url).endswith(
        "/papers/openalex:W3140854437-review-of-deep-learning-concepts-cnn-architectures-challenges"
    )
    soup = BeautifulSoup(response.text, "html.parser")
    assert soup.select_one(".dates").get_text(" ", strip=True).startswith("Published 2021")
    assert soup.select_one('a[href="https://doi.org/10.1186/s40537-021-00444-8"]').get_text() == "DOI"
    assert soup.select("ol.refs li"), "its OpenAlex references are listed"


async def test_the_paper_page_links_its_authors_and_the_papers_citing_it(client, demo):
    """Woven (issue 18): authors link to their researcher pages in HTML and markdown; the papers of the archive
    that cite a paper are listed, linked, on its page."""
    from sqlalchemy import func
    from sqlmodel import select


    markdown = (await client.get(CANONICAL + ".md")).text
    byline = next(line for line in markdown.splitlines() if line.startswith("**Authors:**"))
    assert len(re.findall(r"\]\(/researchers/\d+-[a-z0-9-]+\)", byline)) == len(AUTHORS)
    with demo.catalog().session() as session:  # the demo paper most cited inside the archive
        cited, count = session.exec(
            select(Citation.cited_id, func.count(func.distinct(Citation.citing_id)))
            .where(Citation.cited_id.is_not(None)).group_by(Citation.cited_id)
            .order_by(func.count(func.distinct(Citation.citing_id)).desc(), Citation.cited_id)
        ).first()  # fmt: skip
        citing = set(session.exec(select(Citation.citing_id).where(Citation.cited_id == cited)).all())
    page = await client.get(f"/papers/{cited}", follow_redirects=True)
    soup = BeautifulSoup(page.text, "html.parser")
    heading = next(h for h in soup.find_all("h2") if h.get_text().startswith("Cited by"))
    assert heading.get_text(strip=True) == f"Cited by ({count} in this archive)"
    listed = [a["href"] for a in soup.select("ul.citing li a")]
    assert len(listed) == min(count, 20) and {h.split("/")[2].split("-")[0] for h in listed} <= citing
    as_markdown = (await client.get(f"/papers/{cited}", headers={"Accept": "text/markdown"},
                                    follow_redirects=True)).text  # fmt: skip
    assert f"## Cited by ({count} in this archive)" in as_markdown and all(h in as_markdown for h in listed)


async def test_similar_papers_come_from_the_stored_vector(client, demo, embedder, monkeypatch):
    """The paper page lists its nearest neighbours (HTML and markdown), found with the vector its title and abstract
    were indexed with: viewing a page embeds nothing."""
    from ingest.writer import abstract_reading, mean_vector, window_texts

    paper = demo.catalog().papers(["2006.07357"])["2006.07357"]
    stored = demo.index().abstract_vector(paper.id)
    reading = abstract_reading(paper, embedder.pieces)
    assert reading.windows  # the abstract point's vector is its windows' mean
    fresh = mean_vector(list(embedder.dense(window_texts(paper, reading))))
    assert stored is not None and float(stored @ fresh) > 0.999  # the same texts, the same encoder

    def no_embedding(*_args, **_kwargs):
        raise AssertionError("a page view embedded a text")

    monkeypatch.setattr(type(embedder), "dense", no_embedding)
    expected = [p.id for p, _ in demo.archive().similar(paper.id, 5)]
    soup = BeautifulSoup((await client.get(CANONICAL)).text, "html.parser")
    listed = [a["href"].split("/")[2].split("-")[0] for a in soup.select("ul.similar li a")]
    assert listed == expected and len(listed) == 5 and paper.id not in listed
    markdown = (await client.get(CANONICAL + ".md")).text
    section = markdown.split("## Similar papers", 1)[1]
    assert re.findall(r"\]\(/papers/([0-9.]+)-", section) == expected


async def test_a_papers_references_read_as_titles_from_its_own_pdf(client):
    """Issue 40: TripPy's page lists every entry of its PDF's reference list (28), in the list's order, by title
    with what the list says besides ("Budzianowski et al., 2018"), not as a bare "arXiv:1810.00278"; an entry with
    no id is listed, unlinked."""
    page = await client.get("/papers/2005.02877", follow_redirects=True)
    items = BeautifulSoup(page.text, "html.parser").select("ol.refs li")
    assert len(items) == 28
    linked = [li for li in items if li.a is not None]
    # an arXiv paper not held links to our own page for its id (where a signed-in reader fetches it), never away
    assert len(linked) == 22 and all(li.a["href"].startswith("/papers/") for li in linked)
    assert linked[0].a["href"] == "/papers/1810.00278" and not page.text.count('class="leaves"')
    labels = [li.get_text(" ", strip=True) for li in items]
    assert not [label for label in labels if label.startswith("arXiv:")], labels  # the issue asks 20 of 22 at least
    first, henderson = items[0], labels[5]
    assert first.a.get_text().startswith("MultiWOZ - a large-scale multi-domain Wizard-of-Oz dataset for task-oriented")
    assert first.select_one(".ref-detail").get_text() == "Budzianowski et al., 2018"
    assert items[5].a is None and henderson.startswith("The second dialog state tracking challenge Henderson et al.")
    source = first.select_one("details.ref-raw")  # where the title came from, and the entry as printed
    assert source.summary.get_text() == "Source" and "Title from the paper's own reference list." in source.text
    assert "As printed: Paweł Budzianowski, Tsung-Hsien Wen" in source.text
    assert "Henderson et al., 2014. In Proceedings of the 15th annual meeting" in henderson
    markdown = (await client.get("/papers/2005.02877", headers={"Accept": "text/markdown"},
                                 follow_redirects=True)).text  # fmt: skip
    assert "- The second dialog state tracking challenge (Henderson et al., 2014. In Proceedings" in markdown
