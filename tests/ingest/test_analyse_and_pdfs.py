"""LLM analysis against the scripted server, PDFs downloaded from arxiv.org (replayed), reference lists."""

from __future__ import annotations

import json

import pytest
from sqlmodel import select

from harness.llm_server import text
from ingest.analyse import analyse_papers, parse_analysis
from ingest.pdf_text import cited_identifiers
from ingest.pdfs import download_pdfs
from ingest.pipeline import load_records
from ingest.report import Summary
from ingest.writer import Writer
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Citation
from retrieval.scholarly.records import AuthorRecord, PaperRecord
from scholarloom.settings import Settings
from tests.conftest import LONGEVAL, PDFS
from tests.ingest.test_http import make_client
from tests.replay import Replay

GOOD = {
    "summary": "The paper proposes hindsight logging, which records checkpoints so that log statements added later "
    "can be replayed quickly.",
    "topics": ["logging", "model training", "checkpointing"],
    "paper_type": "system",
    "research_field": "Machine learning systems",
    "novelty": "Replaying log statements from checkpoints instead of retraining.",
    "significance_score": 6,
}


def paper(pid: str, abstract: str = "An abstract long enough to analyse, about logging model training.") -> PaperRecord:
    return PaperRecord(id=pid, arxiv_id=pid, title=f"Paper {pid}", abstract=abstract,
                       authors=[AuthorRecord(name="Ada Lovelace")], source="arxiv_api")  # fmt: skip


