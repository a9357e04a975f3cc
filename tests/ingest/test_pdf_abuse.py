"""Hostile PDFs through the real ingest step: each ends with its paper marked failed and nothing indexed, the
worker stopped at its limit and restarted, and the ingesting process's memory flat."""

import pytest

from harness.hostile_pdfs import backtracking_references, decompression_bomb, reference_loop, truncated
from ingest.pdf_worker import PdfError, PdfLimits, PdfWorker, read_frame_within
from ingest.pdfs import FAILED, STAGE, store_fulltext
from ingest.pipeline import load_records
from ingest.report import Summary
from ingest.writer import Writer
from tests.conftest import LONGEVAL, PDFS, _fulltext_paper


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        line = next(row for row in status if row.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


@pytest.fixture
def instance(empty_instance):
    settings = empty_instance
    catalog = settings.catalog()
    ids = ["2101.00001", "2101.00002", "2101.00003", LONGEVAL]
    load_records(catalog, "test", [_fulltext_paper(i, f"Paper {i}", ["A. Author"]) for i in ids], Summary())
    return settings, catalog, catalog.papers(ids)


def test_bomb_loop_and_truncated_pdfs_fail_alone(instance):
    settings, catalog, papers = instance
    writer = Writer(catalog, settings.index(), settings.embedder())
    hostile = {"2101.00001": decompression_bomb(), "2101.00002": reference_loop(), "2101.00003": truncated()}
    assert len(hostile["2101.00001"]) < 200_000  # a small file whose text is gigabytes
    summary = Summary()
    before = _rss_mb()
    with PdfWorker(PdfLimits(memory_mb=512, seconds=4)) as worker:
        for paper_id, data in hostile.items():
            ok = store_fulltext(writer, worker, papers[paper_id], data, summary, {}, {}, paper_id)
            assert ok is False
        grew = _rss_mb() - before
        bomb_failure, loop_failure, cut_failure = (f.reason for f in summary.failures)
        # The good paper after them is parsed by the restarted worker.
        good = (PDFS / "2023.eacl-main.121.pdf").read_bytes()
        assert store_fulltext(writer, worker, papers[LONGEVAL], good, summary, {}, {}, "good")
    assert "longer than 4 s" in bomb_failure or "more than 512 MB" in bomb_failure, bomb_failure
    assert "cyclic" in loop_failure and "unreadable PDF" in cut_failure
    failed = catalog.ledger_hashes(FAILED)
    assert set(failed) == set(hostile) and catalog.ledger_hashes(STAGE).keys() == {LONGEVAL}
    assert summary.counts["failed"] == 3 and summary.counts["passages"] > 0
    # The parent only ever held the small files: the gigabytes stayed in the child that was stopped.
    assert grew < 50, f"the ingesting process grew by {grew:.0f} MB"


def test_the_worker_sees_none_of_the_parents_secrets_and_its_text_is_capped(monkeypatch):
    monkeypatch.setenv("SCHOLARLOOM_LLM_API_KEY", "sk-must-not-leak")
    good = (PDFS / "2023.eacl-main.121.pdf").read_bytes()
    with PdfWorker(PdfLimits(max_text_chars=2_000)) as worker:
        with pytest.raises(PdfError, match="longer than the limit of 2000 characters"):
            worker.extract(good)
        environment = open(f"/proc/{worker.pid}/environ", "rb").read()
    assert b"sk-must-not-leak" not in environment and b"SCHOLARLOOM" not in environment
    with PdfWorker() as worker:
        assert len("".join(worker.extract(good))) > 2_000  # the default cap leaves a paper whole


def test_the_parent_refuses_an_oversized_or_stalled_answer():
    import os

    reading, writing = os.pipe()
    with os.fdopen(reading, "rb") as stream:
        os.write(writing, (10**12).to_bytes(8, "big"))  # a child announcing a terabyte
        with pytest.raises(PdfError, match="announced 1000000000000 bytes"):
            read_frame_within(stream, 1.0, 1_000_000)
        os.write(writing, (100).to_bytes(8, "big") + b"x" * 10)  # then stalling mid-frame
        with pytest.raises(PdfError, match="did not answer within 0.5 s"):
            read_frame_within(stream, 0.5, 1_000_000)
    os.close(writing)


def test_a_reference_list_made_to_backtrack_is_read_in_the_worker(monkeypatch):
    """The reference list and what the file says it is are read in the worker, under its limits: the parent never
    runs a pattern over the file's text, and the commas cost linear time there."""
    import ingest.pdf_meta
    import ingest.pdf_text

    def not_here(*_):
        raise AssertionError("the file's text was analysed in the ingesting process")

    monkeypatch.setattr(ingest.pdf_text, "cited_identifiers", not_here)
    monkeypatch.setattr(ingest.pdf_meta, "guess_metadata", not_here)
    with PdfWorker(PdfLimits(seconds=30)) as worker:
        parsed = worker.read(backtracking_references())
    assert parsed.cited == [("arxiv", "2004.07180")]
    assert parsed.meta.title == "" or "," not in parsed.meta.title
