"""Dense vectors kept beside a corpus, so that loading it again does not run the encoder again.

A book maps the SHA-256 of a text to the vector the encoder gave it, and names the encoder that made them
(`Embedder.model_id`): a book written by another model is ignored, never mixed in. The bundled demo ships one,
so `make demo` (and every fresh test run) reads 9,000 vectors instead of computing them for three minutes.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retrieval.vectors.embeddings import DENSE_DIM, Embedded
from retrieval.vectors.encoder import Windowed

KEY_BYTES = 16


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:KEY_BYTES]


@dataclass(frozen=True)
class VectorBook:
    model: str
    rows: dict[bytes, int]
    vectors: np.ndarray
    note: str = ""  # why the book is empty, when it is

    @classmethod
    def empty(cls, model: str, note: str = "") -> VectorBook:
        return cls(model, {}, np.zeros((0, DENSE_DIM), dtype=np.float32), note)

    @classmethod
    def read(cls, path: Path, model: str) -> VectorBook:
        """The book at `path` when it was written by `model`; an empty book (with a note saying why) otherwise."""
        if not path.is_file():
            return cls.empty(model, f"no vector book at {path.name}")
        try:
            with np.load(path, allow_pickle=False) as stored:
                written_by = str(stored["model"])
                keys, vectors = stored["keys"], stored["vectors"]
        except (OSError, ValueError, KeyError) as exc:
            return cls.empty(model, f"unreadable vector book {path.name}: {exc}")
        if written_by != model:
            return cls.empty(model, f"{path.name} was written by another model; every vector is computed afresh")
        if vectors.ndim != 2 or vectors.shape[1] != DENSE_DIM or vectors.dtype != np.float32:
            return cls.empty(model, f"{path.name} holds vectors of the wrong shape {vectors.shape}")
        if keys.dtype != np.uint8 or keys.shape != (len(vectors), KEY_BYTES):
            return cls.empty(model, f"{path.name} holds keys of the wrong shape {keys.shape}")
        return cls(model, {k.tobytes(): i for i, k in enumerate(keys)}, vectors)

    def __len__(self) -> int:
        return len(self.rows)

    def get(self, text: str) -> np.ndarray | None:
        row = self.rows.get(text_key(text))
        return None if row is None else self.vectors[row]


def write_book(path: Path, model: str, vectors: dict[bytes, np.ndarray]) -> Path:
    """Write `vectors` (text key -> vector) sorted by key, so the same vectors always make the same file."""
    keys = sorted(vectors)
    stacked = np.stack([vectors[k] for k in keys]).astype(np.float32) if keys else np.zeros((0, DENSE_DIM), np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial.npz")
    # Raw bytes as uint8 rows: numpy's fixed-width bytes type drops trailing NULs, and one digest in 256 ends in one.
    key_array = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), KEY_BYTES)
    np.savez_compressed(partial, model=np.array(model), keys=key_array, vectors=stacked)
    partial.replace(path)
    return path


class BookedEmbedder:
    """An embedder that takes dense vectors from a book before it runs the encoder. With `remember`, it keeps every
    vector it handed out (`used`), so a load can write the book again; a long-lived one (a server's jobs) does not.
    The book may be given as a function that reads it, called on the first `dense`. Everything else is the wrapped
    embedder's."""

    def __init__(self, embedder, book: VectorBook | Callable[[], VectorBook], remember: bool = True) -> None:
        self._inner = embedder
        self._book = book
        self.remember = remember
        self.used: dict[bytes, np.ndarray] = {}
        self.from_book = 0
        self.computed = 0
        self._lock = threading.Lock()

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    @property
    def book(self) -> VectorBook:
        with self._lock:
            if not isinstance(self._book, VectorBook):
                self._book = self._book()
            return self._book

    def dense(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        book = self.book
        found = [book.get(t) for t in texts]
        missing = [i for i, vector in enumerate(found) if vector is None]
        fresh = iter(self._inner.dense([texts[i] for i in missing], batch_size=batch_size)) if missing else iter(())
        vectors = [vector if vector is not None else next(fresh) for vector in found]
        with self._lock:
            self.from_book += len(texts) - len(missing)
            self.computed += len(missing)
            if self.remember:
                for text, vector in zip(texts, vectors, strict=True):
                    self.used[text_key(text)] = vector
        if not vectors:
            return np.zeros((0, DENSE_DIM), dtype=np.float32)
        return np.stack(vectors)

    def windowed(self, texts: list[Windowed], batch_size: int | None = None) -> list[tuple[np.ndarray, list]]:
        """A reading's vectors from the book when it holds all of them (`Windowed.keys`), else from the encoder."""
        book = self.book
        found = [[book.get(key) for key in text.keys()] for text in texts]
        missing = [i for i, vectors in enumerate(found) if any(v is None for v in vectors)]
        fresh = iter(self._inner.windowed([texts[i] for i in missing], batch_size)) if missing else iter(())
        result, computed = [], set(missing)
        for i in range(len(texts)):
            whole, windows = next(fresh) if i in computed else (found[i][0], found[i][1:])
            result.append((whole, list(windows)))
        with self._lock:  # counted in vectors, as `dense` counts them
            self.computed += sum(len(found[i]) for i in missing)
            self.from_book += sum(len(vectors) for vectors in found) - sum(len(found[i]) for i in missing)
            if self.remember:
                for text, (whole, windows) in zip(texts, result, strict=True):
                    for key, vector in zip(text.keys(), [whole, *windows], strict=True):
                        self.used[text_key(key)] = vector
        return result

    def documents(self, texts: list[str], batch_size: int | None = None) -> list[Embedded]:
        dense_vectors = self.dense(texts, batch_size=batch_size)
        sparse_vectors = self._inner.sparse(texts)
        return [Embedded(d, s) for d, s in zip(dense_vectors, sparse_vectors, strict=True)]
