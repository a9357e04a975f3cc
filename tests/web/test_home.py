"""The home page, /papers by category, About / Privacy / Developers, and the header and footer every page shares;
parsed as HTML, and read as markdown too."""

from __future__ import annotations

import httpx
import pytest
from bs4 import BeautifulSoup
from defusedxml import ElementTree


@pytest.fixture(scope="module")
def client(demo):
    from scholarloom.app import create_app

    return httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(demo, with_chat=False)), base_url="http://t")


async def _soup(client, path: str) -> BeautifulSoup:
    response = await client.get(path)
    assert response.status_code == 200, path
    return BeautifulSoup(response.text, "html.parser")


async def test_home_shows_the_latest_papers_as_rss_does_and_the_ways_in(client, demo):
    soup = await _soup(client, "/")
    latest = [a["href"] for a in soup.select("section.latest ol li a.title")]
    feed = ElementTree.fromstring((await client.get("/rss/latest.xml")).content)
    in_feed = [link.text.removeprefix(demo.base_url) for link in feed.iter("link")][1:]  # (the channel's own first)
    assert len(latest) >= 10 and latest == in_feed[: len(latest)]
    counts = demo.catalog().counts()
    hero = soup.select_one("section.hero").get_text(" ", strip=True)
    assert f"{counts['papers']:,} papers" in hero and f"{counts['researchers']:,} researchers" in hero
    links = [a["href"] for a in soup.select("main a")]
    categories = [h for h in links if h.startswith("/papers?category=")]
    researchers = [h for h in links if h.startswith("/researchers/")]
    institutions = [h for h in links if h.startswith("/institutions/")]
    assert len(categories) >= 5 and len(researchers) >= 5 and len(institutions) >= 5
    assert {"/researchers", "/institutions", "/papers"} <= set(links)
    markdown = (await client.get("/", headers={"Accept": "text/markdown"})).text
    assert "## Latest papers" in markdown and all(f"]({path})" in markdown for path in latest)
    assert f"]({categories[0]})" in markdown


@pytest.mark.parametrize("path", ["/", "/about", "/papers/2006.07357-hindsight-logging-for-model-training", "/search?q="])
async def test_every_page_has_the_same_header_and_footer(client, path):
    soup = await _soup(client, path)
    header = {a["href"] for a in soup.select("header.site a")}
    assert {"/", "/papers", "/researchers", "/institutions", "/chat"} <= header
    assert soup.select_one('header.site form[role="search"][action="/search"] input[name="q"]') is not None
    footer = {a["href"] for a in soup.select("footer.site a")}
    assert {"/search", "/researchers", "/institutions", "/chat", "/about", "/privacy", "/developers"} <= footer


async def test_papers_by_category_a_page_at_a_time(client, demo):
    category, count = demo.archive().categories(1)[0]
    first = await _soup(client, f"/papers?category={category}")
    second = await _soup(client, f"/papers?category={category}&page=2")
    ids = [[a["href"] for a in page.select("ol.paper-list li a")] for page in (first, second)]
    assert len(ids[0]) == 50 and ids[1] and not set(ids[0]) & set(ids[1])
    papers = demo.archive().papers([href.split("/")[2].split("-")[0] for href in ids[0] + ids[1]])
    assert {p.primary_category for p in papers.values()} == {category}
    assert f"{count:,} papers" in first.select_one("main").get_text(" ", strip=True)
    # The pager's links are cursors (a page a million papers deep is read like the first): "Older" is page 2,
    # and its "Newer" is page 1 again.
    older = first.select_one('a[rel="next"]')["href"]
    assert older == f"/papers?category={category}&after={ids[0][-1].split('/')[2].split('-')[0]}"
    by_cursor = await _soup(client, older)
    assert [a["href"] for a in by_cursor.select("ol.paper-list li a")] == ids[1]
    back = await _soup(client, by_cursor.select_one('a[rel="prev"]')["href"])
    assert [a["href"] for a in back.select("ol.paper-list li a")] == ids[0]
    assert by_cursor.select_one("nav.pager span").get_text().startswith("From ")
    everything = await client.get("/papers.md")
    assert everything.headers["content-type"].startswith("text/markdown")
    assert f"{demo.catalog().counts()['papers']:,} papers, newest first" in everything.text
    odd = await client.get("/papers", params={"category": "<script>"})
    assert odd.status_code == 200 and "<script>" not in odd.text
    for cursor in ("<script>alert(1)</script>", "' OR 1=1 --", "x" * 100):  # a cursor naming no paper: the first page
        odd = await client.get("/papers", params={"after": cursor, "category": category})
        assert odd.status_code == 200 and "<script>alert" not in odd.text and "OR 1=1" not in odd.text
        assert [a["href"] for a in BeautifulSoup(odd.text, "html.parser").select("ol.paper-list li a")] == ids[0]
    assert (await client.get("/papers", params={"before": "x" * 101})).status_code == 422  # longer than any id


async def test_about_privacy_and_developers_and_where_their_links_go(client):
    for path in ("/about", "/privacy", "/developers"):
        soup = await _soup(client, path)
        assert soup.h1.get_text() == path[1:].capitalize()
        assert (await client.get(path + ".md")).text.startswith(f"# {path[1:].capitalize()}")
    developers = await _soup(client, "/developers")
    local = [a["href"] for a in developers.select("main a") if a["href"].startswith("/")]
    assert {"/openapi.json", "/llms.txt", "/rss/latest.xml", "/sitemap.xml"} <= set(local)
    for href in local:
        assert (await client.get(href)).status_code == 200, href


async def test_signed_out_readers_get_a_way_to_sign_in_where_the_chat_dock_is(client):
    for path in ("/", "/papers/2006.07357-hindsight-logging-for-model-training", "/researchers"):
        dock = (await _soup(client, path)).select_one("aside.dock")
        assert dock.select_one('a[href="/chat"]').get_text() == "Sign in to chat" and dock.iframe is None
