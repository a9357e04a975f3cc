"""`scholarloom index rebuild` (ingest/rebuild.py, the `rebuild` job of scholarloom/maintenance.py) on a small archive
with full text and a private upload: the new index holds the same points, answers the same searches, keeps the
upload private, replaces the old one on disk and in the running process; what it cannot compute again stops it with
the index in use untouched. Under `serve`: tests/scholarloom/test_rebuild_serve.py."""

import shutil

import pytest

from ingest.demo import DEMO_DIR
from ingest.pdf_worker import PdfLimits
from ingest.pdfs import ingest_pdf_files, pdf_files
from ingest.report import Summary
from ingest.writer import Writer
from jobs.context import JobIncomplete
from jobs.kinds import index_upload
from jobs.arguments import RebuildArguments
from jobs.upkeep import run_rebuild
from retrieval.vectors.edge import edge_folder
from retrieval.vectors.index import ANYONE, Filters
from retrieval.vectors.points import PASSAGE_KINDS
from retrieval.vectors.store import StoredPoint
from tests.ingest.test_uploads import PHRASE, _stored
from tests.small_archive import small_archive

ELMO = "1802.05365"
QUESTIONS = ("deep contextualized word representations", "citation graph document embeddings", "dialogue evaluation")


def _by_kind(index) -> dict[str, int]:
    return {kind: index.count(Filters(kinds=(kind,), viewer=ANYONE)) for kind in ("abstract", "window", "passage")}


def _answers(archive) -> list:
    found = [[h.paper.id for h in archive.search(q, Filters(), limit=10).hits] for q in QUESTIONS]
    found += [[(h.paper.id, h.page) for h in archive.passages(q, Filters(), limit=10).hits] for q in QUESTIONS]
    return found + [[h.paper.id for h in archive.passages(PHRASE, Filters(viewer="carol"), limit=3).hits]]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, embedder):
    """The small archive, ELMo's full text, and carol's upload, indexed, in a closed data directory (built once)."""
    from scholarloom.settings import Settings

    root = tmp_path_factory.mktemp("rebuild")
    make = lambda data_dir: Settings(data_dir=data_dir).adopt(embedder=embedder)  # noqa: E731
    data = small_archive(root, make, {})
    settings = make(data)
    catalog, index = settings.catalog(), settings.index()
    ingest_pdf_files(Writer(catalog, index, embedder), pdf_files([DEMO_DIR / "pdfs" / f"{ELMO}.pdf"]), Summary())
    upload = _stored(settings, root)
    index_upload(Writer(catalog, index, embedder), settings.uploads(), upload.id, PdfLimits(), Summary())
    settings.close()
    return data


@pytest.fixture
def archive(prepared, make_instance, tmp_path):
    """A copy of the prepared archive, open, for one test to change."""
    shutil.copytree(prepared, tmp_path / "data")
    return make_instance(tmp_path / "data")


def test_a_rebuilt_index_holds_the_same_points_answers_alike_and_takes_the_old_ones_place(archive, make_instance):
    settings, archive = archive, archive.archive()
    index, old_folder = settings.index(), edge_folder(settings.index_dir, settings.collection)
    before_kinds, before_answers = _by_kind(index), _answers(archive)
    before_passages = {p.id: p.payload for chunk in index.points() for p in chunk if p.payload["kind"] == "passage"}
    assert before_kinds["passage"] > 20 and set(before_answers[-1]) == {"upload:1"}

    leftover = old_folder.with_name(f"{settings.collection}.20200101000000")  # a rebuild cut off before its swap
    (leftover / "segments").mkdir(parents=True)

    note = run_rebuild(settings.job_context(index, settings.embedder()), RebuildArguments(grace=0), Summary(), None)

    assert not leftover.exists() and sorted(p.name for p in old_folder.parent.iterdir() if p.is_dir()) == [
        index.store.path.name]  # fmt: skip
    assert settings.index() is index and index.store.path != old_folder and not old_folder.exists()
    assert f"now in {index.store.path}" in note and f"{before_kinds['passage']:,} passages" in note
    assert _by_kind(index) == before_kinds and _answers(archive) == before_answers
    after = {p.id: p.payload for chunk in index.points() for p in chunk if p.payload["kind"] == "passage"}
    assert after == before_passages
    for viewer in ("dave", None):  # carol's upload is still hers alone
        assert "upload:1" not in [h.paper.id for h in archive.passages(PHRASE, Filters(viewer=viewer), limit=20).hits]
    new_folder = index.store.path
    settings.close()
    reopened = make_instance(settings.data_dir)  # the next start opens the new folder
    assert edge_folder(reopened.index_dir, reopened.collection) == new_folder
    assert _by_kind(reopened.index()) == before_kinds


def test_a_point_that_cannot_be_computed_again_stops_the_rebuild_and_changes_nothing(archive):
    settings = archive
    index = settings.index()
    folder = edge_folder(settings.index_dir, settings.collection)
    (sample,) = next(iter(index.points(1)))
    index.load([StoredPoint("00000000-0000-0000-0000-00000000beef", sample.dense, None,
                            {**sample.payload, "kind": "figure"})])  # fmt: skip
    kinds = _by_kind(index)
    with pytest.raises(JobIncomplete, match="of kind 'figure'.*the index in use is unchanged"):
        run_rebuild(settings.job_context(index, settings.embedder()), RebuildArguments(grace=0), Summary(), None)
    assert index.store.path == folder and _by_kind(index) == kinds
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]  # the half-made index is gone
    assert index.count(Filters(kinds=PASSAGE_KINDS, viewer=ANYONE)) == kinds["passage"]


class _DeletingOnFirstEmbedding:
    """The job's encoder, but the first time it embeds, carol deletes her upload (the rebuild has read its points)."""

    def __init__(self, embedder, delete) -> None:
        self.embedder, self.delete = embedder, delete

    def documents(self, texts):
        if self.delete is not None:
            self.delete, delete = None, self.delete
            delete()
        return self.embedder.documents(texts)

    def __getattr__(self, name):
        return getattr(self.embedder, name)


def test_an_upload_deleted_while_the_index_is_rebuilt_stays_deleted(archive):
    settings = archive
    index, uploads = settings.index(), settings.uploads()
    row = uploads.get("carol", 1)
    embedder = _DeletingOnFirstEmbedding(settings.embedder(), lambda: uploads.delete(row, index))
    note = run_rebuild(settings.job_context(index, embedder), RebuildArguments(grace=0), Summary(), None)
    assert "index rebuilt" in note and uploads.get("carol", 1) is None
    assert index.count(Filters(paper_ids=("upload:1",), viewer=ANYONE)) == 0
    found = settings.archive().passages(PHRASE, Filters(viewer="carol"), limit=5).hits
    assert all(hit.paper.id != "upload:1" for hit in found)
