"""`retrieval.vectors.embeddings`: the batch size the encoder runs at changes its cost, never its vectors."""

import numpy as np

from retrieval.vectors.embeddings import Embedder, dense_batch


def test_the_vectors_do_not_depend_on_the_batch_size(embedder):
    """`dense_batch` picks the cheapest batch size for the threads (one text at a time on one thread); the shipped
    vector book and every stored vector were made at other sizes, so a text must get the same vector at any size,
    short or long, padded beside a longer one or cut at 256 word pieces."""
    texts = [
        "BERT",
        "Deep contextualized word representations model both complex characteristics of word use.",
        "A short one.",
        " ".join(f"token{i} of a passage far longer than the encoder reads" for i in range(120)),
        "Citation-informed transformers learn document-level representations of scientific papers.",
    ]
    assert dense_batch(1) == 1
    one_by_one = Embedder.dense(embedder, texts, batch_size=1)  # the run's encoder itself, not what it remembers
    for size in (2, 5, 32):
        assert np.array_equal(Embedder.dense(embedder, texts, batch_size=size), one_by_one), size
