"""Sitemap, RSS, llms.txt and the JSON API (with a property-based run against its OpenAPI description)."""

from __future__ import annotations

import httpx
import pytest
import schemathesis
from defusedxml import ElementTree
from hypothesis import HealthCheck, settings

from web.feeds import sitemap, sitemap_part

SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
CANONICAL = "/papers/2006.07357-hindsight-logging-for-model-training"


@pytest.fixture(scope="module")
def app(demo):
    from scholarloom.app import create_app

    return create_app(demo, with_chat=False)


@pytest.fixture(scope="module")
def client(app):
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


async def test_sitemap_lists_every_kind_of_page(client, demo):
    response = await client.get("/sitemap.xml")
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/xml")
    locations = [loc.text for loc in ElementTree.fromstring(response.content).iter(f"{SM}loc")]
    counts = demo.catalog().counts()
    assert f"{demo.base_url}{CANONICAL}" in locations
    assert sum("/papers/" in url for url in locations) == counts["papers"]
    assert any("/researchers/" in url and url.endswith("-bobby-yan") for url in locations)
    assert any(url.endswith("-massachusetts-institute-of-technology") for url in locations)
    assert len(locations) == len(set(locations))


def test_past_the_limit_the_sitemap_is_an_index_of_parts(demo):
    archive, base = demo.archive(), "http://test"
    assert ElementTree.fromstring(sitemap(archive, base, part=1000).encode()).tag == f"{SM}urlset"  # under the limit
    index = ElementTree.fromstring(sitemap(archive, base, limit=1000, part=1000).encode())
    assert index.tag == f"{SM}sitemapindex"
    parts = [loc.text.removeprefix(f"{base}/sitemaps/") for loc in index.iter(f"{SM}loc")]
    assert parts[0] == "pages.xml" and "papers-1.xml" in parts and "papers-2.xml" in parts
    urls = []
    for name in parts:
        part = ElementTree.fromstring(sitemap_part(archive, base, name, limit=1000).encode())
        found = [loc.text for loc in part.iter(f"{SM}loc")]
        assert 0 < len(found) <= 1000
        urls += found
    whole = ElementTree.fromstring(sitemap(archive, base).encode())
    assert sorted(urls) == sorted(loc.text for loc in whole.iter(f"{SM}loc"))
    assert sitemap_part(archive, base, "papers-999.xml", limit=1000) is None


async def test_rss_feeds(client, demo):
    latest = ElementTree.fromstring((await client.get("/rss/latest.xml")).content)
    assert latest.tag == "rss" and latest.get("version") == "2.0"
    items = latest.findall("./channel/item")
    assert 0 < len(items) <= 50
    dates = [item.findtext("pubDate") for item in items]
    assert all(d and d[-5:] in ("+0000", " GMT") or d.endswith("-0000") for d in dates)
    assert all(item.findtext("link").startswith(f"{demo.base_url}/papers/") for item in items)
    one = ElementTree.fromstring((await client.get("/rss/cs.DC.xml")).content)
    assert all("cs.DC" in [c.text for c in item.findall("category")] for item in one.findall("./channel/item"))
    assert (await client.get("/rss/<script>.xml")).status_code == 404


async def test_llms_txt_and_lists(client):
    text = (await client.get("/llms.txt")).text
    assert text.startswith("# ScholarLoom") and "/openapi.json" in text and "text/markdown" in text
    people = await client.get("/researchers", headers={"accept": "text/markdown"})
    assert people.text.startswith("# Researchers") and "paper" in people.text
    filtered = await client.get("/researchers?q=bobby", headers={"accept": "text/markdown"})
    assert "[Bobby Yan](/researchers/" in filtered.text
    places = await client.get("/institutions?q=massachusetts")
    assert "Massachusetts Institute of Technology" in places.text
    # Words match without accents or case, and aliases and acronyms count too.
    for query in ("universite montreal", "Université de Montréal", "wurzburg", "Würzburg", "cmu"):
        found = await client.get("/institutions", params={"q": query}, headers={"accept": "text/markdown"})
        assert {
            "universite montreal": "[Université de Montréal]",
            "Université de Montréal": "[Université de Montréal]",
            "wurzburg": "[University of Würzburg]",
            "Würzburg": "[University of Würzburg]",
            "cmu": "[Carnegie Mellon University]",
        }[query] in found.text, query


