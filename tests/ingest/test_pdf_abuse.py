"""Hostile PDFs through the real ingest step: each ends with its paper marked failed and nothing indexed, the
worker stopped at its limit and restarted, and the ingesting process's memory flat."""

import pytest

from ingest.pdf_worker import PdfLimits, PdfWorker
from ingest.pdfs import FAILED, STAGE, store_fulltext
from ingest.pipeline import load_records
from ingest.report import Summary
from tests.conftest import LONGEVAL, PDFS, _fulltext_paper
from tests.ingest.hostile_pdfs import decompression_bomb, reference_loop, truncated


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
    index, embedder = settings.index(), settings.embedder()
    hostile = {"2101.00001": decompression_bomb(), "2101.00002": reference_loop(), "2101.00003": truncated()}
    assert len(hostile["2101.00001"]) < 200_000  # a small file whose text is gigabytes
    summary = Summary()
    before = _rss_mb()
    with PdfWorker(PdfLimits(memory_mb=512, seconds=8)) as worker:
        for paper_id, data in hostile.items():
            ok = store_fulltext(catalog, index, embedder, worker, papers[paper_id], data, summary, {}, {}, paper_id)
            assert ok is False
        grew = _rss_mb() - before
        bomb_failure, loop_failure, cut_failure = (f.reason for f in summary.failures)
        # The good paper after them is parsed by the restarted worker.
        good = (PDFS / "2023.eacl-main.121.pdf").read_bytes()
        assert store_fulltext(catalog, index, embedder, worker, papers[LONGEVAL], good, summary, {}, {}, "good")
    assert "longer than 8 s" in bomb_failure or "more than 512 MB" in bomb_failure, bomb_failure
    assert "cyclic" in loop_failure and "unreadable PDF" in cut_failure
    failed = catalog.ledger_hashes(FAILED)
    assert set(failed) == set(hostile) and catalog.ledger_hashes(STAGE).keys() == {LONGEVAL}
    assert summary.counts["failed"] == 3 and summary.counts["passages"] > 0
    # The parent only ever held the small files: the gigabytes stayed in the child that was stopped.
    assert grew < 50, f"the ingesting process grew by {grew:.0f} MB"
