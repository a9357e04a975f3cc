"""`scholarloom.runtime`: what a server's jobs run with."""

import numpy as np

from ingest.demo import vector_book_path
from ingest.writer import abstract_reading, window_texts
from retrieval.vectors.vector_book import VectorBook
from scholarloom.runtime import Runtime


def test_a_servers_jobs_read_the_demos_vectors_without_starting_their_encoder(demo, make_instance, tmp_path):
    """A job of `serve` embedding a demo abstract's window (an index rebuild, say) takes its vector from the shipped
    book: the jobs' encoder process is not even started."""
    context = Runtime.build(make_instance(tmp_path / "instance")).job_context()
    try:
        paper = demo.catalog().paper_view("1802.05365").paper
        known = window_texts(paper, abstract_reading(paper, demo.archive().embedder.pieces))[0]
        vectors = context.writer.embedder.dense([known])
        assert context.writer.embedder.pid is None
        book = VectorBook.read(vector_book_path(), context.writer.embedder.model_id())
        assert np.array_equal(vectors[0], book.get(known))
    finally:
        context.close()
