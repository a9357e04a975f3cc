"""The ONNX encoder built from the shipped weights computes BERT exactly, and fastembed loads it offline."""

import json
import zipfile

import numpy as np
import onnxruntime as ort
import pytest

from retrieval.vectors.embeddings import prepare_models
from retrieval.vectors.onnx_export import model_zip, read_safetensors


def _layer_norm(x, weight, bias, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _numpy_bert(w: dict, ids: np.ndarray, mask: np.ndarray, heads: int = 12) -> np.ndarray:
    """A plain numpy forward pass of the BERT encoder, written independently of the ONNX graph."""
    from math import erf

    gelu = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))
    seq = ids.shape[1]
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:seq]
    x = x + w["embeddings.token_type_embeddings.weight"][0]
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    bias = (1.0 - mask[:, None, None, :]) * -1e4
    hidden = x.shape[-1]
    dim = hidden // heads
    for i in range(6):
        p = f"encoder.layer.{i}"
        lin = lambda t, name: t @ w[f"{name}.weight"].T + w[f"{name}.bias"]  # noqa: E731
        split = lambda t: t.reshape(t.shape[0], seq, heads, dim).transpose(0, 2, 1, 3)  # noqa: E731
        q, k, v = (split(lin(x, f"{p}.attention.self.{n}")) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dim) + bias
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(x.shape[0], seq, hidden)
        x = _layer_norm(
            lin(context, f"{p}.attention.output.dense") + x,
            w[f"{p}.attention.output.LayerNorm.weight"],
            w[f"{p}.attention.output.LayerNorm.bias"],
        )
        inner = gelu(lin(x, f"{p}.intermediate.dense"))
        x = _layer_norm(
            lin(inner, f"{p}.output.dense") + x, w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"]
        )
    return x


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return prepare_models(tmp_path_factory.mktemp("models"))


def test_onnx_graph_matches_numpy_reference(models):
    dense_dir, _ = models
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(dense_dir / "tokenizer.json"))
    tokenizer.enable_padding()
    encodings = tokenizer.encode_batch(["Hindsight logging replays log statements.", "A short one."])
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    session = ort.InferenceSession(str(dense_dir / "model.onnx"))
    got = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    with zipfile.ZipFile(model_zip()) as archive:
        weights = {k: v.astype(np.float64) for k, v in read_safetensors(archive.read("model.safetensors")).items()}
    expected = _numpy_bert(weights, ids, mask.astype(np.float64))
    valid = mask.astype(bool)
    assert got.shape == expected.shape == (2, ids.shape[1], 384)
    assert np.abs(got[valid] - expected[valid]).max() < 1e-3


def test_tokenizer_truncates_at_256(models):
    dense_dir, _ = models
    config = json.loads((dense_dir / "tokenizer_config.json").read_text())
    assert config["model_max_length"] == 256


def test_embedder_offline_similarity(embedder):
    vectors = embedder.dense(["A man is eating food.", "Someone is eating a meal.", "The stock market fell sharply."])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similar, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert similar > 0.6 and unrelated < 0.2
