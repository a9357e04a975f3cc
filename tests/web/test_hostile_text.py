"""Names, titles and affiliations from the catalog stay text in HTML, markdown, RSS and sitemaps."""

from __future__ import annotations

from datetime import datetime, timezone

from bs4 import BeautifulSoup
from defusedxml import ElementTree

from ingest.pipeline import load_records
from ingest.report import Summary
from retrieval.archive import Archive
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.records import AuthorRecord, PaperRecord
from retrieval.scholarly.researchers import find_researchers
from web.feeds import rss, sitemap
from pages.people import researcher_page
from web.render import Renderer

EVIL = '<script>alert("x")</script>[click](https://evil.example/)&amp;'


def test_hostile_names_render_as_text(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'c.db'}")
    record = PaperRecord(
        id="2101.00002", arxiv_id="2101.00002", title=f"Title {EVIL}", abstract=f"Abstract {EVIL}",
        authors=[AuthorRecord(name=f"Mallory {EVIL}"), AuthorRecord(name="Alice Ok")],
        categories=["cs.CR"], published=datetime(2021, 1, 1, tzinfo=timezone.utc), source="arxiv_api",
    )  # fmt: skip
    load_records(catalog, "t", [record], Summary())
    (mallory,) = find_researchers(catalog, "Mallory")
    page = researcher_page(Archive(catalog, None, None), mallory.researcher.id)
    html = Renderer("http://test").html("researcher.html", page.meta("http://test"), page=page, matching_note="")
    soup = BeautifulSoup(html, "html.parser")
    assert not soup.select("main script")
    assert all(a["href"].startswith("/") for a in soup.select("main a"))  # only our own pages; no link to evil
    assert soup.h1.get_text().startswith('Mallory <script>alert("x")</script>')
    markdown = page.to_markdown()
    assert "<script>" not in markdown and "\\[click\\](https://evil.example/)" in markdown
    archive = Archive(catalog, None, None)
    for xml in (rss(archive, "http://test"), sitemap(archive, "http://test")):
        ElementTree.fromstring(xml.encode())  # still well-formed XML
    item = ElementTree.fromstring(rss(archive, "http://test").encode()).find("./channel/item")
    assert item.findtext("title") == f"Title {EVIL}"  # the text survives as text, escaped once
    # A reader decodes the XML, then renders <description> as HTML: what it renders must hold no element at all,
    # and read back as the abstract's own text.
    rendered = BeautifulSoup(item.findtext("description"), "html.parser")
    assert rendered.find() is None and f"Abstract {EVIL}" in rendered.get_text()
    catalog.close()
