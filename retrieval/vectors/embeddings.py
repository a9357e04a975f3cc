"""Dense (MiniLM, ONNX) and sparse (BM25) embeddings, loaded offline from the models directory."""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DENSE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DENSE_DIM = 384
DENSE_MAX_TOKENS = 256  # the encoder reads this many word pieces, [CLS] and [SEP] included, then stops
SPARSE_MODEL = "Qdrant/bm25"
BM25_AVG_LEN = 120.0  # mean abstract length in tokens after stop words, measured on the demo corpus
_STOPWORDS = Path(__file__).parent / "data" / "stopwords_en.txt"


def dense_batch(threads: int | None) -> int:
    """Texts per ONNX run, measured (`bench/encoder_batch.py`, BENCHMARKS.md): on one thread one at a time is the
    cheapest (49 ms of CPU a text against 79 in batches of 32); on two, batches of 8 (33 ms a text against 49). The
    vectors are the same; a larger batch only moves more memory."""
    return 1 if (threads or os.cpu_count() or 1) == 1 else 8


@dataclass(frozen=True)
class SparseVector:
    indices: list[int]
    values: list[float]


@dataclass(frozen=True)
class Embedded:
    dense: np.ndarray
    sparse: SparseVector


def prepare_models(models_dir: Path) -> tuple[Path, Path]:
    """Make sure the ONNX encoder and the BM25 folder exist; builds them offline when missing."""
    from retrieval.vectors.onnx_export import export_minilm

    dense_dir = models_dir / "all-MiniLM-L6-v2-onnx"
    if not (dense_dir / "model.onnx").exists():
        export_minilm(dense_dir)
    bm25_dir = models_dir / "bm25"
    if not (bm25_dir / "config.json").exists():
        bm25_dir.mkdir(parents=True, exist_ok=True)
        (bm25_dir / "config.json").write_text("{}")
    return dense_dir, bm25_dir


QUERIES_REMEMBERED = 256


class Embedder:
    """Loads both models on first use (a second or so), then embeds documents and queries."""

    def __init__(self, models_dir: Path, threads: int | None = None, remembered_texts: int = 20_000) -> None:
        self.models_dir = models_dir
        self.threads = threads
        self.remembered_texts = remembered_texts  # ~1.6 KB each: 20,000 sentences are about 32 MB
        self._remembered: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries: OrderedDict[str, Embedded] = OrderedDict()  # the last QUERIES_REMEMBERED queries
        self._cache_lock = threading.Lock()
        self._lock = threading.Lock()
        self._dense = None
        self._sparse = None
        self._tokenizer = None
        self._model_id: str | None = None

    def model_id(self) -> str:
        """Names the dense encoder exactly: a digest of its files and of the library that pools its output. Two
        embedders with one id give the same vectors."""
        with self._lock:
            if self._model_id is None:
                from importlib.metadata import version

                dense_dir, _ = prepare_models(self.models_dir)
                digest = hashlib.sha256(f"fastembed {version('fastembed')}".encode())
                for name in ("model.onnx", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
                    digest.update(name.encode() + b"\0" + (dense_dir / name).read_bytes())
                self._model_id = f"{DENSE_MODEL}@{digest.hexdigest()[:16]}"
        return self._model_id

    def _load(self):
        with self._lock:
            if self._dense is None:
                from fastembed import SparseTextEmbedding, TextEmbedding

                from retrieval.vectors.punctuation import use_kept_punctuation

                dense_dir, bm25_dir = prepare_models(self.models_dir)
                use_kept_punctuation(self.models_dir)
                stopwords = set(_STOPWORDS.read_text().split())
                self._sparse = SparseTextEmbedding(
                    SPARSE_MODEL, specific_model_path=str(bm25_dir), avg_len=BM25_AVG_LEN, stopwords=stopwords
                )
                self._dense = TextEmbedding(DENSE_MODEL, specific_model_path=str(dense_dir), threads=self.threads)
        return self._dense, self._sparse

    def count_tokens(self, texts: list[str]) -> list[int]:
        """How many word pieces the dense model sees in each text (without its two special tokens)."""
        with self._lock:
            if self._tokenizer is None:
                from tokenizers import Tokenizer

                dense_dir, _ = prepare_models(self.models_dir)
                tokenizer = Tokenizer.from_file(str(dense_dir / "tokenizer.json"))
                tokenizer.no_truncation()
                tokenizer.no_padding()
                self._tokenizer = tokenizer
        if not texts:
            return []
        return [len(e.ids) - 2 for e in self._tokenizer.encode_batch(texts, add_special_tokens=True)]

    def dense(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        dense, _ = self._load()
        batch_size = batch_size or dense_batch(self.threads)
        if not texts:
            return np.zeros((0, DENSE_DIM), dtype=np.float32)
        # Batches of similar length pad less; the vectors come back in the callers' order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = np.stack(list(dense.embed([texts[i] for i in order], batch_size=batch_size)))
        result = np.empty_like(vectors)
        result[order] = vectors
        return result

    def dense_remembered(self, texts: list[str]) -> np.ndarray:
        """Dense vectors of short texts that recur (the sentences of abstracts quoted in answers), remembered in a
        bounded least-recently-used cache: a paper that many users find is embedded once, not per question."""
        with self._cache_lock:
            known = {t: self._remembered[t] for t in texts if t in self._remembered}
            for t in known:
                self._remembered.move_to_end(t)
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            for text, vector in zip(missing, self.dense(missing), strict=True):
                known[text] = vector
            with self._cache_lock:
                for text in missing:
                    self._remembered[text] = known[text]
                while len(self._remembered) > self.remembered_texts:
                    self._remembered.popitem(last=False)
        if not texts:
            return np.zeros((0, DENSE_DIM), dtype=np.float32)
        return np.stack([known[t] for t in texts])

    def sparse(self, texts: list[str]) -> list[SparseVector]:
        _, sparse = self._load()
        return [SparseVector(s.indices.tolist(), s.values.tolist()) for s in sparse.embed(texts, batch_size=256)]

    def documents(self, texts: list[str], batch_size: int | None = None) -> list[Embedded]:
        dense_vectors = self.dense(texts, batch_size=batch_size)
        sparse_vectors = self.sparse(texts)
        return [Embedded(d, s) for d, s in zip(dense_vectors, sparse_vectors, strict=True)]

    def query(self, text: str) -> Embedded:
        """A query's vectors. The last few queries are remembered: one turn asks the papers and the full text with
        the same words (the vectors are shared: read them, never change them)."""
        with self._cache_lock:
            if (known := self._queries.get(text)) is not None:
                self._queries.move_to_end(text)
                return known
        dense, sparse = self._load()
        dense_vector = next(iter(dense.query_embed(text)))
        sparse_vector = next(iter(sparse.query_embed(text)))
        dense_vector.setflags(write=False)
        embedded = Embedded(dense_vector, SparseVector(sparse_vector.indices.tolist(), sparse_vector.values.tolist()))
        with self._cache_lock:
            self._queries[text] = embedded
            while len(self._queries) > QUERIES_REMEMBERED:
                self._queries.popitem(last=False)
        return embedded
