"""`retrieval.vectors.embeddings`: the batch size the encoder runs at changes its cost, never its vectors."""

import numpy as np

from retrieval.vectors.embeddings import Embedder, dense_batch
from retrieval.vectors.encoder import Device, Precision


def test_the_vectors_do_not_depend_on_the_batch_size(embedder):
    """The shipped vector book and every stored vector were made at other batch sizes than a later call's, so a text
    must get the same vector at any size asked, short or long, padded beside a longer one or cut at 256 word pieces
    (int8 runs one text at a time whatever is asked: its activations are quantised per run); float32 too."""
    texts = [
        "BERT",
        "Deep contextualized word representations model both complex characteristics of word use.",
        "A short one.",
        " ".join(f"token{i} of a passage far longer than the encoder reads" for i in range(120)),
        "Citation-informed transformers learn document-level representations of scientific papers.",
    ]
    assert dense_batch(Precision.INT8, Device.CPU, 32) == 1 and dense_batch(Precision.FLOAT32, Device.CPU) == 1
    float32 = Embedder(embedder.models_dir, threads=1, precision=Precision.FLOAT32)
    for encoder in (embedder, float32):
        one_by_one = Embedder.dense(encoder, texts, batch_size=1)  # the run's encoder itself, not what it remembers
        for size in (2, 5, 32):
            same = Embedder.dense(encoder, texts, batch_size=size)
            assert np.abs(same - one_by_one).max() <= (0 if encoder.precision == "int8" else 1e-6), size