async def test_json_api(client):
    paper = (await client.get("/api/papers/2006.07357v2")).json()
    assert paper["id"] == "2006.07357" and paper["url"] == CANONICAL and "Bobby Yan" in paper["authors"]
    assert (await client.get("/api/papers/9999.99999")).status_code == 404
    hits = (await client.get("/api/search", params={"q": "hindsight logging", "limit": 3})).json()["hits"]
    assert hits[0]["id"] == "2006.07357"
    mit = (await client.get("/api/institutions/MIT")).json()
    assert mit["ror_id"] == "042nb2s44" and mit["paper_count"] >= 1
    spec = (await client.get("/openapi.json")).json()
    assert {"/api/papers/{paper_id}", "/api/researchers/{researcher_id}", "/api/institutions/{institution}",
            "/api/search"} <= set(spec["paths"])  # fmt: skip
    assert not any(path.startswith(("/papers", "/chat")) for path in spec["paths"])


def test_api_against_its_openapi_description(app):
    """Generated requests for every operation of /openapi.json (schemathesis; its pytest plugin does not run on
    this pytest, so the operations are driven by hand): no server error, every answer as described."""
    from hypothesis import given

    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    # papers, researchers, institutions, search, passages, support; a user's library (add, list, read, correct,
    # delete a PDF; import a reading list, list and remove its papers), which a visitor without a session is refused
    assert len(operations) == 14
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def exercise(case):
            case.call_and_validate()

        exercise()


async def test_home_declares_the_site_search_and_404_lists_addresses(client, demo):
    import json

    from bs4 import BeautifulSoup

    soup = BeautifulSoup((await client.get("/")).text, "html.parser")
    blocks = [json.loads(s.string) for s in soup.select('script[type="application/ld+json"]')]
    site = next(b for b in blocks if b["@type"] == "WebSite")
    assert site["potentialAction"]["target"]["urlTemplate"] == f"{demo.base_url}/search?q={{search_term_string}}"
    missing = await client.get("/papers/2999.99999")
    assert missing.status_code == 404 and "may not be harvested yet" in missing.text
    assert "/institutions/MIT" in missing.text and "/researchers/" in missing.text


async def test_search_page_filters_pages_and_names(client):
    import re

    md = {"accept": "text/markdown"}
    person = (await client.get("/search", params={"q": "Bobby Yan"}, headers=md)).text
    assert "## Researchers" in person and "[Bobby Yan](/researchers/" in person
    place = (await client.get("/search", params={"q": "MIT"}, headers=md)).text
    assert "## Institutions" in place and "[Massachusetts Institute of Technology](/institutions/" in place
    second = (await client.get("/search", params={"q": "neural networks", "page": "2"}, headers=md)).text
    assert re.search(r"^11\. \[", second, re.M) and "[Previous](/search?q=neural+networks)" in second
    assert "[Next](/search?q=neural+networks&page=3)" in second
    physics = (await client.get("/search", params={"q": "diphoton production", "category": "hep-ph"}, headers=md)).text
    rows = re.findall(r"^\d+\. .*$", physics, re.M)
    assert rows and all("hep-ph" in row for row in rows) and "Filters: category hep-ph" in physics
    recent = (await client.get("/search", params={"q": "learning", "after": "2025-01-01"}, headers=md)).text
    years = [int(y) for y in re.findall(r", (\d{4})(?:, |$)", recent, re.M)]
    assert years and min(years) >= 2025
    html = (await client.get("/search", params={"q": "learning", "after": "not-a-date", "category": "<x>"})).text
    assert 'name="after" value=""' in html and 'name="category" value=""' in html  # bad filters are dropped


