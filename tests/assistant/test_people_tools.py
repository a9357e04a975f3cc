"""Researchers, institutions and citations on the demo corpus, through the agent's tools."""

from __future__ import annotations

import re

from assistant.tools import (
    call_tool,
    find_institution,
    find_researcher,
    get_cited_by,
    get_institution,
    get_paper,
    get_references,
    get_researcher,
    similar_papers,
    summarize_institution,
    summarize_researcher,
)
from tests.assistant.test_tools import deps_for


def test_bobby_yan_profile(demo):
    deps = deps_for(demo)
    found = call_tool(find_researcher, deps, {"name": "Bobby Yan"})
    assert not found.failed and len(found.cards) == 1
    card = found.cards[0]
    assert "1 paper" in found.output and "cs.DC (1)" in found.output
    page = call_tool(get_researcher, deps, {"researcher_id": int(card.id)})
    text = page.output
    assert text.startswith("# Bobby Yan") and "**1 paper here**" in text
    assert "Across the 1 of 1 paper where every author was matched" in text
    assert "First 0 · middle 1 · last 0 · sole 0" in text
    assert f"- [cs.DC]({card.path}?category=cs.DC) 1" in text
    coauthors = re.findall(r"^- \[(.+?)\]\(/researchers/\d+-[a-z-]+\): 1 shared paper$", text, re.M)
    assert sorted(coauthors) == sorted(
        ["Rolando Garcia", "Eric Liu", "Vikram Sreekanti", "Anusha Dandamudi", "Joseph E. Gonzalez",
         "Joseph M. Hellerstein", "Koushik Sen"]
    )  # fmt: skip
    assert "[Hindsight Logging for Model Training](/papers/2006.07357-hindsight-logging-for-model-training)" in text
    (network,) = [c for c in page.cards if c.kind == "graph"]  # the page's drawing of the co-authors, as a card
    assert network.path == f"{card.path}#network" and network.title == "Co-author network of Bobby Yan"
    assert "has written with 7 researchers" in network.subtitle
    filtered = call_tool(get_researcher, deps, {"researcher_id": int(card.id), "category": "hep-ph"})
    assert "Hindsight" not in filtered.output.split("## Papers")[1]


def test_mit_by_acronym_name_and_ror_is_one_institution(demo):
    deps = deps_for(demo)
    ids = set()
    for query in ("MIT", "Massachusetts Institute of Technology", "https://ror.org/042nb2s44", "042nb2s44"):
        result = call_tool(find_institution, deps, {"institution": query})
        assert not result.failed and result.cards, query
        ids.add(result.cards[0].id)
    assert len(ids) == 1
    raw = call_tool(
        find_institution, deps, {"institution": "Dept. of EECS, Univ. of California, Berkeley, CA 94720, USA"}
    )
    assert raw.cards[0].title == "University of California, Berkeley"
    unknown = call_tool(find_institution, deps, {"institution": "Institute of Nowhere Studies, Atlantis"})
    assert unknown.output.startswith("Not found") and "Closest candidates:" in unknown.output
    assert not unknown.cards


def test_institution_page_and_summary(demo):
    deps = deps_for(demo)
    page = call_tool(get_institution, deps, {"institution": "MIT"})
    assert page.output.startswith("# Massachusetts Institute of Technology")
    assert "Cambridge, United States" in page.output and "[ROR 042nb2s44](https://ror.org/042nb2s44)" in page.output
    assert "## Parts" in page.output and "## Researchers" in page.output
    summary = call_tool(summarize_institution, deps, {"institution": "MIT"})
    assert summary.output.startswith("Summary from the catalog")
    assert re.search(r"^\[\d+\] ", summary.output, re.M) and summary.cards
    missing = call_tool(get_institution, deps, {"institution": "Institute of Nowhere Studies"})
    assert missing.failed and "closest are" in missing.output


def test_summarize_researcher_is_grounded_material(demo):
    deps = deps_for(demo)
    rid = int(call_tool(find_researcher, deps, {"name": "Bobby Yan"}).cards[0].id)
    result = call_tool(summarize_researcher, deps, {"researcher_id": rid})
    first = result.output.splitlines()[0]
    assert first.startswith("Summary from the catalog") and "Bobby Yan has 1 paper in this archive (2020)" in first
    assert "mostly in cs.DC (1)" in first and "middle author on 1 of the 1 paper whose authors are all matched" in first
    assert "first author on" not in first  # positions he never held are not listed
    assert "[1] Hindsight Logging for Model Training (2020)" in result.output and "abstract: In modern" in result.output


def test_references_of_an_openalex_work_lead_to_their_pages(demo):
    deps = deps_for(demo)
    refs = call_tool(get_references, deps, {"paper_id": "https://openalex.org/W3045921891"})
    assert not refs.failed and refs.output.startswith("References of 2007.14454 (37 known")
    in_archive = [c for c in refs.cards if c.kind == "paper"]
    assert len(in_archive) >= 30 and any(c.id == "openalex:W2741809807" for c in in_archive)
    (graph,) = [c for c in refs.cards if c.kind == "graph"]  # the page's citation neighbourhood, as a card
    assert graph.path.startswith("/papers/2007.14454-") and graph.path.endswith("#neighbourhood")
    assert graph.title.startswith("Citation neighbourhood of ") and "cites 37 works" in graph.subtitle
    # Following one: the cited work opens as its page, with the same citation number.
    target = next(c for c in in_archive if c.id == "openalex:W2741809807")
    page = call_tool(get_paper, deps.after(refs), {"paper_id": target.id})
    assert page.output.startswith(f"Paper [{target.number}]:") and "The state of OA" in page.output


def test_cited_by_comes_from_the_recorded_references(demo):
    deps = deps_for(demo)
    result = call_tool(get_cited_by, deps, {"paper_id": "openalex:W2741809807"})
    assert not result.failed
    assert "2007.14454" in {c.id for c in result.cards}
    assert "Overall it is cited" in result.output  # OpenAlex's cited_by_count, beyond this archive
    none = call_tool(get_cited_by, deps, {"paper_id": "0704.0001"})
    assert none.output.startswith("No paper in this archive cites ")
    assert (
        "cites Calculation of prompt diphoton production cross sections at Tevatron and LHC energies (0704.0001)."
        in (none.output)
    )  # the title first, then the id


def test_similar_papers_are_neighbours_not_the_paper_itself(demo):
    result = call_tool(similar_papers, deps_for(demo), {"paper_id": "2006.07357", "limit": 3})
    assert not result.failed and len(result.cards) == 3
    assert "2006.07357" not in {c.id for c in result.cards}


def test_references_not_held_are_counted_for_the_reader_to_fetch(demo):
    """TripPy's own list names arXiv papers this archive does not hold: the tool says how many, and where to fetch
    them (a button the reader presses; the model never starts a fetch)."""
    refs = call_tool(get_references, deps_for(demo), {"paper_id": "2005.02877"})
    counted = re.search(r"^(\d+) of them have an arXiv id and are not in this archive", refs.output, re.M)
    assert counted and int(counted[1]) == 21, refs.output
