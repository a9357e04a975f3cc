"""Queries that name people, on the demo corpus: the person is found (full name, initials, accents and case
ignored), namesakes stay apart, and their papers come first in the library's search, the JSON API and the
search page."""

from __future__ import annotations

import httpx
import pytest
from bs4 import BeautifulSoup

from retrieval.search.people_first import named_people
from retrieval.vectors.store import Filters

HINDSIGHT = "2006.07357"  # by Rolando Garcia, ..., Bobby Yan, ..., Joseph M. Hellerstein, Koushik Sen


def _ids(archive, name: str) -> tuple[int, ...]:
    return tuple(sorted(c.researcher.id for c in archive.find_researchers(name) if c.researcher.name == name))


@pytest.mark.parametrize(
    ("query", "name", "topic"),
    [
        ("Bobby Yan", "Bobby Yan", ""),
        ("papers by Joseph M. Hellerstein", "Joseph M. Hellerstein", ""),
        ("J. M. Hellerstein", "Joseph M. Hellerstein", ""),
        ("JM Hellerstein on provenance", "Joseph M. Hellerstein", "provenance"),
        ("Hellerstein, J. M.", "Joseph M. Hellerstein", ""),
        ("papers by Joseph Hellerstein", "Joseph M. Hellerstein", ""),  # the middle initial left out
        ("Joseph Hellerstein on provenance", "Joseph M. Hellerstein", "provenance"),
        ("what does jose santamaria work on?", "José Santamaría", ""),
        ("Bobby Yan's work on model training", "Bobby Yan", "model training"),
        ("BOBBY YAN: logging", "Bobby Yan", "logging"),
    ],
)
def test_the_person_a_query_names_and_what_it_asks(demo, query, name, topic):
    named = named_people(demo.catalog(), query)
    assert named is not None and named.ids == _ids(demo.archive(), name)
    assert named.topic == topic


@pytest.mark.parametrize(
    "query", ["hindsight logging for model training", "A survey of retrieval", "GPT Models", "Graph Neural Networks"]
)
def test_topic_queries_name_nobody(demo, query):
    assert named_people(demo.catalog(), query) is None


def test_initials_keep_only_compatible_given_names(demo):
    named = named_people(demo.catalog(), "J. E. Gonzalez")
    assert named is not None and named.ids == _ids(demo.archive(), "Joseph E. Gonzalez")  # not Joseph M. Hellerstein


def test_their_papers_come_first_then_topic_matches(demo):
    archive = demo.archive()
    for query in ("Bobby Yan", "papers by Joseph M. Hellerstein", "what does Bobby Yan work on"):
        result = archive.search(query, limit=10)
        assert HINDSIGHT in [h.paper.id for h in result.hits[:3]], query
        assert result.hits[0].kind == "author" and [h.rank for h in result.hits] == list(range(1, 11))
    plain = archive.search("hindsight logging", limit=10)
    assert plain.people == () and all(h.kind == "abstract" for h in plain.hits)


def test_a_question_naming_only_people_finds_no_other_paper_through_a_cited_name(demo):
    """Issue 39: "papers by Quoc Le" lists his papers; SPECTER, whose full text cites "Le and Mikolov", is not one
    of them and clears nothing (the full text is not asked when the question only names people)."""
    result = demo.archive().search("papers by Quoc Le", limit=5)
    assert result.people and result.hits[0].kind == "author"
    assert "2004.07180" not in [h.paper.id for h in result.hits if h.clears]
    assert all(h.kind in ("author", "abstract") for h in result.hits)


def test_namesakes_are_separate_people_and_each_ones_papers_come_first(demo):
    archive = demo.archive()
    people = _ids(archive, "Jun Zhao")
    assert len(people) == 3
    result = archive.search("Jun Zhao", limit=10)
    assert result.people == people
    theirs = {p.id for p in archive.newest_papers_of(list(people))}
    assert {h.paper.id for h in result.hits[: len(theirs)]} == theirs
    assert all(h.kind == "author" for h in result.hits[: len(theirs)])


def test_a_two_word_name_also_names_who_has_it_with_middle_names(demo):
    """Issue 39: "papers by Matthew Peters" names Matthew Peters (the literature graph's paper) and Matthew E.
    Peters (ELMo's), two people to the catalog: both papers come first, each person kept apart."""
    archive = demo.archive()
    people = (*_ids(archive, "Matthew Peters"), *_ids(archive, "Matthew E. Peters"))
    assert len(people) == 2
    for query in ("papers by Matthew Peters", "papers by matthew peters"):
        result = archive.search(query, limit=5)
        assert result.people == tuple(sorted(people)), query
        assert {h.paper.id for h in result.hits[:2]} == {"1805.02262", "1802.05365"}
        assert all(h.kind == "author" and h.clears for h in result.hits[:2])
    named = named_people(demo.catalog(), "Matthew E. Peters")  # the longer name names only its own
    assert named is not None and named.ids == _ids(archive, "Matthew E. Peters")


def test_filters_still_apply_to_the_persons_papers(demo):
    result = demo.archive().search("Bobby Yan", Filters(categories=("math.AG",)), limit=10)
    assert HINDSIGHT not in [h.paper.id for h in result.hits]
    assert all("math.AG" in h.paper.categories for h in result.hits)


@pytest.fixture(scope="module")
def client(demo):
    from scholarloom.app import create_app

    return httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(demo, with_chat=False)), base_url="http://t")


async def test_the_api_and_the_search_page_put_the_person_first(client, demo):
    for query in ("Bobby Yan", "papers by Joseph M. Hellerstein"):
        found = (await client.get("/api/search", params={"q": query, "limit": 10})).json()
        assert HINDSIGHT in [hit["id"] for hit in found["hits"][:3]], query
        assert found["hits"][0]["matched"] == "author" and found["researchers"][0]["url"].startswith("/researchers/")
    page = BeautifulSoup((await client.get("/search", params={"q": "papers by Bobby Yan"})).text, "html.parser")
    people = page.find("h2", string="Researchers").find_next("ul").find_all("a")
    assert people[0].get_text(strip=True) == "Bobby Yan" and people[0]["href"].startswith("/researchers/")
    first = page.find("h2", string="Papers").find_next("ol").find("a")
    assert first["href"].startswith(f"/papers/{HINDSIGHT}")