async def test_numbers_that_are_not_plain_digits_are_not_found(client):
    """Found by schemathesis: "²".isdigit() is true but int("²") fails; a 30-digit id overflows the database.
    Both are simply not found now, on every route that reads a number."""
    from retrieval.scholarly.records import whole_number

    assert [whole_number(v) for v in ("12", " 7 ", "²", "٣", "1" * 19, "", None, "-1")] == [12, 7] + [None] * 6
    for path in ("/api/institutions/²", "/api/institutions/" + "9" * 30, "/institutions/²"):
        assert (await client.get(path)).status_code == 404, path
    assert (await client.get("/api/researchers/²")).status_code == 422  # an integer path parameter: refused as such
    assert (await client.get("/sitemap-papers-².xml")).status_code == 404
    assert (await client.get("/search", params={"q": "graphs", "page": "²"})).status_code == 200


async def test_passages_api_finds_full_text_with_pages(client):
    found = (await client.get("/api/passages", params={"q": "bidirectional language model internal states"})).json()
    first = found["hits"][0]
    assert first["id"] == "1802.05365" and first["url"].startswith("/papers/1802.05365") and first["page"] >= 1
    only = (await client.get("/api/passages", params={"q": "dialog", "paper": "2006.12719", "limit": 3})).json()
    assert only["hits"] and {h["id"] for h in only["hits"]} == {"2006.12719"}
    assert (await client.get("/api/passages", params={"q": "x", "paper": "2999.99999"})).status_code == 404


async def test_support_api_checks_a_sentence_against_a_papers_own_text(client):
    """Issue 71: what the chat checks each cited sentence with, for outside agents: found with its page, or what the
    paper does not hold."""
    asked = {"paper": "1802.05365", "sentence": "The biLM was trained on a corpus of roughly 30 million sentences."}
    found = (await client.get("/api/support", params=asked)).json()
    assert found["found"] and found["page"] == 2 and not found["missing"]
    assert found["url"].startswith("/papers/1802.05365") and "30 million" in found["support"]
    changed = (await client.get("/api/support", params={**asked, "sentence": asked["sentence"].replace("30", "90")}))
    assert not changed.json()["found"] and changed.json()["missing"] == ["90"]
    assert (await client.get("/api/support", params={**asked, "paper": "2999.99999"})).status_code == 404
    assert (await client.get("/api/support", params={"paper": "1802.05365"})).status_code == 422


async def test_a_404_for_a_double_slash_address_links_nowhere_else(client):
    from bs4 import BeautifulSoup

    missing = await client.get("http://test//evil.example/a")  # the path is "//evil.example/a"
    assert missing.status_code == 404
    soup = BeautifulSoup(missing.text, "html.parser")
    addresses = [tag.get("href", "") for tag in soup.select("link[href], a[href]")]
    assert addresses and not any(a.startswith("//") for a in addresses)  # no protocol-relative link to evil.example
    assert 'href="//' not in missing.text


