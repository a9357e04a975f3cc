"""An encoder in a process of its own, for the server's job worker.

Embedding is mostly work that holds the GIL (fastembed's BM25 is pure Python; tokenising and pooling run in Python
around the ONNX session). In the server's job thread it competed with the request threads for the one GIL, and chat
turns during a job took up to twice as long (BENCHMARKS.md). Here the models live in a child process (spawned, at
the worker's lower priority) that answers `count_tokens`, `pieces`, `dense`, `windowed`, `sparse` and `documents`
over a pipe: the server only sends texts and receives vectors. Like the PDF worker it is a plain
`python -m retrieval.vectors.encoder_process` subprocess, not multiprocessing's spawn (which would import the
parent's `__main__`: the whole CLI, or a test runner). The child dies with the server (Linux: `PR_SET_PDEATHSIG`) and
is started again when it is found gone; a call it could not answer raises `EmbedderFailed` (the job fails and can
be retried).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

from retrieval.vectors.embeddings import Embedded, Embedder, SparseVector
from retrieval.vectors.encoder import DEFAULT_PRECISION, DIM, Device, Precision, Windowed

_METHODS = frozenset({"count_tokens", "pieces", "dense", "windowed", "sparse", "documents", "encoder_device"})
# What the child needs of the parent's environment to reach a GPU, and nothing else (no API keys, no database URLs).
_GPU_ENVIRONMENT = ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH")


class EmbedderFailed(RuntimeError):
    """The encoder's process could not answer (it died, or the call raised there)."""


class EmbedderProcess:
    """`Embedder`'s document side (`count_tokens`, `pieces`, `dense`, `windowed`, `sparse`, `documents`, `model_id`)
    in a child process."""

    def __init__(
        self,
        models_dir: Path,
        threads: int | None = None,
        nice: int = 10,
        precision: Precision = DEFAULT_PRECISION,
        device: Device = Device.CPU,
    ) -> None:
        self.models_dir = Path(models_dir)
        self.threads = threads
        self.nice = nice
        self.precision = Precision(precision)
        self.device = Device(device)
        # Loads nothing: only `model_id` (hashes the model files).
        self._here = Embedder(self.models_dir, threads, precision=self.precision, device=self.device)
        self._lock = threading.Lock()
        self._process = None
        self._conn = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None and self._process.poll() is None else None

    def model_id(self) -> str:
        return self._here.model_id()

    def count_tokens(self, texts: list[str]) -> list[int]:
        return self._call("count_tokens", list(texts)) if texts else []

    def pieces(self, texts: list[str]) -> list[list[int]]:
        return self._call("pieces", list(texts)) if texts else []

    def dense(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        return self._call("dense", list(texts), batch_size)

    def windowed(self, texts: list[Windowed], batch_size: int | None = None) -> list[tuple[np.ndarray, list]]:
        return self._call("windowed", list(texts), batch_size) if texts else []

    def sparse(self, texts: list[str]) -> list[SparseVector]:
        return self._call("sparse", list(texts)) if texts else []

    def documents(self, texts: list[str], batch_size: int | None = None) -> list[Embedded]:
        return self._call("documents", list(texts), batch_size) if texts else []

    def encoder_device(self) -> tuple[Device, str | None]:
        return self._call("encoder_device")

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _call(self, method: str, *args):
        """Ask the child; a child that is gone (killed, or died mid-call) is replaced and asked once more, since every
        call is a pure function of its arguments."""
        with self._lock:
            for attempt in (1, 2):
                if self._conn is None:
                    self._start()
                sender, receiver = self._conn
                try:
                    sender.send((method, args))
                    ok, value = receiver.recv()
                    break
                except (EOFError, OSError) as exc:
                    self._stop()
                    if attempt == 2:
                        raise EmbedderFailed(f"the encoder's process ended during {method}") from exc
        if not ok:
            raise EmbedderFailed(value)
        return value

    def _start(self) -> None:
        self._stop()
        root = str(Path(__file__).resolve().parent.parent)
        env = {"PYTHONPATH": root, "PATH": os.defpath, "LANG": "C.UTF-8"}
        if self.device is not Device.CPU:
            env |= {name: os.environ[name] for name in _GPU_ENVIRONMENT if name in os.environ}
        command = [sys.executable, "-m", "retrieval.vectors.encoder_process", str(self.models_dir),
                   str(self.threads or 0), str(self.nice), str(os.getpid()), self.precision.value,
                   self.device.value]  # fmt: skip
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self._conn = (Connection(os.dup(self._process.stdin.fileno()), readable=False),
                      Connection(os.dup(self._process.stdout.fileno()), writable=False))  # fmt: skip
        self._process.stdin.close()
        self._process.stdout.close()

    def _stop(self) -> None:
        if self._conn is not None:
            sender, receiver = self._conn
            try:
                sender.send(("stop", ()))
            except (OSError, ValueError):
                pass
            sender.close()
            receiver.close()
            self._conn = None
        if self._process is not None:
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=5)
            self._process = None


