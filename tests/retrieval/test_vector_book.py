"""A vector book answers for the texts it holds, only for the model that wrote it, and never breaks a load."""

import numpy as np

from retrieval.vectors.embeddings import DENSE_DIM
from retrieval.vectors.vector_book import BookedEmbedder, VectorBook, text_key, write_book


def _vector(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal(DENSE_DIM).astype(np.float32)
    return vector / np.linalg.norm(vector)


def test_a_book_reads_back_only_for_its_model(tmp_path):
    path = tmp_path / "book.npz"
    write_book(path, "model-a", {text_key("first"): _vector(1), text_key("second"): _vector(2)})
    book = VectorBook.read(path, "model-a")
    assert len(book) == 2 and not book.note
    assert np.array_equal(book.get("second"), _vector(2)) and book.get("third") is None
    other = VectorBook.read(path, "model-b")
    assert len(other) == 0 and "another model" in other.note
    assert "no vector book" in VectorBook.read(tmp_path / "missing.npz", "model-a").note
    (tmp_path / "broken.npz").write_bytes(b"not a zip at all")
    assert "unreadable" in VectorBook.read(tmp_path / "broken.npz", "model-a").note


def test_keys_that_end_in_a_nul_byte_survive(tmp_path):
    """One text in 256 has a key ending in 0x00; numpy's fixed-width bytes would silently drop it."""
    texts = [t for t in (f"text {i}" for i in range(5000)) if text_key(t).endswith(b"\0")][:3]
    assert texts
    write_book(tmp_path / "book.npz", "m", {text_key(t): _vector(i) for i, t in enumerate(texts)})
    book = VectorBook.read(tmp_path / "book.npz", "m")
    assert all(np.array_equal(book.get(t), _vector(i)) for i, t in enumerate(texts))


def test_the_same_vectors_write_the_same_file(tmp_path):
    vectors = {text_key(str(i)): _vector(i) for i in range(5)}
    first = write_book(tmp_path / "one.npz", "m", vectors).read_bytes()
    second = write_book(tmp_path / "two.npz", "m", dict(reversed(vectors.items()))).read_bytes()
    assert first == second


def test_booked_embedder_reads_what_it_holds_and_computes_the_rest(embedder):
    sentinel = _vector(7)  # no encoder gives this vector to "known text": it can only come from the book
    book = VectorBook("m", {text_key("known text"): 0}, sentinel[None, :])
    booked = BookedEmbedder(embedder, book)
    vectors = booked.dense(["known text", "graph neural networks for molecules"])
    assert np.array_equal(vectors[0], sentinel)
    assert np.allclose(vectors[1], embedder.dense(["graph neural networks for molecules"])[0], atol=1e-6)
    assert (booked.from_book, booked.computed) == (1, 1)
    assert set(booked.used) == {text_key("known text"), text_key("graph neural networks for molecules")}
    documents = booked.documents(["known text"])
    assert np.array_equal(documents[0].dense, sentinel) and documents[0].sparse.indices  # BM25 still computed
    assert booked.count_tokens(["known text"]) == embedder.count_tokens(["known text"])  # the rest is delegated