async def test_the_apis_say_which_hits_clear_the_relevance_floor(client):
    """Issue 39: the search API puts what clears the floor first and says so. A subject the archive does not hold
    is `weak`, with no hit marked relevant. A fact that only a full text holds finds its paper through the passage,
    with the page."""
    topic = (await client.get("/api/search", params={"q": "hindsight logging for model training", "limit": 5})).json()
    assert not topic["weak"] and topic["hits"][0]["relevant"] and topic["hits"][0]["id"] == "2006.07357"
    flags = [h["relevant"] for h in topic["hits"]]
    assert flags == sorted(flags, reverse=True)  # the relevant ones first
    absent = (await client.get("/api/search", params={"q": "coral reef bleaching under ocean warming"})).json()
    assert absent["weak"] and absent["hits"] and not any(h["relevant"] for h in absent["hits"])
    fact = (await client.get("/api/search", params={
        "q": "What joint goal accuracy does TripPy reach on MultiWOZ 2.1?", "limit": 5})).json()
    first = fact["hits"][0]
    assert not fact["weak"] and first["relevant"] and first["id"] == "2005.02877" and first["matched"] == "passage"
    assert first["page"] == 6
    passages = (await client.get("/api/passages", params={"q": "coral reef bleaching under ocean warming"})).json()
    assert passages["weak"] and not any(h["relevant"] for h in passages["hits"])
    held = (await client.get("/api/passages", params={"q": "joint goal accuracy of TripPy on MultiWOZ 2.1"})).json()
    assert not held["weak"] and held["hits"][0]["relevant"] and held["hits"][0]["id"] == "2005.02877"
    # a question naming its subject: only the papers naming it are relevant (the graph's paper, and a scholarly
    # search built on Semantic Scholar's data; three more near the subject cleared before) ...
    named = (await client.get("/api/search", params={
        "q": "How many author nodes are in the Semantic Scholar literature graph?", "limit": 5})).json()
    assert [h["id"] for h in named["hits"] if h["relevant"]] == ["1805.02262", "openalex:W3196350734"]
    # ... and one closer to the query than every paper naming it stays ("deep learning or LLMs")
    either = (await client.get("/api/search", params={
        "q": "detecting software vulnerabilities with deep learning or LLMs", "limit": 5})).json()
    relevant = [h["id"] for h in either["hits"] if h["relevant"]]
    assert relevant[0] == "2512.12593" and "2512.12536" in relevant  # SHERLOCK (deep learning), then an LLM paper
    # ... and when none that clears names it, a paper that does clears under the cut: SPECTER's paper introduces
    # SciDocs, at 0.43, under an annotated corpus at 0.53 that names none
    scidocs = (await client.get("/api/search", params={
        "q": "How many papers does SciDocs contain?", "limit": 5})).json()
    assert [h["id"] for h in scidocs["hits"] if h["relevant"]][0] == "2004.07180"


async def test_papers_holding_the_question_phrases_are_answers_under_the_cut(client):
    """Issue 39: the encoder scores ceLLMate (browser agents against prompt injection attacks) at 0.43 and MTGNN
    (multivariate time series forecasting) at 0.39; both hold the question's phrases, as the papers that clear do,
    and are judged relevant. "LLM", which most of the first list's papers hold, does not keep ceLLMate out."""
    injection = (await client.get("/api/search", params={
        "q": "prompt injection attacks on LLM applications", "limit": 5})).json()
    relevant = [h["id"] for h in injection["hits"] if h["relevant"]]
    assert relevant[0] == "2512.12583" and "2512.12594" in relevant
    series = (await client.get("/api/search", params={
        "q": "Transformers for long sequence time-series forecasting", "limit": 5})).json()
    relevant = [h["id"] for h in series["hits"] if h["relevant"]]
    assert "openalex:W3080253043" in relevant and len(relevant) == 4
    assert "openalex:W2964110616" not in relevant  # Transformer-XL: long sequences, but language, not time series


def test_the_floor_keeps_what_is_near_the_best_and_above_the_least():
    from retrieval.search.relevance import Floor

    floor = Floor(dense=0.5, gap=0.25, passage=0.35)
    assert floor.papers([0.9, 0.7, 0.64, None, 0.3]) == [True, True, False, False, False]  # within 0.25 of 0.9
    assert floor.papers([0.6, 0.55, 0.45]) == [True, True, False]  # at least 0.5
    assert floor.papers([0.42, 0.3]) == [False, False] and floor.papers([None]) == [False]
    assert floor.passages([0.4, 0.35, 0.34, None]) == [True, True, False, False]


