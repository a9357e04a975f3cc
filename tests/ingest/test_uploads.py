"""The `upload` job on a real index: a user's PDF becomes passages only that user finds; deleting it leaves nothing;
a file over the page cap fails with its reason."""

import shutil

import pytest

from ingest.pdf_worker import PdfLimits
from ingest.report import Summary
from ingest.writer import Writer
from jobs.kinds import UploadFailed, index_upload
from retrieval.vectors.index import ANYONE, Filters
from tests.conftest import PDFS

LONGEVAL_PDF = PDFS / "2023.eacl-main.121.pdf"
PHRASE = "guidelines for human evaluation of faithfulness in long-form summarization"


def _stored(settings, tmp_path, owner="carol"):
    spooled = settings.uploads().folder / ".incoming-test.pdf"
    shutil.copy(LONGEVAL_PDF, spooled)
    return settings.uploads().add(owner, "longeval.pdf", spooled, LONGEVAL_PDF.stat().st_size, "0" * 64)


def _owned_points(index, owner_paper: str) -> int:
    return index.count(Filters(paper_ids=(owner_paper,), viewer=ANYONE))


def test_an_upload_is_indexed_for_its_owner_alone_and_deleted_whole(make_instance, tmp_path):
    settings = make_instance(tmp_path / "data")
    archive, uploads = settings.archive(), settings.uploads()
    upload = _stored(settings, tmp_path)
    assert not uploads.folder.joinpath(".incoming-test.pdf").exists()  # moved, not copied
    note = index_upload(Writer.of(settings.archive()), uploads, upload.id, PdfLimits(),
                        Summary())  # fmt: skip
    row = uploads.get("carol", upload.id)
    assert row.state == "indexed" and row.pages == 20 and row.passages > 20 and f"{row.passages} passages" in note
    assert row.title == "LongEval: Guidelines for Human Evaluation of Faithfulness in Long-form Summarization"
    assert row.authors[:2] == ["Kalpesh Krishna", "Erin Bransom"] and row.abstract.startswith("While human")
    paper_id = row.point_paper_id
    assert _owned_points(settings.index(), paper_id) == row.passages + 1  # the passages and the title+abstract

    mine = archive.passages(PHRASE, Filters(viewer="carol"), limit=5).hits
    assert mine and mine[0].paper.id == paper_id and mine[0].page is not None
    assert archive.search(PHRASE, Filters(viewer="carol"), limit=3).hits[0].paper.id == paper_id
    for viewer in ("dave", None):
        assert paper_id not in [h.paper.id for h in archive.passages(PHRASE, Filters(viewer=viewer), limit=20).hits]
        assert paper_id not in [h.paper.id for h in archive.search(PHRASE, Filters(viewer=viewer), limit=20).hits]
        assert archive.resolve_paper_id(paper_id, viewer) is None
    assert uploads.get("dave", upload.id) is None and archive.papers([paper_id], "dave") == {}

    uploads.delete(row, settings.index())
    assert _owned_points(settings.index(), paper_id) == 0
    assert settings.index().count(Filters(viewer="carol")) == settings.index().count(Filters())
    assert uploads.get("carol", upload.id) is None and list(uploads.folder.iterdir()) == []


def test_a_file_over_the_page_cap_fails_with_its_reason(make_instance, tmp_path):
    settings = make_instance(tmp_path / "data")
    upload = _stored(settings, tmp_path)
    summary = Summary()
    with pytest.raises(UploadFailed, match="20 pages, more than the limit of 5"):
        index_upload(Writer.of(settings.archive()), settings.uploads(), upload.id,
                     PdfLimits(max_pages=5), summary)  # fmt: skip
    row = settings.uploads().get("carol", upload.id)
    assert row.state == "failed" and "more than the limit of 5" in row.error and summary.failures
    assert _owned_points(settings.index(), row.point_paper_id) == 0
    settings.uploads().delete(row, settings.index())
    note = index_upload(Writer.of(settings.archive()), settings.uploads(), upload.id,
                        PdfLimits(), Summary())  # fmt: skip
    assert "deleted before it was indexed" in note


def test_a_correction_made_while_the_file_is_read_wins(make_instance, tmp_path, monkeypatch):
    import ingest.writer as job  # where the upload job cuts its passages
    from jobs.queue import JobQueue

    settings = make_instance(tmp_path / "data")
    uploads, queue = settings.uploads(), JobQueue(settings.catalog().engine)
    upload = _stored(settings, tmp_path)
    cut = job.passages

    def corrected_meanwhile(pages, count_tokens):  # the user saves a title while the job cuts the passages
        uploads.correct("carol", upload.id, queue, title="Zebrafish Guidelines", authors=["Someone Else"])
        return cut(pages, count_tokens)

    monkeypatch.setattr(job, "passages", corrected_meanwhile)
    note = index_upload(Writer.of(settings.archive()), uploads, upload.id, PdfLimits(),
                        Summary())  # fmt: skip
    row = uploads.get("carol", upload.id)
    assert "described again" in note and row.state == "indexed" and row.passages > 20
    assert (row.title, row.authors) == ("Zebrafish Guidelines", ["Someone Else"])
    hit = settings.archive().search("zebrafish guidelines", Filters(viewer="carol"), limit=1).hits[0]
    assert hit.paper.id == row.point_paper_id  # the corrected title is what search matches
    monkeypatch.setattr(job, "passages", cut)  # the correction's own job: the title point only, passages kept
    before = _owned_points(settings.index(), row.point_paper_id)
    assert "described again" in index_upload(Writer.of(settings.archive()), uploads,
                                             upload.id, PdfLimits(), Summary(), fields_only=True)  # fmt: skip
    assert _owned_points(settings.index(), row.point_paper_id) == before
