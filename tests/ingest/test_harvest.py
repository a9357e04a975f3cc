"""The live harvesters against replayed real answers (arXiv Atom pages, OpenAlex lists and errors, Semantic
Scholar batch/references/404) and built OAI-PMH pages: paging, resumption, enrichment, no duplicates."""

from __future__ import annotations

import json
from datetime import date

import pytest
from sqlmodel import select

from ingest.demo import DEMO_DIR
from ingest.harvest.arxiv import ArxivQuery, harvest_api, harvest_oai, oai_last_name
from ingest.harvest.openalex import OpenAlex, enrich_from_openalex, name_references
from ingest.harvest.s2 import SemanticScholar
from ingest.harvest.s2 import enrich_from_s2 as s2_enrich
from ingest.http import FetchError
from ingest.pipeline import finish_catalog, load_records
from ingest.report import Summary
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Authorship, Citation, Paper, Researcher
from retrieval.scholarly.records import AuthorRecord, PaperRecord
from tests.ingest import oai_fixtures as oai
from tests.ingest.test_http import make_client
from tests.replay import Replay

ATOM = DEMO_DIR / "arxiv_api_atom"
CASSETTES = DEMO_DIR / "openalex" / "api_cassettes"
S2 = __import__("pathlib").Path(__file__).parent.parent / "fixtures" / "semantic_scholar"
API = "https://export.arxiv.org/api/query"
OAI_URL = "https://oaipmh.arxiv.org/oai"