def test_a_paper_holding_the_query_phrases_clears_under_the_cut():
    """Issue 39: a paper under the cosine cut clears when it holds more than a third of the query's phrases the
    cleared paper holding the most holds, down to 0.35; never when nothing clears on its own."""
    from retrieval.search.relevance import Floor, content_words, phrases, phrases_held

    floor = Floor(dense=0.5, gap=0.2, passage=0.35, phrase_dense=0.35, phrase_part=3)
    assert floor.papers([0.8, 0.45, 0.45, 0.34], [2, 2, 0, 2]) == [True, True, False, False]
    assert floor.papers([0.8, 0.45, 0.45], [5, 2, 1]) == [True, True, False]  # 2 of 5 is more than a third, 1 not
    assert floor.papers([0.8, 0.45], [3, 1]) == [True, False]  # a third is not more than a third
    assert floor.papers([0.8, 0.45], [0, 2]) == [True, False]  # what clears holds none: the phrases say nothing
    assert floor.papers([0.8, 0.45], None) == [True, False]
    assert floor.papers([0.45, 0.4], [3, 3]) == [False, False]  # weak matches stay weak whatever they hold
    assert content_words("Transformers for long sequence time-series forecasting") == [
        "transform", "long", "sequenc", "time", "seri", "forecast"]  # fmt: skip
    asked = phrases("prompt injection attacks on LLM applications")
    assert asked == {("prompt", "inject"), ("inject", "attack"), ("attack", "llm"), ("llm", "applic")}
    assert phrases_held(asked, "they are vulnerable to prompt injection attacks that can trick an agent") == 2
    assert phrases_held(asked, "injection of a prompt") == 0 and phrases_held(frozenset(), "prompt injection") == 0


def test_a_name_most_of_the_list_holds_does_not_tell_it_apart():
    from retrieval.search.relevance import telling

    texts = ["an llm agent", "llms for code", "taint analysis", "llm safety"]
    assert telling(["llm", "trippy"], texts) == ["trippy"]  # 3 of 4 hold "llm"
    assert telling(["llm"], texts[1:3]) == []  # half of them
    assert telling(["llm"], [*texts[2:], "slot filling"]) == ["llm"]  # one of three


def test_what_the_query_names_is_named_by_what_clears():
    """Issue 39: a question naming its subject ("TripPy", "Semantic Scholar", "BM25", "LLMs") keeps, of what clears,
    the papers that name it, and those closer to the query than every paper that does; when none that clears names
    it, the papers under the cut naming it most clear too."""
    from retrieval.search.relevance import FLOOR, named_terms

    assert named_terms("What joint goal accuracy does TripPy reach on MultiWOZ 2.1?") == ["trippy", "multiwoz"]
    assert named_terms("How many author nodes are in the Semantic Scholar literature graph?") == ["semantic", "scholar"]
    assert named_terms("How many units do ELMo's biLSTM layers have?") == ["elmo", "bilstm"]
    assert named_terms("detecting software vulnerabilities with deep learning or LLMs") == ["llm"]
    assert named_terms("Transformers for time-series forecasting") == [] and named_terms("graphene") == []
    texts = ["trippy: a triple copy strategy on multiwoz", "dialog evaluation on multiwoz", "slot filling",
             "a survey of llms for code"]  # fmt: skip
    names = ["trippy", "multiwoz"]
    assert FLOOR.naming([True, True, True, False], [0.7, 0.68, 0.6, 0.9], texts, names) == [True, False, False, False]
    assert FLOOR.naming([True, True, True, False], [0.6, 0.7, 0.65, 0.9], texts, ["multiwoz"]) == [True, True, False,
                                                                                                   False]  # fmt: skip
    assert FLOOR.naming([True, True, True], [0.6, 0.7, 0.8], texts[:3], ["trippy"]) == [True, True, True]  # closer
    assert FLOOR.naming([True, True], [0.7, 0.6], texts[1:3], ["trippy"]) == [True, True]  # none names it
    assert FLOOR.naming([True, True], [0.7, 0.6], ["llms and code", "an llm for code"], ["llm"]) == [True, True]
    # none that clears names it: those under the cut naming it most clear, down to 0.35, when anything clears
    corpora = ["annotated corpora of papers", "we introduce scidocs, an evaluation suite", "scidocs", "slot filling"]
    assert FLOOR.naming([True, False, False, False], [0.53, 0.43, 0.34, 0.45], corpora, ["scidocs"]) == [
        True, True, False, False]  # (0.53 stays: closer to the query than every paper naming it)  # fmt: skip
    assert FLOOR.naming([True, False], [0.53, 0.43], corpora[:2], ["scidocs", "specter"]) == [True, True]
    assert FLOOR.naming([False, False], [0.45, 0.43], corpora[:2], ["scidocs"]) == [False, False]  # nothing cleared