@pytest.fixture
def catalog(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    yield catalog
    catalog.close()


def test_analysis_is_validated_retried_and_stored(catalog, scripted, tmp_path):
    load_records(catalog, "t", [paper("2001.00001"), paper("2001.00002"), paper("2001.00003", abstract="")], Summary())
    scripted.enqueue(
        text('Sure! Here is the analysis: {"summary": "short"}'),  # invalid: too short, keys missing
        text("```json\n" + json.dumps(GOOD) + "\n```"),  # valid on the second answer
        *[text(json.dumps(GOOD | {"paper_type": "manifesto"}))] * 3,  # never valid: reported, skipped
    )
    settings = Settings(data_dir=tmp_path, llm="openai/scripted", llm_api_base=scripted.api_base, llm_api_key="k")
    summary = Summary()
    analyse_papers(catalog, settings.analyst().ask, summary)
    papers = catalog.papers(["2001.00001", "2001.00002", "2001.00003"])
    done = [p for p in papers.values() if p.analysed]
    assert len(done) == 1 and done[0].topics == GOOD["topics"] and done[0].paper_type == "system"
    assert done[0].significance_score == 6 and done[0].summary.startswith("The paper proposes")
    assert not papers["2001.00003"].analysed  # no abstract: not asked about
    assert summary.counts["analysed"] == 1 and summary.counts["failed"] == 1
    assert "paper_type" in summary.failures[0].reason
    retry = scripted.requests[1]["messages"]
    assert retry[-1]["role"] == "user" and "not valid" in retry[-1]["content"]
    assert scripted.requests[0]["response_format"] == {"type": "json_object"}
    assert "<paper>" in scripted.requests[0]["messages"][1]["content"]  # the abstract goes in as data
    from retrieval.archive import Archive
    from pages.paper import paper_page

    markdown = paper_page(Archive(catalog, None, None), done[0].id).to_markdown()
    assert "## Summary (written by an LLM from the abstract)" in markdown
    assert "**Topics:** logging, model training, checkpointing" in markdown and "**Type:** system" in markdown


def test_an_unreachable_model_ends_the_step_not_the_run(catalog, scripted, tmp_path):
    from assistant.llm import LLMError, llm_retrier

    load_records(catalog, "t", [paper("2001.00001"), paper("2001.00002")], Summary())
    settings = Settings(data_dir=tmp_path, llm="openai/scripted", llm_api_base=scripted.api_base, llm_api_key="k")
    summary = Summary()  # nothing scripted: the server answers 500, litellm retries, then gives up
    slept = []
    analyse_papers(catalog, settings.analyst(llm_retrier(sleep=slept.append)).ask, summary, unavailable=LLMError)
    assert summary.counts["failed"] == 1 and "stopped" in summary.failures[0].reason
    assert len(slept) == 2 and len(scripted.requests) == 3  # two bounded retries, backing off, then it stops
    assert not any(p.analysed for p in catalog.papers(["2001.00001", "2001.00002"]).values())


def test_analysis_parser_rejects_what_the_schema_forbids():
    assert parse_analysis(json.dumps(GOOD)).research_field == "Machine learning systems"
    for broken in (
        "no json",
        "{not json}",
        json.dumps(GOOD | {"topics": []}),
        json.dumps(GOOD | {"significance_score": 11}),
    ):
        with pytest.raises(ValueError):
            parse_analysis(broken)


def test_reference_identifiers_in_their_usual_spellings():
    found = cited_identifiers(
        "A. arXiv preprint arXiv:2006.14799. B. arXiv, abs/1609.08144. C. https://arxiv.org/abs/hep-th/9901001v2. "
        "D. doi:10.18653/v1/2020.acl-main.447. E. https://doi.org/10.48550/arXiv.2007.14454)."
    )
    assert found == [
        ("arxiv", "2006.14799"), ("arxiv", "1609.08144"), ("arxiv", "hep-th/9901001"),
        ("doi", "10.18653/v1/2020.acl-main.447"), ("arxiv", "2007.14454"),
    ]  # fmt: skip


def test_pdfs_come_from_arxiv_org_with_their_reference_lists(make_instance, tmp_path):
    settings = make_instance(tmp_path / "data")
    catalog, index, embedder = settings.catalog(), settings.index(), settings.embedder()
    records = [paper(LONGEVAL), paper("2006.14799"), paper("2999.00001")]
    load_records(catalog, "t", records, Summary())
    replay = Replay()
    replay.add("GET", "arxiv.org", f"/pdf/{LONGEVAL}", PDFS / "2023.eacl-main.121.pdf")
    replay.add("GET", "arxiv.org", "/pdf/2999.00001", "<html>not found</html>", status=404)
    replay.add(
        "GET", "arxiv.org", "/pdf/2006.14799", status=302, headers={"location": "https://evil.example.org/x.pdf"}
    )
    summary = Summary()
    with make_client(replay) as client:
        download_pdfs(Writer(catalog, index, embedder), client, summary)
    reasons = {f.key: f.reason for f in summary.failures}
    assert "answered 404" in reasons["https://arxiv.org/pdf/2999.00001"]
    assert "evil.example.org is not an allowed host" in reasons["https://arxiv.org/pdf/2006.14799"]
    assert set(catalog.ledger_hashes("fulltext")) == {LONGEVAL}
    assert set(catalog.ledger_hashes("fulltext:failed")) == {"2999.00001", "2006.14799"}
    with catalog.session() as session:
        edges = session.exec(select(Citation).where(Citation.citing_id == LONGEVAL)).all()
        cited = {e.cited_arxiv_id: e.cited_id for e in edges if e.cited_arxiv_id}
        listed = [e for e in edges if e.cited_key.startswith("ref:")]  # entries with no id, kept as printed
    assert len(cited) == 9 and cited["2006.14799"] == "2006.14799"  # in the corpus: linked to its paper
    assert listed and all(e.cited_title and e.reference and e.cited_id is None for e in listed)
    before = len(replay.requests)
    with make_client(replay) as client:
        download_pdfs(Writer(catalog, index, embedder), client, Summary())
    assert len(replay.requests) == before  # done and failed PDFs are not fetched again

    # Retrying the failed ones: a truncated PDF is fetched, fails in the parser, and is reported.
    replay.routes = [r for r in replay.routes if r.path != "/pdf/2006.14799"]
    replay.add("GET", "arxiv.org", "/pdf/2006.14799", PDFS.joinpath("2023.eacl-main.121.pdf").read_bytes()[:5000])
    summary = Summary()
    with make_client(replay) as client:
        download_pdfs(Writer(catalog, index, embedder), client, summary, retry_failed=True)
    assert [f.key for f in summary.failures] == ["https://arxiv.org/pdf/2999.00001", "https://arxiv.org/pdf/2006.14799"]
    settings.close()
