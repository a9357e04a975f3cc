"""Loading the demo corpus: everything arrives, a rerun changes nothing, bad records are skipped and reported."""

import json
import shutil

import numpy as np
import pytest

from ingest.demo import DEMO_DIR, load_demo, vector_book_path, with_vector_book
from ingest.writer import Writer, abstract_reading, window_texts
from retrieval.vectors.embeddings import Embedder
from retrieval.vectors.index import Filters
from retrieval.vectors.vector_book import VectorBook


def test_demo_loads_every_source(demo_load):
    settings, summary = demo_load
    counts = settings.catalog().counts()
    assert counts["papers"] > 1700 and counts["institutions"] > 2500 and counts["citations"] > 10000
    index = settings.index()
    assert index.count(Filters(kinds=("abstract",))) == counts["papers"]  # one abstract point per paper
    assert index.count(Filters(kinds=("window",))) > counts["papers"]  # most abstracts are longer than a window
    # The two real malformed OpenAlex works (a null and an empty title) are reported, not loaded.
    assert {f.key for f in summary.failures} == {"W4234567890", "W2963341956"}


def test_demo_vectors_come_from_its_book(demo_load):
    _, summary = demo_load
    # (8,106: every window, every passage, the abstracts too short for a window; an abstract with windows is their
    # mean, not a text the encoder reads)
    assert summary.counts["vectors computed"] == 0 and summary.counts["vectors read"] > 8000


def test_demo_book_holds_what_the_encoder_gives(demo, embedder):
    """When this fails, the model or what is embedded changed: `make demo-vectors` writes the book again."""
    book = VectorBook.read(vector_book_path(), embedder.model_id())
    assert not book.note, book.note
    papers = list(demo.catalog().iter_papers())[::60]
    readings = [abstract_reading(p, embedder.pieces) for p in papers]
    # What the encoder reads of an abstract: its windows, or the whole text when it has none (the abstract point of
    # one with windows is their mean)
    keys = [r.text for r in readings if not r.windows]
    keys += [t for p, r in zip(papers, readings, strict=True) for t in window_texts(p, r)]
    assert len(keys) > 50 and all(book.get(key) is not None for key in keys)
    stored = np.stack([book.get(key) for key in keys])
    assert np.abs(stored - Embedder.dense(embedder, keys)).max() < 1e-5


def test_the_shipped_vectors_answer_first_and_nothing_is_kept_beside_them(demo, embedder):
    """`with_vector_book` (a server's jobs, SCHOLARLOOM_VECTOR_BOOK=demo by default): a text the demo's book holds
    never reaches the encoder, an unseen one does; the vectors are the encoder's either way, and nothing is
    remembered beside the book; 'off' leaves the encoder as it is."""
    asked: list[list[str]] = []

    class Encoder:  # the run's encoder, noting what it is asked
        def model_id(self) -> str:
            return embedder.model_id()

        def dense(self, texts, batch_size=None):
            asked.append(list(texts))
            return embedder.dense(texts)

    booked = with_vector_book(Encoder())
    assert with_vector_book(embedder, "off") is embedder
    paper = demo.catalog().paper_view("1802.05365").paper
    known = window_texts(paper, abstract_reading(paper, embedder.pieces))[0]  # a text the demo's encoder read
    unseen = "A sentence that no paper of the demo holds, about vectors shipped with a corpus."
    vectors = booked.dense([known, unseen, known])
    assert asked == [[unseen]] and (booked.from_book, booked.computed) == (2, 1) and booked.used == {}
    assert np.abs(vectors - embedder.dense([known, unseen, known])).max() < 1e-5
    booked.dense([known])
    assert asked == [[unseen]]  # all from the book: the encoder is not asked at all


def test_demo_ships_full_text_with_pages(demo_load):
    settings, summary = demo_load
    archive = settings.archive()
    assert summary.counts["passages"] == archive.index.count(Filters(kinds=("passage",))) > 300
    hits = archive.passages("pretraining on the citation graph for document-level embeddings", limit=5).hits
    assert hits[0].paper.id == "2004.07180" and hits[0].page and hits[0].page > 1  # SPECTER, past its first page
    specter = archive.paper_view("2004.07180")
    assert [a.name for a in specter.authors][:2] == ["Arman Cohan", "Sergey Feldman"]
    assert specter.paper.doi == "10.18653/v1/2020.acl-main.207" and specter.paper.license == "CC BY 4.0"