async def test_a_name_the_encoder_does_not_know_finds_the_paper_its_title_leads_with(client):
    """Issue 39: "TinyBERT" scores its own paper at 0.40, under the floor: the archive said nothing answered it.
    A query mostly made of a name clears the papers named after it ("Pyserini: A Python Toolkit ..."); a name
    most titles hold ("3D"), a name that is a small part of the question ("C4" photosynthesis) and a title that
    only mentions it do not, and a question answered by a full text still finds its passage."""
    for query, name in (("TinyBERT", "TinyBERT"), ("How many parameters does TinyBERT have?", "TinyBERT"),
                        ("ALBERT", "ALBERT"), ("What is Pyserini?", "Pyserini")):  # fmt: skip
        found = (await client.get("/api/search", params={"q": query, "limit": 5})).json()
        relevant = [h["title"].split(":")[0] for h in found["hits"] if h["relevant"]]
        assert not found["weak"] and relevant == [name], (query, relevant)
    for absent in ("3D printing of concrete buildings", "efficiency of C4 photosynthesis in crops",
                   "DNA methylation in ageing",  # ("... in stretched dry DNA": a title that mentions it)
                   "SIGMA rule detection for SIEM"):  # (a passage at 0.377 naming neither cleared before)
        assert (await client.get("/api/search", params={"q": absent})).json()["weak"], absent
    sigma = (await client.get("/api/passages", params={"q": "SIGMA rule detection for SIEM"})).json()
    assert sigma["weak"] and not any(h["relevant"] for h in sigma["hits"])  # (the same passage, on its own)
    margin = (await client.get("/api/search", params={
        "q": "What margin does SPECTER use in its triplet loss?", "limit": 5})).json()
    assert margin["hits"][0]["id"] == "2004.07180" and margin["hits"][0]["matched"] == "passage"



async def test_a_name_the_archive_spells_out_is_searched_as_it_spells_it(client, demo):
    """Issue 39: "What is GRPO?" cleared no abstract (the encoder does not know the name, 0.26-0.35) and "What is
    SQuAD?" no passage, though the archive's papers spell both out. The search reads such a name as they spell it
    ("Group Relative Policy Optimization (GRPO)") and asks again: only what names it clears, and the note says how
    it was read. A name spelled out only where papers are about something else ("Low-Rank Adaptation (LoRA)")
    still gets the abstention, and so does a subject the archive does not hold."""
    from retrieval.scholarly.models import Paper

    grpo = (await client.get("/api/search", params={"q": "What is GRPO?", "limit": 5})).json()
    assert not grpo["weak"] and grpo["note"] == ('Read "GRPO" as "Group Relative Policy Optimization", as papers '
                                                 "in this archive spell it out.")  # fmt: skip
    shown = [h["id"] for h in grpo["hits"] if h["relevant"]]
    with demo.catalog().session() as session:
        abstracts = [session.get(Paper, pid).abstract for pid in shown]
    assert len(shown) >= 2 and all("GRPO" in abstract for abstract in abstracts)
    squad = (await client.get("/api/search", params={"q": "What is SQuAD?", "limit": 5})).json()
    cleared = [(h["id"], h["matched"], h["page"]) for h in squad["hits"] if h["relevant"]]
    assert cleared == [("1802.05365", "passage", 4)]
    assert squad["note"].startswith('Read "SQuAD" as "Stanford Question Answering Dataset"')
    passages = (await client.get("/api/passages", params={"q": "What is SQuAD?", "limit": 5})).json()
    relevant = [h for h in passages["hits"] if h["relevant"]]
    assert relevant and all(h["id"] == "1802.05365" for h in relevant)
    assert any("Stanford Question Answering Dataset (SQuAD)" in h["text"] and h["page"] == 4 for h in relevant)
    page = await client.get("/search", params={"q": "What is SQuAD?"}, headers={"Accept": "text/markdown"})
    assert 'Read "SQuAD" as "Stanford Question Answering Dataset"' in page.text  # (the page says so too)
    for weak in ("What is LoRA?", "WAY of the samurai", "LASER eye surgery recovery time"):
        found = (await client.get("/api/search", params={"q": weak})).json()
        assert found["weak"] and not found["note"], weak


