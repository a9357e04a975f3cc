"""The dense encoder run directly: fastembed's vectors, windows pooled from their abstract's pass, int8 weights."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.writer import Windowing, abstract_reading
from retrieval.scholarly.models import Paper
from retrieval.vectors.embeddings import Embedder
from retrieval.vectors.encoder import BODY, DenseEncoder, Precision, Windowed, _passes

TEXTS = [
    "Deep contextualized word representations model complex characteristics of word use.",
    "A dialogue state tracker reaches 55.29% joint goal accuracy on MultiWOZ 2.1.",
    "x",
]


@pytest.fixture(scope="module")
def encoder(models_dir) -> DenseEncoder:
    dense_dir = models_dir / "all-MiniLM-L6-v2-onnx"
    return DenseEncoder(dense_dir / "model.onnx", dense_dir / "tokenizer.json", threads=1)


def test_vectors_are_fastembeds(encoder, models_dir):
    """Our own run of the model gives what fastembed gave (mean over the mask, L2), long texts cut at 256."""
    from fastembed import TextEmbedding

    fastembed = TextEmbedding("sentence-transformers/all-MiniLM-L6-v2",
                              specific_model_path=str(models_dir / "all-MiniLM-L6-v2-onnx"), threads=1)  # fmt: skip
    texts = [*TEXTS, " ".join(["tracking"] + ["the state of a dialogue"] * 80)]
    expected = np.stack(list(fastembed.embed(texts, batch_size=4)))
    for batch in (1, 3):
        assert np.abs(encoder.vectors(texts, batch) - expected).max() < 1e-5


def _reading(encoder, sentences: list[str], windows) -> Windowed:
    head = "Tracking dialogue state."
    return Windowed(" ".join([head, *sentences]), encoder.pieces([head])[0], encoder.pieces(sentences), windows)


def test_a_window_of_everything_is_the_whole_text(encoder):
    sentences = ["We track the state of a dialogue.", "It works well.", "Joint goal accuracy is 55.29%."]
    [(whole, windows)] = encoder.windowed([_reading(encoder, sentences, [(0, 3), (0, 1)])], 8)
    assert np.abs(whole - encoder.vectors([" ".join(["Tracking dialogue state.", *sentences])], 1)[0]).max() < 1e-5
    assert np.abs(windows[0] - whole).max() < 1e-6  # every state of the pass: the same mean
    assert float(windows[1] @ whole) < 0.999  # a window of one sentence is not the whole


def test_windows_past_the_first_pass_are_read_again_with_the_title(encoder):
    """A window whose sentences lie past the encoder's 254 word pieces is pooled from a pass of the title and the
    windows that follow; a window alone in its pass is exactly the title and its sentences encoded together."""
    sentences = [f"Sentence number {i} says something about dialogue state tracking and slots." for i in range(50)]
    reading = _reading(encoder, sentences, [(i, i + 10) for i in range(0, 50, 10)])  # about 120 word pieces each
    passes, spots = _passes(reading)
    assert len(passes[0]) == BODY and all(len(p) <= BODY for p in passes) and len(passes) >= 3
    assert spots[0][0] == 0 and spots[-1][0] == len(passes) - 1
    assert passes[-1][: len(reading.head)] == reading.head  # the title again before the later windows
    [(_, windows)] = encoder.windowed([reading], 4)
    alone = [(a, b) for k, (a, b) in zip([k for k, _ in spots], reading.windows, strict=True)
             if sum(1 for j, _ in spots if j == k) == 1 and k > 0]  # fmt: skip
    assert alone, "a window alone in a later pass"
    a, b = alone[-1]
    text = " ".join(["Tracking dialogue state.", *sentences[a:b]])
    index = reading.windows.index((a, b))
    assert np.abs(windows[index] - encoder.vectors([text], 1)[0]).max() < 1e-5
    assert all(abs(float(np.linalg.norm(v)) - 1) < 1e-5 for v in windows)


def test_the_writers_reading_of_an_abstract(embedder):
    short = Paper(id="p1", title="A title", abstract="One sentence only.")
    assert abstract_reading(short, embedder.pieces).windows == []
    abstract = " ".join(f"Finding {i} holds for every dialogue we measured in this study." for i in range(30))
    reading = abstract_reading(Paper(id="p2", title="A title", abstract=abstract), embedder.pieces, Windowing(80))
    assert reading.text == "A title. " + abstract and len(reading.parts) == 30
    assert reading.windows[0][0] == 0 and reading.windows[-1][1] == 30
    assert all(len(reading.head) + sum(len(p) for p in reading.parts[a:b]) <= 78 for a, b in reading.windows)
    assert len(reading.keys()) == 1 + len(reading.windows)


def test_int8_weights_are_made_here_and_named_apart(models_dir, tmp_path):
    """The int8 model is made from the float32 one (no download), gives vectors near the float32 ones, and is
    another model to a vector book."""
    import shutil

    shutil.copytree(models_dir, tmp_path / "models")
    float32 = Embedder(tmp_path / "models", threads=1, precision=Precision.FLOAT32)
    int8 = Embedder(tmp_path / "models", threads=1, precision=Precision.INT8)
    assert int8.model_id() != float32.model_id()
    assert (tmp_path / "models" / "all-MiniLM-L6-v2-onnx" / "model-int8.onnx").is_file()
    cosines = (int8.dense(TEXTS) * float32.dense(TEXTS)).sum(axis=1)
    assert cosines.min() > 0.97, cosines


def test_the_gpu_is_asked_for_only_where_onnxruntime_has_one():
    from retrieval.vectors.encoder import Device, providers

    cpu_only = ["AzureExecutionProvider", "CPUExecutionProvider"]
    with_gpu = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    assert providers(Device.CPU, with_gpu) == (["CPUExecutionProvider"], None)
    assert providers(Device.AUTO, cpu_only) == (["CPUExecutionProvider"], None)
    assert providers(Device.AUTO, with_gpu) == (with_gpu, None)
    assert providers(Device.CUDA, with_gpu) == (with_gpu, None)
    asked, note = providers(Device.CUDA, cpu_only)
    assert asked == ["CPUExecutionProvider"] and "onnxruntime-gpu" in note and "runs on the CPU" in note


def test_cuda_asked_on_a_machine_without_it_runs_on_the_cpu_and_says_so(models_dir, caplog):
    """SCHOLARLOOM_EMBED_DEVICE=cuda where onnxruntime has no CUDA provider (this machine): the same vectors, from
    the CPU, with a warning that says what to install."""
    import onnxruntime

    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("this machine's onnxruntime has the CUDA provider")
    gpu = Embedder(models_dir, threads=1, device="cuda")
    with caplog.at_level("WARNING"):
        vectors = gpu.dense(TEXTS)
    device, note = gpu.encoder_device()
    assert device == "cpu" and "onnxruntime-gpu" in note
    assert any("SCHOLARLOOM_EMBED_DEVICE=cuda" in r.getMessage() for r in caplog.records)
    assert np.allclose(vectors, Embedder(models_dir, threads=1).dense(TEXTS), atol=1e-6)
    assert Embedder(models_dir, threads=1, device="auto").encoder_device() == ("cpu", None)
