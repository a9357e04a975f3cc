"""The job worker's encoder in a process of its own: the same vectors as in process, at a lower priority, started
again when it died, and gone when the server is."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

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