def test_a_name_spelled_out_by_its_initials():
    from retrieval.search.relevance import about_names
    from retrieval.search.spelling import spelled_out

    assert spelled_out("SQuAD", ["The Stanford Question Answering Dataset (SQuAD) (Rajpurkar et al.)"]) == (
        "Stanford Question Answering Dataset")
    assert spelled_out("LoRA", ["fine-tuned with Low-Rank Adaptation (LoRA) adapters"]) == "Low-Rank Adaptation"
    assert spelled_out("BoW", ["a bag of words (BoW) model"]) == "bag of words"  # a small word may give no letter
    assert spelled_out("LLM", ["large language models (LLMs) x", "Large Language Models (LLMs)",
                               "Large language models (LLMs)"]) == "large language models"  # fmt: skip
    assert spelled_out("mRAG", ["Retrieval-Augmented Generation (mRAG)"]) is None  # its prefix is a word too
    assert spelled_out("mRAG", ["multimodal Retrieval-Augmented Generation (mRAG)"]) == (
        "multimodal Retrieval-Augmented Generation")
    assert spelled_out("CD", ["change detection (CD) and compact discs (CD), change detection (CD)"]) == (
        "change detection")  # the spelling most texts give
    assert spelled_out("GRPO", ["we use GRPO (Shao et al.)", "Group Policy Optimization (GRPO)"]) is None
    assert spelled_out("FED", ["the FED (fine-grained evaluation of dialog) data"]) == (
        "fine-grained evaluation of dialog")  # the other way round
    assert spelled_out("FED", ["UNFED (fine-grained evaluation of dialog)", "FED (a (b) c)"]) is None
    assert about_names("What is GRPO?") == ["grpo"] and about_names("LASER eye surgery recovery time") == []
    # the note quotes the query and a paper's words: text, never a link or markup, on the markdown page
    from retrieval.search.hybrid import SearchResult
    from pages.search import build_search_page

    hostile = 'Read "XSS" as "[x](javascript:alert(1)) <img src=x>", as papers in this archive spell it out.'
    page = build_search_page(SearchResult("What is XSS?", [], note=hostile), {}).to_markdown()
    assert "\\[x\\](javascript" in page and "&lt;img src=x&gt;" in page and "<img" not in page

def test_a_title_named_after_what_the_query_is_about():
    from retrieval.search.relevance import Floor, coined_terms, leads

    assert coined_terms("How many parameters does TinyBERT have?") == ["tinybert"]
    assert coined_terms("LLMs on Semantic Scholar, part II") == ["llm"]  # not a plain capital, nor a numeral
    assert leads("tinybert: distilling bert", "tinybert") and leads("the prf: bm25 and beyond", "bm25")
    assert not leads("tinyberts and more", "tinybert") and not leads("localization in dry dna", "dna")
    floor = Floor(titled_dense=0.2)
    titles = ["tinybert: distilling bert", "albert: a lite bert", "on bert"]
    assert floor.titled([0.33, 0.3, 0.5], titles, "How many parameters does TinyBERT have?") == [True, False, False]
    assert floor.titled([0.33, 0.3, 0.5], titles, "TinyBERT layer width dropout") == [False] * 3  # a quarter of it
    assert floor.titled([0.19, 0.3, 0.5], titles, "TinyBERT") == [False] * 3  # under 0.2
    assert floor.titled([0.3, 0.3, 0.5], titles, "TinyBERT or ALBERT") == [True, True, False]
    assert floor.titled([0.3, 0.3], ["3d a", "3d b"], "3D") == [False, False]  # most titles hold it
    # a plain word: when it is all a title says before its colon
    tools = ["pyserini: a python toolkit", "toolkits for retrieval: pyserini and more", "laser: layer-wise alignment",
             "on anserini", "ranking"]  # fmt: skip
    cosines = [0.4, 0.4, 0.3, 0.3, 0.3]
    assert floor.titled(cosines, tools, "What is Pyserini?") == [True, False, False, False, False]
    assert floor.titled(cosines, tools, "laser eye surgery") == [False, False, True, False, False]  # a third
    assert floor.titled(cosines, tools, "laser eye surgery recovery") == [False] * 5  # a quarter


