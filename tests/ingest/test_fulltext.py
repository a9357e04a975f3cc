"""Full text: two real PDFs parsed in the worker, cut into page-numbered passages, indexed and found."""

from pathlib import Path

import pytest

from ingest.pdf_text import heading_of
from ingest.pdf_worker import PdfError, PdfLimits, PdfWorker
from ingest.pdfs import ingest_pdf_files, paper_id_for
from ingest.report import Summary
from ingest.writer import Writer, passages
from retrieval.search.hybrid import search_passages
from retrieval.vectors.index import Filters
from tests.conftest import LONGEVAL, PDFS, S2ORC


def test_pdfs_become_indexed_passages(fulltext):
    settings, summary, _ = fulltext
    assert summary.counts["added"] == 2 + 2  # two papers' metadata, two PDFs
    assert [f.reason for f in summary.failures] == ["no paper '9999.99999' in the catalog; ingest its metadata first"]
    index = settings.index()
    for paper_id in (S2ORC, LONGEVAL):
        assert index.count(Filters(paper_ids=(paper_id,), kinds=("passage",))) > 40


@pytest.mark.parametrize(
    "question,paper_id,page,section",
    [
        ("How large is the corpus used to pretrain S2ORC-SciBERT, in tokens?", S2ORC, 7, "Pretraining BERT on S2ORC"),
        ("How does faithfulness evaluation of summaries differ from fact verification?", LONGEVAL, 9, "Related Work"),
        (
            "Why not recruit Amazon Mechanical Turk crowdworkers as annotators?",
            LONGEVAL,
            16,
            "Crowdworkers or expert annotators?",
        ),
    ],
)
def test_a_question_finds_its_passage_and_page(fulltext, question, paper_id, page, section):
    settings, _, _ = fulltext
    result = search_passages(settings.catalog(), settings.index(), settings.embedder(), question, limit=3)
    best = result.hits[0]
    assert (best.paper.id, best.page) == (paper_id, page)
    if section:
        assert best.section == section


def test_passages_group_to_papers_and_filter_to_one_paper(fulltext):
    settings, _, _ = fulltext
    args = (settings.catalog(), settings.index(), settings.embedder(), "human evaluation of summaries")
    grouped = search_passages(*args, limit=4, per_paper=1)
    assert len({h.paper.id for h in grouped.hits}) == len(grouped.hits) == 2
    only = search_passages(*args, filters=Filters(paper_ids=(S2ORC,)), limit=5)
    assert only.hits and {h.paper.id for h in only.hits} == {S2ORC}
    assert all(h.page >= 1 and h.text for h in only.hits)


def test_rerun_skips_unchanged_pdfs(fulltext):
    settings, _, files = fulltext
    index = settings.index()
    before = index.count()
    summary = Summary()
    ingest_pdf_files(Writer(settings.catalog(), index, settings.embedder()), sorted(files.glob("*.pdf")), summary)
    assert summary.counts["unchanged"] == 2 and index.count() == before


def test_no_full_text_gives_a_clear_note(fulltext):
    settings, _, _ = fulltext
    result = search_passages(
        settings.catalog(), settings.index(), settings.embedder(), "anything", filters=Filters(paper_ids=("nope",))
    )
    assert result.hits == [] and "No full text" in result.note


def test_file_names_map_to_paper_ids():
    assert paper_id_for(Path("2006.07357v2.pdf")) == "2006.07357"
    assert paper_id_for(Path("hep-th_9901001v1.pdf")) == "hep-th/9901001"
    assert paper_id_for(Path("openalex:W123.pdf")) == "openalex:W123"


def test_headings():
    assert heading_of("2.3 Assembling the corpus") == "Assembling the corpus"
    assert heading_of("References") == "References"
    assert heading_of("5 Conclusion") == "Conclusion"
    assert heading_of("We introduce S2ORC, a large corpus.") is None
    assert heading_of("2019 4969 4970") is None


def test_passages_skip_references_and_page_numbers():
    pages = [
        "1 Introduction\nWe study things. They are hard to\nstudy well.\n12",
        "References\nA. Author. 2019. A paper.",
    ]
    count = lambda xs: [len(x.split()) for x in xs]  # noqa: E731
    found = passages(pages, count, budget=50)
    assert [(p.page, p.section, p.text) for p in found] == [
        (1, "Introduction", "We study things. They are hard to study well.")
    ]


def test_worker_reports_broken_pdfs_and_survives():
    real = (PDFS / "2023.eacl-main.121.pdf").read_bytes()
    with PdfWorker(PdfLimits(seconds=30)) as worker:
        with pytest.raises(PdfError, match="not a PDF"):
            worker.extract(b"<html>hello</html>")
        with pytest.raises(PdfError):
            worker.extract(real[: len(real) // 3])  # truncated: no cross-reference table at the end
        assert len(worker.extract(real)) == 20  # the same worker still parses a good one


def test_worker_is_killed_at_its_time_limit_and_restarted():
    real = (PDFS / "2020.acl-main.447.pdf").read_bytes()
    worker = PdfWorker(PdfLimits(seconds=0.05))
    try:
        with pytest.raises(PdfError, match="longer than"):
            worker.extract(real)
        assert worker.pid is None  # the child was killed, not left running
        worker.limits = PdfLimits(seconds=30)
        assert len(worker.extract(real)) == 15
    finally:
        worker.close()


def test_worker_refuses_oversized_input():
    with PdfWorker(PdfLimits(max_bytes=1000)) as worker, pytest.raises(PdfError, match="more than the limit"):
        worker.extract(b"%PDF-1.7" + b"0" * 2000)