@pytest.fixture
def catalog(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    yield catalog
    catalog.close()


def paper_ids(catalog: Catalog) -> list[str]:
    with catalog.session() as session:
        return list(session.exec(select(Paper.id)).all())


def atom_replay() -> Replay:
    replay = Replay()
    for start in range(0, 500, 100):
        page = ATOM / f"query_cs_start{start:03d}_max100.xml"
        replay.add(
            "GET", "export.arxiv.org", "/api/query", page, when=lambda r, s=start: r.url.params["start"] == str(s)
        )
    return replay


# --- arXiv API ----------------------------------------------------------------------------------
def test_api_pages_through_a_query_and_resumes_where_it_stopped(catalog):
    query = ArxivQuery(categories=("cs.AI", "cs.LG"), since=date(2025, 12, 1), until=date(2025, 12, 16))
    replay = atom_replay()
    summary = Summary()
    with make_client(replay) as client:
        assert harvest_api(catalog, client, API, query, summary, limit=200) == 200
    first = replay.params(0)
    assert first["search_query"] == "(cat:cs.AI OR cat:cs.LG) AND submittedDate:[202512010000 TO 202512162359]"
    assert (first["start"], first["max_results"], first["sortBy"]) == ("0", "100", "submittedDate")
    assert len(paper_ids(catalog)) == 200

    # A second run (say, after the first was stopped) asks for the pages it has not stored, not the first two.
    replay.requests.clear()
    with make_client(replay) as client:
        assert harvest_api(catalog, client, API, query, summary, limit=300) == 300
    assert [p["start"] for p in map(replay.params, range(3))] == ["200", "300", "400"]
    ids = paper_ids(catalog)
    assert len(ids) == len(set(ids)) == 500
    assert summary.counts["added"] == 500 and summary.counts["failed"] == 0


def test_api_error_feed_is_a_clear_error(catalog):
    error_feed = (
        b'<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        b"<entry><id>http://arxiv.org/api/errors#incorrect_id_format_for_1234.12345v</id><title>Error</title>"
        b"<summary>incorrect id format for 1234.12345v</summary></entry></feed>"
    )  # the documented shape of an API error answer (arXiv API manual, section 3.4)
    replay = Replay().add("GET", "export.arxiv.org", "/api/query", error_feed)
    with make_client(replay) as client, pytest.raises(FetchError, match="incorrect id format"):
        harvest_api(catalog, client, API, ArxivQuery(query="id:1234.12345v"), Summary())


def test_a_query_needs_something_to_ask():
    with pytest.raises(ValueError):
        ArxivQuery().search_query()


# --- OAI-PMH ------------------------------------------------------------------------------------
def oai_replay(prefix: str = "arXiv") -> tuple[Replay, list[dict]]:
    raws = oai.real_records(7)
    pages = [
        oai.list_records([oai.record(r, prefix) for r in raws[:3]], "token-1", 0, 7),
        oai.list_records(
            [oai.record(r, prefix) for r in raws[3:5]] + [oai.record(raws[5], deleted=True)], "token-2", 3, 7
        ),
        oai.list_records([oai.record(raws[6], prefix)], None, 6, 7),
    ]
    replay = Replay()
    replay.add("GET", "oaipmh.arxiv.org", "/oai", pages[0], when=lambda r: "resumptionToken" not in r.url.params)
    for number, page in enumerate(pages[1:], start=1):
        replay.add(
            "GET", "oaipmh.arxiv.org", "/oai", page,
            when=lambda r, n=number: r.url.params.get("resumptionToken") == f"token-{n}",
        )  # fmt: skip
    return replay, raws


@pytest.mark.parametrize("prefix", ["arXiv", "arXivRaw"])
def test_oai_follows_resumption_tokens(catalog, prefix):
    replay, raws = oai_replay(prefix)
    summary = Summary()
    with make_client(replay) as client:
        read = harvest_oai(
            catalog, client, OAI_URL, summary, metadata_prefix=prefix, set_spec="physics", since=date(2007, 1, 1)
        )
    assert read == 6 and summary.counts["skipped"] == 1  # one record was deleted
    assert replay.params(0) == {"verb": "ListRecords", "metadataPrefix": prefix, "from": "2007-01-01", "set": "physics"}
    assert replay.params(1) == {"verb": "ListRecords", "resumptionToken": "token-1"}
    assert sorted(paper_ids(catalog)) == sorted(r["id"] for i, r in enumerate(raws) if i != 5)
    view = catalog.paper_view("0704.0001")
    assert [a.name for a in view.authors][:3] == ["C. Balázs", "E. L. Berger", "P. M. Nadolsky"]
    assert catalog.cursor(oai_last_name("physics"))["datestamp"] >= "2008"


def test_oai_resumes_with_the_token_committed_with_the_last_stored_page(catalog):
    replay, _ = oai_replay()
    with make_client(replay) as client:
        assert harvest_oai(catalog, client, OAI_URL, Summary(), limit=3) == 3  # stops after the first page
    replay.requests.clear()
    with make_client(replay) as client:
        harvest_oai(catalog, client, OAI_URL, Summary())
    assert replay.params(0) == {"verb": "ListRecords", "resumptionToken": "token-1"}
    assert len(paper_ids(catalog)) == 6


def test_oai_errors(catalog):
    replay = Replay().add("GET", "oaipmh.arxiv.org", "/oai", oai.error("noRecordsMatch", "no records"))
    with make_client(replay) as client:
        assert harvest_oai(catalog, client, OAI_URL, Summary(), since=date(2030, 1, 1)) == 0
    replay = Replay().add("GET", "oaipmh.arxiv.org", "/oai", oai.error("badArgument", "bad set"))
    with make_client(replay) as client, pytest.raises(FetchError, match="badArgument: bad set"):
        harvest_oai(catalog, client, OAI_URL, Summary(), set_spec="nope")


# --- OpenAlex -----------------------------------------------------------------------------------
def arxiv_paper(arxiv_id: str, title: str, authors: list[str], doi: str | None = None) -> PaperRecord:
    return PaperRecord(
        id=arxiv_id, arxiv_id=arxiv_id, doi=doi, title=title, authors=[AuthorRecord(name=n) for n in authors],
        categories=["cs.DL"], source="arxiv_api",
    )  # fmt: skip


def test_openalex_enriches_by_arxiv_doi_and_follows_the_cursor(catalog):
    record = arxiv_paper(
        "2007.14454",
        "Measuring prominence of scientific work in online news as a proxy for impact",
        ["James Ravenscroft", "Amanda Clare", "Maria Liakata"],
    )
    load_records(catalog, "arxiv_api", [record], Summary())
    replay = Replay()
    replay.add("GET", "api.openalex.org", "/works", CASSETTES / "works_filter_openalex_2ids_cursor.json",
               when=lambda r: r.url.params["cursor"] == "*")  # fmt: skip
    replay.add("GET", "api.openalex.org", "/works", CASSETTES / "works_cursor_last_page_empty.json")
    summary = Summary()
    with make_client(replay) as client:
        enrich_from_openalex(catalog, OpenAlex(client, "https://api.openalex.org", email="ops@example.org"), summary)
    first = replay.params(0)
    assert first["filter"] == "doi:https://doi.org/10.48550/arxiv.2007.14454" and first["mailto"] == "ops@example.org"
    assert replay.params(1)["cursor"].startswith("IlsnLUlu")  # the recorded next_cursor, then a null one ends it
    # The recording also holds a work we did not ask about: reported, not stored.
    assert [f.reason for f in summary.failures] == ["an answer for a paper we did not ask about"]
    paper = catalog.papers(["2007.14454"])["2007.14454"]
    assert paper.openalex_id == "W3045921891" and paper.cited_by_count is not None
    assert paper.title.startswith("Measuring prominence")  # arXiv's facts stay
    with catalog.session() as session:
        rows = session.exec(select(Authorship).where(Authorship.paper_id == "2007.14454")).all()
        researchers = [session.get(Researcher, r.researcher_id) for r in rows]
        assert [r.raw_name for r in rows] == record_names(record)
        assert all(r.openalex_id for r in researchers) and all(r.match_method == "openalex" for r in rows)
        cited = session.exec(select(Citation).where(Citation.citing_id == "2007.14454")).all()
    assert len(cited) == 37
    # A rerun asks nothing: the paper is in the ledger.
    replay.requests.clear()
    with make_client(replay) as client:
        enrich_from_openalex(catalog, OpenAlex(client, "https://api.openalex.org"), Summary())
    assert replay.requests == []


def record_names(record: PaperRecord) -> list[str]:
    return [a.name for a in record.authors]


def test_openalex_names_cited_works(catalog):
    load_records(catalog, "openalex", list(__import__("ingest.parsers.openalex", fromlist=["x"]).parse_works(
        __import__("json").loads((CASSETTES / "works_filter_openalex_2ids_cursor.json").read_text())
    )), Summary())  # fmt: skip
    replay = Replay().add(
        "GET", "api.openalex.org", "/works", CASSETTES / "works_filter_cited_by_cursor_38results.json"
    )
    summary = Summary()
    with make_client(replay) as client:
        name_references(catalog, OpenAlex(client, "https://api.openalex.org"), summary)
    assert replay.params(0)["filter"].startswith("openalex:W")
    assert replay.params(0)["select"] == "id,doi,display_name,ids,publication_year"
    with catalog.session() as session:
        named = session.exec(select(Citation).where(Citation.cited_title.is_not(None))).all()
    assert summary.counts["named"] == 38 and len(named) >= 38
    assert any(c.cited_arxiv_id == "1609.08144" for c in named)  # GNMT, cited by its arXiv DOI


def test_openalex_budget_reads_the_rate_limit_body(catalog):
    replay = Replay().add("GET", "api.openalex.org", "/rate-limit", CASSETTES / "rate_limit_status.json")
    with make_client(replay) as client:
        assert OpenAlex(client, "https://api.openalex.org").budget() is None  # no key, no call
        budget = OpenAlex(client, "https://api.openalex.org", api_key="k").budget()
    assert budget["daily_remaining_usd"] == 0.998 and len(replay.requests) == 1


# --- Semantic Scholar ---------------------------------------------------------------------------
def test_s2_batch_enriches_known_papers_and_remembers_unknown_ones(catalog):
    papers = [
        arxiv_paper("2006.07357", "Hindsight logging for model training", ["Rolando Garcia"]),
        PaperRecord(id="doi:10.2139/ssrn.288970", doi="10.2139/ssrn.288970",
                    title="How Much Should We Trust Differences-in-Differences Estimates?",
                    authors=[AuthorRecord(name="Marianne Bertrand"), AuthorRecord(name="Esther Duflo"),
                             AuthorRecord(name="Sendhil Mullainathan")], source="test"),
        PaperRecord(id="doi:10.2139/ssrn.2250500", doi="10.2139/ssrn.2250500", title="The Miracle of Microfinance?",
                    authors=[AuthorRecord(name="Esther Duflo")], source="test"),
        PaperRecord(id="doi:10.1257/rct.1355", doi="10.1257/rct.1355", title="Improving Third-Party Audits",
                    authors=[AuthorRecord(name="Esther Duflo")], source="test"),
    ]  # fmt: skip
    load_records(catalog, "test", papers, Summary())
    replay = Replay().add("POST", "api.semanticscholar.org", "/graph/v1/paper/batch",
                          S2 / "api_paper_batch_allfields.json")  # fmt: skip
    summary = Summary()
    with make_client(replay) as client:
        s2_enrich(catalog, SemanticScholar(client, "https://api.semanticscholar.org", "key"), summary, references=False)
    request = replay.requests[0]
    assert request.headers["x-api-key"] == "key"
    assert __import__("json").loads(request.content)["ids"] == [
        "ARXIV:2006.07357", "DOI:10.1257/rct.1355", "DOI:10.2139/ssrn.2250500", "DOI:10.2139/ssrn.288970"
    ]  # fmt: skip
    # The recorded answers come in the recording's order, not ours: only answers that match are used.
    assert summary.counts["not found"] == 1  # the recording's first answer is null
    assert summary.counts["added"] + summary.counts["updated"] == 1  # 10.2139/ssrn.2250500 matches its slot
    assert summary.counts["failed"] == 2
    with catalog.session() as session:
        duflo = session.exec(select(Researcher).where(Researcher.s2_id == "2259683")).one()
        assert duflo.name == "Esther Duflo"


def test_s2_references_follow_next_and_a_404_is_not_found(catalog):
    page = S2 / "api_paper_references_ssrn.2250500_p0.json"
    last = {"offset": 50, "data": []}  # built: the recording stops at the first page (next = 50)
    replay = Replay()
    replay.add("GET", "api.semanticscholar.org", "/graph/v1/paper/cb1e/references", page,
               when=lambda r: r.url.params["offset"] == "0")  # fmt: skip
    replay.add("GET", "api.semanticscholar.org", "/graph/v1/paper/cb1e/references", last)
    replay.add("GET", "api.semanticscholar.org", "/graph/v1/paper/0/references", S2 / "api_error_404_paper.json",
               status=404)  # fmt: skip
    with make_client(replay) as client:
        api = SemanticScholar(client, "https://api.semanticscholar.org")
        cited = api.references("cb1e")
        assert api.references("0") is None
    assert len(cited) == 50 and cited[0]["title"].startswith("Group lending or individual lending?")
    assert replay.params(1)["offset"] == "50"


# --- identity -----------------------------------------------------------------------------------
def test_names_link_by_coauthors_and_namesakes_stay_apart(catalog):
    def paper(pid, names, source="arxiv_api"):
        return PaperRecord(id=pid, title=f"Paper {pid}", authors=[AuthorRecord(name=n) for n in names], source=source)

    load_records(catalog, "t1", [
        PaperRecord(id="p1", title="One", source="openalex", authors=[
            AuthorRecord(name="Wei Zhang", openalex_id="A1"), AuthorRecord(name="Ana Lima", openalex_id="A2")]),
        PaperRecord(id="p2", title="Two", source="openalex", authors=[
            AuthorRecord(name="Wei Zhang", openalex_id="A3"), AuthorRecord(name="Bo Chen", openalex_id="A4")]),
    ], Summary())  # fmt: skip
    load_records(
        catalog, "t2", [paper("p3", ["Wei Zhang", "Ana Lima"]), paper("p4", ["Wei Zhang", "Carl Ode"])], Summary()
    )
    with catalog.session() as session:
        rows = {(r.paper_id, r.raw_name): r for r in session.exec(select(Authorship)).all()}
        a1 = session.exec(select(Researcher).where(Researcher.openalex_id == "A1")).one()
    assert rows[("p3", "Wei Zhang")].researcher_id == a1.id  # shares Ana Lima with A1
    assert rows[("p3", "Wei Zhang")].match_method == "name+coauthors"
    assert rows[("p4", "Wei Zhang")].match_method == "name?"  # two Wei Zhangs, no evidence: not guessed
    assert rows[("p4", "Wei Zhang")].researcher_id not in {a1.id}
    papers = catalog.papers(["p3", "p4"])
    assert papers["p3"].all_authors_matched and not papers["p4"].all_authors_matched
    finish_catalog(catalog)


def test_a_second_source_adds_its_ids_to_the_same_researchers(catalog):
    load_records(catalog, "oa", [
        PaperRecord(id="p1", title="One", source="openalex", authors=[
            AuthorRecord(name="Wei Zhang", openalex_id="A1"), AuthorRecord(name="Ana Lima", openalex_id="A2")]),
    ], Summary())  # fmt: skip
    load_records(catalog, "s2", [
        PaperRecord(id="p1", title="One", source="s2", authors=[
            AuthorRecord(name="W. Zhang", s2_id="11"), AuthorRecord(name="Ana Lima", s2_id="22")]),
    ], Summary())  # fmt: skip
    with catalog.session() as session:
        people = {r.openalex_id: r for r in session.exec(select(Researcher)).all()}
        rows = session.exec(select(Authorship).order_by(Authorship.position)).all()
    assert (people["A1"].s2_id, people["A2"].s2_id) == ("11", "22") and len(people) == 2
    assert [r.raw_name for r in rows] == ["Wei Zhang", "Ana Lima"]  # the first list's names stay


def test_s2_citing_papers_in_the_corpus_become_edges(catalog):
    from ingest.harvest.s2 import add_citing_papers

    edge = json.loads((S2 / "Citation.json").read_text())
    page = {"offset": 0, "data": [edge]}  # built page around a real recorded edge
    citing = PaperRecord(id="doi:10.1109/lra.2022.3229266", doi="10.1109/lra.2022.3229266",
                         title="Learning to Throw With a Handful of Samples Using Decision Transformers",
                         authors=[AuthorRecord(name="M. Monastirsky")], source="test")  # fmt: skip
    load_records(catalog, "t", [citing, arxiv_paper("2003.12345", "Throwing", ["Andy Zeng"])], Summary())
    replay = Replay().add("GET", "api.semanticscholar.org", "/graph/v1/paper/ARXIV:2003.12345/citations", page)
    with make_client(replay) as client:
        found = SemanticScholar(client, "https://api.semanticscholar.org").citations("ARXIV:2003.12345")
    assert add_citing_papers(catalog, "2003.12345", "2003.12345", None, found) == 1
    finish_catalog(catalog)
    with catalog.session() as session:
        row = session.exec(select(Citation)).one()
    assert (row.citing_id, row.cited_id) == ("doi:10.1109/lra.2022.3229266", "2003.12345")


def test_openalex_fills_the_authors_and_institutions_papers_name(catalog):
    from ingest.harvest.openalex import enrich_entities
    from ingest.parsers.openalex import parse_works
    from retrieval.scholarly.models import Institution

    samples = DEMO_DIR / "openalex" / "samples"
    works = json.loads((samples / "works_sample.json").read_text())
    load_records(catalog, "openalex", list(parse_works(works)), Summary())

    def envelope(name):  # built: the samples are the `results` of real list answers, without their envelope
        return {"meta": {"next_cursor": None}, "results": json.loads((samples / name).read_text())}

    replay = Replay()
    replay.add("GET", "api.openalex.org", "/institutions", envelope("institutions_sample.json"))
    replay.add("GET", "api.openalex.org", "/authors", envelope("authors_sample.json"))
    summary = Summary()
    with make_client(replay) as client:
        enrich_entities(catalog, OpenAlex(client, "https://api.openalex.org"), summary)
    kinds = [r.url.path for r in replay.requests]
    assert kinds[0] == "/institutions" and "/authors" in kinds
    assert all(
        len(p["filter"].removeprefix("openalex:").split("|")) <= 50 for p in map(replay.params, range(len(kinds)))
    )
    with catalog.session() as session:
        with_place = session.exec(select(Institution).where(Institution.city.is_not(None))).all()
        known = session.exec(select(Researcher).where(Researcher.openalex_id == "A5111609957")).one()
    assert len(with_place) == 7  # the 7 institutions of these works that the sample holds, now with a place
    assert known.aliases  # the author record's alternative names
    assert summary.counts["added"] == 37  # 7 institutions + 30 authors; the others are absent from the sample
    replay.requests.clear()
    with make_client(replay) as client:  # everything was asked about once: a rerun asks nothing
        enrich_entities(catalog, OpenAlex(client, "https://api.openalex.org"), Summary())
    assert replay.requests == []


def test_openalex_entity_records_replayed_one_by_one(catalog):
    """The single full records of the corpus (an author and an institution), each as the only result of a list
    answer (the envelope is built; the records are verbatim)."""
    from ingest.harvest.openalex import enrich_entities
    from retrieval.scholarly.models import Institution
    from retrieval.scholarly.records import InstitutionRecord, ResearcherRecord

    entities = DEMO_DIR / "openalex" / "entities"
    load_records(catalog, "t", [
        ResearcherRecord(name="Jason Priem", openalex_id="A5023888391", source="test"),
        InstitutionRecord(name="University of Michigan", openalex_id="I27837315", source="test"),
    ], Summary())  # fmt: skip

    def one(name):
        return {"meta": {"next_cursor": None}, "results": [json.loads((entities / name).read_text())]}

    replay = Replay()
    replay.add("GET", "api.openalex.org", "/institutions", one("I27837315.json"))
    replay.add("GET", "api.openalex.org", "/authors", one("A5023888391.json"))
    with make_client(replay) as client:
        enrich_entities(catalog, OpenAlex(client, "https://api.openalex.org"), Summary())
    assert [replay.params(n)["filter"] for n in range(2)] == ["openalex:I27837315", "openalex:A5023888391"]
    with catalog.session() as session:
        michigan = session.exec(select(Institution).where(Institution.openalex_id == "I27837315")).one()
        priem = session.exec(select(Researcher).where(Researcher.openalex_id == "A5023888391")).one()
    assert (michigan.ror_id, michigan.city) == ("00jmfr291", "Ann Arbor")
    assert priem.orcid and priem.orcid.startswith("0000-")