def test_a_paper_whose_abstract_says_it_named_the_name_is_named_after_it():
    """"We introduce LLaMA, a collection of ...": the paper named LLaMA, though its title may not lead with it. Not
    a paper that builds on the name ("we propose a method based on BERT", "a BERT-based model")."""
    from retrieval.search.relevance import Floor, names_its_own

    assert names_its_own("we call them elmo (embeddings from language models)", "elmo")
    assert names_its_own("In this work, We call our model SPECTER.", "specter")
    assert names_its_own("It also introduces the FED dataset which is", "fed")
    assert not names_its_own("we propose a method based on bert for", "bert")
    assert not names_its_own("we present a BERT-based model", "bert")
    assert not names_its_own("we introduce a model. BERT is", "bert")  # (another sentence)
    abstracts = ["in this paper we present multimedqa, a benchmark", "we evaluate on multimedqa and more", ""]
    titles = ["large language models encode clinical knowledge", "clinical llms", "results on multimedqa"]
    floor = Floor(titled_dense=0.2)
    assert floor.titled([0.3, 0.4, 0.3], titles, "What is MultiMedQA?", abstracts) == [True, False, False]
    assert floor.titled([0.3, 0.4, 0.3], titles, "What is MultiMedQA?") == [False, False, False]  # titles alone


async def test_a_name_a_papers_abstract_introduces_finds_that_paper(client):
    """Issue 39: "What is MultiMedQA?" scored its paper ("Large language models encode clinical knowledge", whose
    abstract presents MultiMedQA) under the floor, and no title leads with the name: nothing answered it."""
    for query, paper in (("MultiMedQA", "openalex:W4384071683"), ("What is GNMT?", "1609.08144")):
        found = (await client.get("/api/search", params={"q": query, "limit": 5})).json()
        assert not found["weak"] and [h["id"] for h in found["hits"] if h["relevant"]] == [paper], query


async def test_the_search_page_folds_weaker_matches_and_says_when_nothing_answers(client):
    """The search page lists what clears the relevance floor, folds the rest behind "Show N weaker matches", shows
    where in a full text a paper was found, and says plainly when nothing here answers (the closest matches
    labelled as such), in HTML and in markdown."""
    from bs4 import BeautifulSoup

    absent = await client.get("/search", params={"q": "coral reef bleaching under ocean warming"})
    soup = BeautifulSoup(absent.text, "html.parser")
    assert "Nothing in this archive answers this well" in soup.select_one("p.weak").get_text()
    assert soup.select("section.closest li") and not soup.select("details.weaker")
    topic = BeautifulSoup((await client.get("/search", params={"q": "hindsight logging for model training"})).text,
                          "html.parser")  # fmt: skip
    assert not topic.select("p.weak") and "2006.07357" in topic.select("ol.results")[0].select_one("a")["href"]
    folded = topic.select_one("details.weaker")
    assert folded is not None and folded.select_one("summary").get_text().startswith("Show ")
    assert len(folded.select("li")) + len(topic.select("ol.results")[0].select("li")) == 10
    fact = await client.get("/search", params={"q": "What joint goal accuracy does TripPy reach on MultiWOZ 2.1?"})
    first = BeautifulSoup(fact.text, "html.parser").select("ol.results")[0].select_one("li")
    assert "2005.02877" in first.select_one("a")["href"] and "full text, p. 6" in first.get_text()
    markdown = (await client.get("/search", params={"q": "coral reef bleaching under ocean warming"},
                                 headers={"Accept": "text/markdown"})).text  # fmt: skip
    assert "Nothing in this archive answers this well" in markdown and "## Closest matches" in markdown
