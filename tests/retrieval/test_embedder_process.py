"""The job worker's encoder in a process of its own: the same vectors as in process, at a lower priority, started
again when it died, and gone when the server is."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from retrieval.vectors.encoder_process import EmbedderFailed, EmbedderProcess
from tests.conftest import REPO

TEXTS = ["Hindsight logging for model training.", "Sparse retrieval over long scientific documents fails " * 20, ""]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat") as stat:  # a zombie waiting for its parent has ended too
        return stat.read().split(")")[-1].split()[0] == "Z"


@pytest.fixture
def encoder(models_dir):
    made = EmbedderProcess(models_dir)
    yield made
    made.close()


def test_the_same_vectors_from_another_process_at_a_lower_priority(encoder, embedder):
    assert encoder.count_tokens(TEXTS) == embedder.count_tokens(TEXTS)
    assert np.allclose(encoder.dense(TEXTS), embedder.dense(TEXTS), atol=1e-6)
    assert encoder.sparse(TEXTS) == embedder.sparse(TEXTS)
    (theirs,), (ours,) = encoder.documents(TEXTS[:1]), embedder.documents(TEXTS[:1])
    assert theirs.sparse == ours.sparse and np.allclose(theirs.dense, ours.dense, atol=1e-6)
    assert encoder.model_id() == embedder.model_id()
    assert encoder.pid not in (None, os.getpid())
    assert os.getpriority(os.PRIO_PROCESS, encoder.pid) >= os.getpriority(os.PRIO_PROCESS, 0) + 10
    assert encoder.count_tokens([]) == [] and encoder.sparse([]) == []


def test_two_encoder_processes_answer_in_order_what_one_would(models_dir, embedder):
    """SCHOLARLOOM_EMBED_WORKERS: a call's texts shared out between the processes, the answers joined in order; an
    abstract's reading (windows pooled from its pass) crosses the pipe too."""
    from ingest.writer import abstract_reading
    from retrieval.scholarly.models import Paper
    from retrieval.vectors.embeddings import Embedder
    from retrieval.vectors.encoder_process import EncoderPool

    texts = [f"Sentence {i} about {'long ' * (i % 7)}retrieval." for i in range(11)]
    sentences = " ".join(f"Finding {i} holds for every dialogue we measured in this study." for i in range(20))
    readings = [abstract_reading(Paper(id=f"p{i}", title=f"Paper {i}", abstract=sentences[: 200 + 250 * i]),
                                 embedder.pieces) for i in range(5)]  # fmt: skip
    pool = EncoderPool(models_dir, workers=2, threads=1)
    try:
        assert np.allclose(pool.dense(texts), embedder.dense(texts), atol=1e-6)
        assert pool.sparse(texts) == embedder.sparse(texts) and pool.count_tokens(texts) == embedder.count_tokens(texts)
        mine, theirs = pool.windowed(readings), Embedder.windowed(embedder, readings)
        assert [len(w) for _, w in mine] == [len(w) for _, w in theirs] and sum(len(w) for _, w in mine) > 5
        for (whole, windows), (expected, expected_windows) in zip(mine, theirs, strict=True):
            assert np.allclose(whole, expected, atol=1e-6) and np.allclose(windows, expected_windows, atol=1e-6)
        assert len({m.pid for m in pool.members}) == 2 and pool.dense([]).shape == (0, 384)
        assert pool.model_id() == embedder.model_id()
    finally:
        pool.close()
    assert all(m.pid is None for m in pool.members)


def test_a_dead_encoder_is_started_again_and_close_ends_it(encoder):
    encoder.count_tokens(["one"])
    first = encoder.pid
    os.kill(first, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not _gone(first) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert encoder.count_tokens(["one two"]) == [2]  # a new process answers
    assert encoder.pid not in (None, first)
    with pytest.raises(EmbedderFailed, match="unknown method"):
        encoder._call("query", "a question")  # only the document side crosses the pipe
    second = encoder.pid
    encoder.close()
    assert encoder.pid is None and _gone(second)


def test_the_encoder_ends_with_the_server(models_dir):
    """A server killed with SIGKILL runs no cleanup: its encoder must go by itself (a job left RUNNING is the
    restart's to resume; an encoder left behind would hold memory forever)."""
    script = (
        "import sys, time\n"
        "from retrieval.vectors.encoder_process import EmbedderProcess\n"
        f"encoder = EmbedderProcess({str(models_dir)!r})\n"
        "encoder.count_tokens(['x'])\n"
        "print(encoder.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    server = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        child = int(server.stdout.readline())
        assert not _gone(child)
        server.kill()
        server.wait(timeout=10)
        deadline = time.monotonic() + 10
        while not _gone(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(child)
    finally:
        server.kill()


def test_the_encoders_process_gets_the_gpu_variables_and_no_secret(models_dir, monkeypatch):
    """Asked for a GPU, the child is given the CUDA variables by name, and still nothing else of the parent's
    environment (no API key, no database URL)."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setenv("SCHOLARLOOM_LLM_API_KEY", "sk-never-in-the-encoder")
    for device, gpu_seen in (("cuda", True), ("cpu", False)):
        encoder = EmbedderProcess(models_dir, threads=1, device=device)
        try:
            assert encoder.count_tokens(["one"]) == [1]
            environment = (Path("/proc") / str(encoder.pid) / "environ").read_bytes().split(b"\0")
            assert (b"CUDA_VISIBLE_DEVICES=0" in environment) is gpu_seen
            assert not [v for v in environment if b"SCHOLARLOOM" in v or b"sk-never" in v]
            assert encoder.encoder_device()[0] in ("cpu", "cuda")
        finally:
            encoder.close()