def test_paper_merged_from_arxiv_and_openalex(demo):
    catalog = demo.catalog()
    paper_id = catalog.resolve_paper_id("W3045921891")
    assert paper_id == "2007.14454"
    assert catalog.resolve_paper_id("https://arxiv.org/abs/2006.07357v2") == "2006.07357"
    view = catalog.paper_view("2006.07357")
    assert [a.name for a in view.authors][3] == "Bobby Yan" and len(view.authors) == 8
    assert view.paper.all_authors_matched


def test_second_run_changes_nothing(demo):
    before = demo.catalog().counts()
    summary = load_demo(Writer.of(demo.archive()))
    assert summary.counts["added"] == summary.counts["updated"] == summary.counts["indexed"] == 0
    assert summary.counts["unchanged"] > 5000
    assert demo.catalog().counts() == before
    assert demo.index().count(Filters(kinds=("abstract",))) == before["papers"]


def test_corrupt_records_are_reported_and_skipped(make_instance, tmp_path):
    root = tmp_path / "corpus"
    (root / "arxiv_metadata").mkdir(parents=True)
    shutil.copytree(DEMO_DIR / "seed", root / "seed")
    shutil.copytree(DEMO_DIR / "arxiv_records", root / "arxiv_records")
    good = (DEMO_DIR / "arxiv_metadata" / "arxiv-abs-0704.0001-0704.1001.jsonl").read_text().splitlines()[:3]
    template = json.loads(good[0])
    bad = [
        "{not json",
        json.dumps({**template, "id": "0704.9001", "title": None}),
        json.dumps({**template, "id": "0704.9002", "authors": None}),
        json.dumps({**template, "id": "0704.9003", "categories": ["not", "a", "string"]}),
        json.dumps({**template, "id": "0704.9004", "abstract": "x" * 10_000_000}),
        json.dumps(["a list, not a record"]),
    ]
    (root / "arxiv_metadata" / "mixed.jsonl").write_text("\n".join([good[0], *bad, *good[1:]]) + "\n")
    settings = make_instance(tmp_path / "data")
    summary = load_demo(Writer.of(settings.archive()), root=root)
    assert settings.catalog().counts()["papers"] == 4  # three good lines and the seed record
    assert summary.counts["failed"] == len(bad)
    reasons = {f.key: f.reason for f in summary.failures}
    assert "not JSON" in reasons["line 2"] and "not an object" in reasons["line 7"]
    assert "title" in reasons["0704.9001"] and "abstract" in reasons["0704.9004"]
    written = summary.write_failures(tmp_path / "failures.jsonl").read_text().splitlines()
    assert len(written) == len(bad) and all(json.loads(line)["reason"] for line in written)


def _small_corpus(root):
    shutil.copytree(DEMO_DIR / "seed", root / "seed")
    shutil.copytree(DEMO_DIR / "arxiv_records", root / "arxiv_records")
    (root / "arxiv_metadata").mkdir(parents=True)
    head = (DEMO_DIR / "arxiv_metadata" / "arxiv-abs-0704.0001-0704.1001.jsonl").read_text().splitlines()[:4]
    (root / "arxiv_metadata" / "head.jsonl").write_text("\n".join(head) + "\n")
    return root


def test_a_written_book_loads_the_corpus_again_without_the_encoder(make_instance, tmp_path):
    root = _small_corpus(tmp_path / "corpus")
    first = make_instance(tmp_path / "one")
    written = load_demo(Writer.of(first.archive()), root=root, write_vectors=True)
    assert written.counts["vectors read"] == 0 and written.counts["vectors computed"] > 5
    assert len(VectorBook.read(vector_book_path(root), first.embedder().model_id())) == written.counts[
        "vectors computed"
    ]
    with pytest.raises(ValueError, match="empty index"):  # a loaded index would leave the book short
        load_demo(Writer.of(first.archive()), root=root, write_vectors=True)
    second = make_instance(tmp_path / "two")
    again = load_demo(Writer.of(second.archive()), root=root)
    assert again.counts["vectors computed"] == 0 and again.counts["vectors read"] == written.counts["vectors computed"]
    query = first.embedder().query("graph theory")
    found = [[(h.paper_id, round(h.score, 5)) for h in s.index().papers(query, limit=5)] for s in (first, second)]
    assert found[0] == found[1] and len(found[0]) == 5