class EncoderPool:
    """Several encoder processes feeding one writer (SCHOLARLOOM_EMBED_WORKERS): each call's texts are cut into one
    share per process, balanced by length, embedded at once and joined in order. Two processes of one ONNX thread
    each do more on two cores than one process of two threads (BENCHMARKS.md, "The encoder"); a machine with more
    cores runs more. Word pieces are counted here (the tokenizer alone, no model)."""

    def __init__(self, models_dir: Path, workers: int, threads: int | None = None, nice: int = 0,
                 precision: Precision = DEFAULT_PRECISION, device: Device = Device.CPU) -> None:  # fmt: skip
        from concurrent.futures import ThreadPoolExecutor

        threads = threads or max(1, (os.cpu_count() or 1) // workers)
        self.members = [EmbedderProcess(models_dir, threads, nice, precision, device) for _ in range(workers)]
        self._here = self.members[0]._here
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="encoder")

    def model_id(self) -> str:
        return self._here.model_id()

    def count_tokens(self, texts: list[str]) -> list[int]:
        return self._here.count_tokens(texts)

    def pieces(self, texts: list[str]) -> list[list[int]]:
        return self._here.pieces(texts)

    def dense(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        shares = self._spread("dense", texts, len, batch_size)
        return np.concatenate(shares) if shares else np.zeros((0, DIM), dtype=np.float32)

    def windowed(self, texts: list[Windowed], batch_size: int | None = None) -> list[tuple[np.ndarray, list]]:
        return [r for share in self._spread("windowed", texts, lambda t: len(t.head) + sum(map(len, t.parts)),
                                            batch_size) for r in share]  # fmt: skip

    def sparse(self, texts: list[str]) -> list[SparseVector]:
        return [v for share in self._spread("sparse", texts, len) for v in share]

    def documents(self, texts: list[str], batch_size: int | None = None) -> list[Embedded]:
        return [v for share in self._spread("documents", texts, len, batch_size) for v in share]

    def encoder_device(self) -> tuple[Device, str | None]:
        return self.members[0].encoder_device()

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        for member in self.members:
            member.close()

    def _spread(self, method: str, items: list, size, *args) -> list:
        """Each member's answer for its share of `items` (contiguous, about equal in `size`), in order."""
        if not items:
            return []
        total, shares, current, filled = sum(size(i) for i in items) or 1, [], [], 0
        for item in items:
            current.append(item)
            filled += size(item)
            if filled >= total * (len(shares) + 1) / len(self.members) and len(shares) < len(self.members) - 1:
                shares.append(current)
                current = []
        shares.append(current)
        calls = [self._pool.submit(getattr(m, method), share, *args)
                 for m, share in zip(self.members, shares, strict=False) if share]  # fmt: skip
        return [call.result() for call in calls]


def _die_with(parent: int) -> None:
    """Ask Linux to end this process when its parent ends (a killed server leaves no encoder behind)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the pipe's end still stops the loop below
        pass
    if os.getppid() != parent:  # the parent ended before the request was made
        os._exit(0)


def _serve(models_dir: str, threads: int, nice: int, parent: int, precision: str, device: str) -> None:
    _die_with(parent)
    if nice:
        os.nice(nice)
    receiver = Connection(os.dup(0), writable=False)
    sender = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)  # what a library prints goes to stderr, never into the answers
    embedder = Embedder(Path(models_dir), threads or None, precision=Precision(precision), device=Device(device))
    while True:
        try:
            method, args = receiver.recv()
        except (EOFError, OSError):
            return
        if method == "stop":
            return
        if method not in _METHODS:
            sender.send((False, f"unknown method {str(method)[:40]!r}"))
            continue
        try:
            sender.send((True, getattr(embedder, method)(*args)))
        except Exception as exc:  # the caller's job fails with this message and can be retried
            sender.send((False, f"{method} failed: {type(exc).__name__}: {exc}"))


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6])
