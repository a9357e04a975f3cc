"""Researcher and institution pages through the ASGI app, HTML parsed for real, markdown for agents."""

import json

import pytest
from bs4 import BeautifulSoup

from retrieval.scholarly.researchers import find_researchers
from tests.web.test_paper_page import client  # noqa: F401  (the module's app client fixture)


@pytest.fixture(scope="module")
def bobby(demo) -> str:
    (found,) = find_researchers(demo.catalog(), "Bobby Yan")
    return f"/researchers/{found.researcher.id}-bobby-yan"


async def test_bobby_yan_page(client, bobby):  # noqa: F811
    response = await client.get(bobby)
    assert response.status_code == 200 and "Content-Security-Policy" in response.headers
    soup = BeautifulSoup(response.text, "html.parser")
    assert soup.h1.get_text(" ", strip=True).startswith("Bobby Yan")
    assert soup.select_one("h1 .badge").get_text() == "1 paper here"
    positions = dict(zip([dt.get_text() for dt in soup.select("dl.positions dt")],
                         [dd.get_text() for dd in soup.select("dl.positions dd")], strict=True))  # fmt: skip
    assert positions["Middle author"] == "1" and positions["First author"] == "0"
    field = soup.select_one("ul.fields a")
    assert field.get_text() == "cs.DC" and field["href"] == f"{bobby}?category=cs.DC"
    assert len(soup.select("ul.people li")) == 7
    blocks = [json.loads(s.string) for s in soup.select('script[type="application/ld+json"]')]
    crumbs = next(b for b in blocks if b["@type"] == "BreadcrumbList")
    assert [i["name"] for i in crumbs["itemListElement"]] == ["ScholarLoom", "Researchers", "Bobby Yan"]
    assert any(b["@type"] == "Person" and b["name"] == "Bobby Yan" for b in blocks)
    assert soup.select_one('link[rel="canonical"]')["href"] == f"http://test{bobby}"


async def test_researcher_addresses(client, bobby):  # noqa: F811
    number = bobby.split("/")[-1].split("-")[0]
    for address in (f"/researchers/{number}", f"/researchers/{number}-wrong-name"):
        response = await client.get(address)
        assert response.status_code == 301 and response.headers["location"] == bobby
    filtered = await client.get(f"/researchers/{number}?category=cs.DC")
    assert filtered.headers["location"] == f"{bobby}?category=cs.DC"
    markdown = await client.get(bobby, headers={"accept": "text/markdown"})
    assert markdown.headers["content-type"].startswith("text/markdown") and markdown.text.startswith("# Bobby Yan")
    assert (await client.get(f"{bobby}.md")).text == markdown.text
    missing = await client.get("/researchers/987654321")
    assert missing.status_code == 404


async def test_institution_addresses_and_page(client):  # noqa: F811
    by_ror = await client.get("/institutions/042nb2s44")
    canonical = by_ror.headers["location"]
    assert by_ror.status_code == 301 and canonical.endswith("-massachusetts-institute-of-technology")
    assert (await client.get("/institutions/MIT")).headers["location"] == canonical
    page = await client.get(canonical)
    soup = BeautifulSoup(page.text, "html.parser")
    assert soup.h1.get_text(" ", strip=True).startswith("Massachusetts Institute of Technology")
    assert soup.select_one('a[href="https://ror.org/042nb2s44"]') is not None
    assert (await client.get("/institutions/not-a-real-place-at-all")).status_code == 404
